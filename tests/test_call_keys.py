"""The call's idempotency key: a parameter the model never sees, the same for the same call of
the same run, different for any other call."""

from __future__ import annotations

from typing import Any

from minloop import CallKey, Loop, tool, tool_from_schema
from minloop.execute import call_key
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked


def test_a_tool_asks_for_the_key_with_a_parameter_the_model_never_sees() -> None:
    seen: list[str] = []

    @tool
    def charge(amount: int, key: CallKey) -> str:
        """Charge the card.

        Args:
            amount: Cents.
        """
        seen.append(key)
        return f"charged {amount}"

    assert charge.spec()["function"]["parameters"] == {
        "type": "object",
        "properties": {"amount": {"type": "integer", "description": "Cents."}},
        "required": ["amount"],
        "additionalProperties": False,
    }
    assert charge.key == "key" and charge.repeatable
    two = reply(None, call("charge", {"amount": 5}, id="a"), call("charge", {"amount": 7}, id="b"))
    again = reply(None, call("charge", {"amount": 5}, id="a"))
    result = Loop(ScriptedModel([two, again, "Charged."]), [charge]).run_sync("Charge 5 and 7.")
    tid = result.trace_id
    assert seen == [call_key(tid, 1, "a"), call_key(tid, 1, "b"), call_key(tid, 2, "a")]
    assert len(set(seen)) == 3 and all(k.startswith("mlk_") and len(k) == 36 for k in seen)
    assert masked(result.messages, tid)[2:4] == [
        {"role": "tool", "tool_call_id": "a", "name": "charge", "content": content(result="charged 5")},
        {"role": "tool", "tool_call_id": "b", "name": "charge", "content": content(result="charged 7")},
    ]


def test_the_model_cannot_set_the_key_itself() -> None:
    @tool
    def charge(amount: int, key: CallKey) -> str:
        """Charge the card."""
        return key

    forged = reply(None, call("charge", {"amount": 5, "key": "mine"}, id="a"))
    result = Loop(ScriptedModel([forged, "No."]), [charge]).run_sync("Charge 5.")
    assert result.steps[0].results[0].error == "ERR_TOOL_ARGS_INVALID"


def test_a_schema_tool_names_the_argument_that_receives_the_key() -> None:
    seen: list[Any] = []

    def pay(**arguments: Any) -> str:
        seen.append(arguments)
        return "paid"

    parameters = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}
    paying = tool_from_schema("pay", "Pay.", parameters, pay, key="idempotency_key")
    result = Loop(
        ScriptedModel([reply(None, call("pay", {"amount": 3}, id="p")), "Paid."]), [paying]
    ).run_sync("Pay.")
    assert seen == [{"amount": 3, "idempotency_key": call_key(result.trace_id, 1, "p")}]
    assert paying.spec()["function"]["parameters"] == parameters
