"""What a text costs in an API response as Lambda counts it (its 6 MB synchronous response limit).

An API function returns `{"statusCode", "headers", "body"}`; the body is the JSON document the caller
reads, and the Lambda runtime serialises that whole dict to JSON once more. A text is therefore escaped
twice: a quote is 1 byte of content, 2 in the body and 4 in the response; a newline 1, 2, 3. The API
serialises bodies without escaping non-ASCII characters, and so does the python3.12+ runtime, so a CJK
character stays 3 bytes (escaped, it would be `\\u4e2d` in the body and `\\\\u4e2d` in the response: 7).
"""

from __future__ import annotations

import json


def response_bytes(text: str) -> int:
    """Bytes `text` adds to a Lambda API response (see the module docstring)."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    response = json.dumps(body, ensure_ascii=False)[1:-1]
    return len(response.encode("utf-8", "surrogatepass"))
