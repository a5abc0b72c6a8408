"""OpenTelemetry spans with the GenAI semantic conventions, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # the otel extra, installed by the dev extra
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from minloop import Loop, MissingDependencyError, ModelError, tool
from minloop.models.base import ModelResponse, Usage
from minloop.testing import FunctionModel, call, reply
from minloop.trace.otel import OTelSink


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def exporter() -> tuple[InMemorySpanExporter, TracerProvider]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    return spans, provider


def scripted(turns: list[Any]) -> FunctionModel:
    """A model that reports token usage, which ScriptedModel does not."""
    it = iter(turns)
    return FunctionModel(lambda request: ModelResponse(next(it), Usage(12, 3)), name="gpt-x")


def tree(spans: tuple[ReadableSpan, ...]) -> list[tuple[str, str | None]]:
    """(span name, parent span name) in the order the spans ended."""
    names = {s.context.span_id: s.name for s in spans}
    return [(s.name, names.get(s.parent.span_id) if s.parent else None) for s in spans]


def add_and_unknown() -> tuple[Any, str]:
    """The finished spans and the trace id of a run that calls add and an unknown tool, then answers."""
    spans, provider = exporter()
    model = scripted(
        [
            reply(None, call("add", {"a": 2, "b": 3}, id="c1"), call("nope", {}, id="c2")),
            {"role": "assistant", "content": "5"},
        ]
    )
    result = Loop(model, [add], sinks=[OTelSink(provider, provider="openai")]).run_sync("2 + 3?")
    return spans.get_finished_spans(), result.trace_id


def test_spans_follow_run_step_model_tool() -> None:
    finished, _ = add_and_unknown()
    assert tree(finished) == [
        ("chat gpt-x", "step 1"),
        ("execute_tool add", "step 1"),
        ("execute_tool nope", "step 1"),
        ("step 1", "invoke_agent minloop"),
        ("chat gpt-x", "step 2"),
        ("step 2", "invoke_agent minloop"),
        ("invoke_agent minloop", None),
    ]
    assert all(s.end_time >= s.start_time for s in finished)
    assert all(s.context.trace_id == finished[-1].context.trace_id for s in finished)


def test_spans_carry_gen_ai_attributes() -> None:
    finished, tid = add_and_unknown()
    by_name = {s.name: s for s in finished}
    assert dict(by_name["invoke_agent minloop"].attributes or {}) == {
        "minloop.trace_id": tid,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "minloop",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.provider.name": "openai",
        "minloop.max_steps": 10,
        "minloop.tools": ("add",),
        "minloop.status": "success",
        "minloop.steps": 2,
        "gen_ai.usage.input_tokens": 24,
        "gen_ai.usage.output_tokens": 6,
    }
    assert dict(by_name["chat gpt-x"].attributes or {}) == {
        "minloop.trace_id": tid,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.provider.name": "openai",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    assert dict(by_name["execute_tool add"].attributes or {}) == {
        "minloop.trace_id": tid,
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
    }
    unknown = by_name["execute_tool nope"]
    assert (unknown.status.status_code, dict(unknown.attributes or {})["error.type"]) == (
        StatusCode.ERROR,
        "ERR_TOOL_UNKNOWN",
    )
    assert dict(by_name["step 2"].attributes or {}) == {
        "minloop.trace_id": tid,
        "minloop.step": 2,
        "minloop.decayed": False,
        "minloop.tool_choice": "auto",
        "minloop.decision": "answer",
        "minloop.valid": True,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
    }


def test_content_is_recorded_only_when_asked() -> None:
    spans, provider = exporter()
    model = scripted(
        [reply(None, call("add", {"a": 2, "b": 3}, id="c1")), {"role": "assistant", "content": "5"}]
    )
    result = Loop(model, [add], sinks=[OTelSink(provider, capture_content=True)]).run_sync("2 + 3?")
    tool_span = next(s for s in spans.get_finished_spans() if s.name == "execute_tool add")
    attributes = dict(tool_span.attributes or {})
    assert (attributes["gen_ai.tool.call.arguments"], attributes["gen_ai.tool.call.result"]) == (
        '{"a": 2, "b": 3}',
        f'{{"result": 5, "trace_id": "{result.trace_id}"}}',
    )
    first_chat = next(s for s in spans.get_finished_spans() if s.name == "chat gpt-x")
    assert (
        dict(first_chat.attributes or {})["gen_ai.input.messages"]
        == '[{"role": "user", "content": "2 + 3?"}]'
    )


def test_a_failed_model_call_marks_its_spans_as_errors() -> None:
    def broken(request: object) -> str:
        raise ModelError("endpoint down")

    spans, provider = exporter()
    Loop(FunctionModel(broken, name="gpt-x"), sinks=[OTelSink(provider)]).run_sync("hi")
    status = {
        s.name: (s.status.status_code, dict(s.attributes or {}).get("error.type"))
        for s in spans.get_finished_spans()
    }
    assert status == {
        "chat gpt-x": (StatusCode.ERROR, "ModelError"),
        "step 1": (StatusCode.ERROR, "unfinished"),
        "invoke_agent minloop": (StatusCode.ERROR, "model_error"),
    }


def test_without_opentelemetry_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)  # makes the import fail
    with pytest.raises(
        MissingDependencyError, match=r"OpenTelemetry .* Install it with: pip install 'minloop\[otel\]'"
    ):
        OTelSink()


def test_import_minloop_does_not_import_opentelemetry_or_sqlite() -> None:
    import subprocess

    code = "import sys, minloop, minloop.trace; print(sorted({'opentelemetry', 'sqlite3', 'rich'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
