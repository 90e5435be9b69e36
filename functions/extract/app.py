"""SQS (one queue per memory type) -> extract long-term memories from snapshots.

The same code backs one function resource per memory type; MONGOMEM_EXTRACTION_TYPE says which.
"""

import functools

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.extraction.handler import process_record
from mongomem.observability import logger, metrics
from mongomem.runtime import Services, lambda_runtime
from mongomem.tracing import tracer

root = lambda_runtime()
# A batch whose every record failed (e.g. no time left for any) is still a partial response: the records
# go back to the queue one by one and the invocation does not count as a function error.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
@root.handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    handler = functools.partial(process_record, svc=svc)  # each record extracted with the root's services
    return process_partial_response(event=event, record_handler=handler, processor=processor, context=context)
