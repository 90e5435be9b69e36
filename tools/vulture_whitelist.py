"""Names vulture (`make lint`) must not report: read by a framework, a protocol or the wire, never by our code.

Pydantic fields a client reads, Lambda context attributes, methods an agent framework or http.server
calls, arguments a protocol fixes. Regenerate the candidates with `.venv/bin/vulture --make-whitelist`
and add only what a framework really reads; everything else vulture reports is dead code to delete.
"""

# ruff: noqa

_.succeeded  # method, bench/scan_scale.py
participants  # variable, layers/core/mongomem/kinds/episodic.py
occurred_at  # variable, layers/core/mongomem/kinds/episodic.py
expected_output  # variable, layers/core/mongomem/kinds/procedural.py
when_to_use  # variable, layers/core/mongomem/kinds/procedural.py
trigger_conditions  # variable, layers/core/mongomem/kinds/procedural.py
allowed_tools  # variable, layers/core/mongomem/kinds/procedural.py
related_terms  # variable, layers/core/mongomem/kinds/taxonomic.py
_.log_errors  # attribute, layers/core/mongomem/kindschema.py
turns_received  # variable, layers/core/mongomem/models/imports.py
turns_left_for_scan  # variable, layers/core/mongomem/models/imports.py
candidate_id  # variable, layers/core/mongomem/models/memory.py
last_outcome  # variable, layers/core/mongomem/models/memory.py
oldest_pending_at  # variable, layers/core/mongomem/models/pending.py
oldest_pending_age_s  # variable, layers/core/mongomem/models/pending.py
when_to_use  # variable, layers/core/mongomem/models/procedures.py
relevance  # variable, layers/core/mongomem/models/procedures.py
SectionName  # variable, layers/core/mongomem/models/recall.py
handed_off  # variable, layers/core/mongomem/models/sessions.py
turns_expire_at  # variable, layers/core/mongomem/models/sessions.py
offline  # variable, layers/core/mongomem/models/stats.py
lag_seconds  # variable, layers/core/mongomem/models/stats.py
pending_turns  # variable, layers/core/mongomem/models/stats.py
promotion  # variable, layers/core/mongomem/models/stats.py
batch_index  # variable, layers/core/mongomem/models/turns.py
unchanged  # variable, layers/core/mongomem/models/working_memory.py
source_thread_id  # variable, layers/core/mongomem/models/working_memory.py
cached_tokens  # variable, layers/core/mongomem/ports.py
__getattr__  # function, layers/core/mongomem/providers/__init__.py
elapsed_ms  # variable, layers/core/mongomem/providers/http.py
_.redirect_request  # method, layers/core/mongomem/providers/http.py
queue_factory  # variable, layers/core/mongomem/runtime/infra.py (Parts: a keyword of Services(), read with .get)
_.turns_left_for_scan  # attribute, layers/core/mongomem/shortterm/importing.py
_.batch_index  # attribute, layers/core/mongomem/shortterm/record.py
_._last  # attribute, sdk/mongomem/cli/progress.py
_._last  # attribute, sdk/mongomem/cli/progress.py
tb  # variable, sdk/mongomem/cli/progress.py
is_async  # variable, sdk/mongomem/client/_call.py
is_async  # variable, sdk/mongomem/client/_call.py
is_async  # variable, sdk/mongomem/client/_transport.py
is_async  # variable, sdk/mongomem/client/_transport.py
supports_ttl  # variable, sdk/mongomem/integrations/langgraph.py
allow_user_only  # variable, sdk/mongomem/integrations/langgraph.py
_.abatch  # method, sdk/mongomem/integrations/langgraph.py
_.get_response  # method, sdk/mongomem/integrations/openai_agents.py
system_instructions  # variable, sdk/mongomem/integrations/openai_agents.py
_.stream_response  # method, sdk/mongomem/integrations/openai_agents.py
_.get_serialization_name  # method, sdk/mongomem/integrations/pydantic_ai.py
_.get_instructions  # method, sdk/mongomem/integrations/pydantic_ai.py
_.get_toolset  # method, sdk/mongomem/integrations/pydantic_ai.py
_.after_run  # method, sdk/mongomem/integrations/pydantic_ai.py
_.update_config  # method, sdk/mongomem/integrations/strands.py
_.get_config  # method, sdk/mongomem/integrations/strands.py
_.writable  # method, sdk/mongomem/local/console.py
_.send_error  # method, sdk/mongomem/local/http.py
_.close_connection  # attribute, sdk/mongomem/local/http.py
_.close_connection  # attribute, sdk/mongomem/local/http.py
_.close_connection  # attribute, sdk/mongomem/local/http.py
memory_limit_in_mb  # variable, sdk/mongomem/local/lambdas.py
aws_request_id  # variable, sdk/mongomem/local/lambdas.py
function_version  # variable, sdk/mongomem/local/lambdas.py
log_group_name  # variable, sdk/mongomem/local/lambdas.py
log_stream_name  # variable, sdk/mongomem/local/lambdas.py
_.invoked_function_arn  # property, sdk/mongomem/local/lambdas.py
exc_type  # variable, sdk/mongomem/local/mongod.py
tb  # variable, sdk/mongomem/local/mongod.py
_.__signature__  # attribute, sdk/mongomem/mcp_server.py
memory_limit_in_mb  # variable, tests/conftest.py
invoked_function_arn  # variable, tests/conftest.py
aws_request_id  # variable, tests/conftest.py
node_modules  # variable, tests/e2e/test_typescript.py
node_modules  # variable, tests/e2e/test_typescript.py
node_modules  # variable, tests/e2e/test_typescript.py
memory_limit_in_mb  # variable, tests/integration/test_extraction_budget.py
invoked_function_arn  # variable, tests/integration/test_extraction_budget.py
aws_request_id  # variable, tests/integration/test_extraction_budget.py
pytestmark  # variable, tests/integration/test_index_consistency.py
_.succeeded  # method, tests/integration/test_query_plans.py
collect_ignore_glob  # variable, tests/llm_contract/conftest.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
aws_cli_env  # variable, tests/twin/test_deployed_twin.py
pytestmark  # variable, tests/twin/test_search_rules.py
receipt  # variable, tests/unit/test_local_queue_settings.py
verbose  # variable, tools/import_contracts.py
_.aws_request_id  # attribute, tools/twin/bootstrap.py
_.invoked_function_arn  # attribute, tools/twin/bootstrap.py
_.function_version  # attribute, tools/twin/bootstrap.py
_.memory_limit_in_mb  # attribute, tools/twin/bootstrap.py
_.log_group_name  # attribute, tools/twin/bootstrap.py
_.log_stream_name  # attribute, tools/twin/bootstrap.py
_.identity  # attribute, tools/twin/bootstrap.py
_.client_context  # attribute, tools/twin/bootstrap.py
dt  # variable, tools/twin/clock.py
dt  # variable, tools/twin/clock.py
async_max_age  # variable, tools/twin/lambda_rt.py
_.throttles  # attribute, tools/twin/lambda_rt.py
_.throttles  # attribute, tools/twin/lambda_rt.py
_.async_max_age  # attribute, tools/twin/stack.py
_.api_stage  # attribute, tools/twin/stack.py
_.dim  # attribute, bench/studies/embeddings/models.py (each candidate model says its dimension)
_.intra_op_num_threads  # attribute, bench/studies/embeddings/models.py (onnxruntime reads it)
_.__call__  # Protocol methods, layers/core/mongomem/api/app.py (RouteBuilder, FastBuilder: a call signature)
_._tools  # attribute, sdk/mongomem/integrations/strands.py (Strands' Plugin reads the tools it is given)
_.handle_data  # HTMLParser callback, tests/e2e/test_probe12_findings.py (an HTML reader's text)
_.handle_starttag  # HTMLParser callback, tests/e2e/test_probe14_findings.py (script and style hidden)
_.handle_endtag  # HTMLParser callback, tests/e2e/test_probe14_findings.py (script and style hidden)
