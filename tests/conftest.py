from __future__ import annotations

import json
from typing import Any

TID = "<trace_id>"


def masked(messages: list[dict[str, Any]], trace_id: str) -> list[dict[str, Any]]:
    """The transcript with the run's trace id replaced by a placeholder, for whole-list asserts."""
    return json.loads(json.dumps(messages).replace(trace_id, TID))


def content(**fields: Any) -> str:
    """The JSON content minloop writes for a tool result (keys in insertion order)."""
    return json.dumps({**fields, "trace_id": TID}, ensure_ascii=False)
