"""A tool call the server wrote but could not parse.

A server that parses the model's calls itself may fail on one and answer with an error that
holds the model's text. Ollama answers HTTP 500, on its OpenAI-compatible endpoint::

    {"error": {"message": "error parsing tool call: raw='{\"name\": \"get_weather\", ...', err=invalid
    character ...", "type": "api_error", "param": null, "code": null}}

(``{"error": "error parsing tool call: raw='...', err=..."}`` on its own API, and the same
error as a chunk in a stream). ``OpenAIModel`` reads the model's text out of it (``raw``) and,
when it is a call to a registered tool in a shape ``minloop.textcalls`` reads, returns that call
as the reply; otherwise it asks once more (the model may write it right the second time), and
then fails with ``ModelHTTPError`` saying what the server could not parse.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..textcalls import recovered

__all__ = ["PARSE_FAILURE", "error_message", "recovered", "unparsed_text"]

PARSE_FAILURE = "error parsing tool call"
_RAW = re.compile(r"raw='(.*)'(?:, err=|$)", re.DOTALL)


def error_message(body: Any) -> str:
    """The message of an error body (a JSON text, a parsed chunk, or the error object an SDK
    kept): ``error.message``, or ``error`` when it is a string, or the text itself."""
    data = body
    if isinstance(body, str | bytes):
        try:
            data = json.loads(body)
        except ValueError:
            return body.decode(errors="replace") if isinstance(body, bytes) else body
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return error if isinstance(error, str) else str(body)


def unparsed_text(body: Any) -> str | None:
    """The model's text in an error saying the server could not parse a tool call (``""`` when
    the error does not quote it), or ``None`` for any other error."""
    message = error_message(body)
    if PARSE_FAILURE not in message.lower():
        return None
    quoted = _RAW.search(message)
    return quoted.group(1) if quoted else ""
