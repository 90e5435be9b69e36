"""Run the AWS SAM transform (samtranslator, the library CloudFormation's transform is built from) locally.

Executed with the SAM CLI's own interpreter (.venv-sam), which ships samtranslator:
    python translate.py < built-template.json > cloudformation.json
Code locations (CodeUri/ContentUri) are replaced by s3://twin/<path> first, as `sam package` would.
"""

import json
import sys

from samtranslator.public.translator import ManagedPolicyLoader  # noqa: F401  (import check)
from samtranslator.translator.transform import transform

PACKAGED_PREFIX = "https://twin.s3.amazonaws.com/"  # tools/twin/stack.py reads nested templates back


class _Policies:
    """AWS managed policy names -> ARNs, without calling IAM (the translator asks for the ones it uses)."""

    def load(self):
        names = [
            "AWSLambdaBasicExecutionRole",
            "AWSXRayDaemonWriteAccess",
            "AWSLambdaVPCAccessExecutionRole",
            "AWSLambdaSQSQueueExecutionRole",
        ]
        return {n: f"arn:aws:iam::aws:policy/service-role/{n}" for n in names}


def main() -> None:
    template = json.load(sys.stdin)
    for resource in template.get("Resources", {}).values():
        props = resource.get("Properties") or {}
        for key in ("CodeUri", "ContentUri"):
            if isinstance(props.get(key), str) and not props[key].startswith("s3://"):
                props[key] = f"s3://twin/{props[key]}"
        # a nested application's local template: sam package uploads it and writes its S3 URL
        location = props.get("Location")
        local = isinstance(location, str) and not location.startswith("https://")
        if resource.get("Type") == "AWS::Serverless::Application" and local:
            props["Location"] = PACKAGED_PREFIX + location
    params = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    out = transform(template, params, _Policies())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
