"""Trace events as OpenTelemetry spans, with the GenAI semantic conventions (``gen_ai.*``).

``OTelSink`` is a ``TraceSink`` (``pip install 'minloop[otel]'``; OpenTelemetry is imported
when the sink is made, never by ``import minloop``). Each run becomes a span tree::

    invoke_agent minloop          gen_ai.operation.name=invoke_agent, gen_ai.agent.name
      step 1                      minloop.step, minloop.decision, minloop.valid
        chat <model>              gen_ai.operation.name=chat, gen_ai.request.model,
                                  gen_ai.usage.input_tokens / output_tokens, gen_ai.response.finish_reasons
        execute_tool <name>       gen_ai.operation.name=execute_tool, gen_ai.tool.name,
                                  gen_ai.tool.call.id, gen_ai.tool.type; error.type=<ERR_TOOL_...> on failure
      step 2 ...

Every span carries ``minloop.trace_id``. Span times are the events' times. Message contents,
tool arguments and results are recorded only with ``capture_content=True`` (as
``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments`` and
``gen_ai.tool.call.result``), already redacted like every sink's data.
"""

from __future__ import annotations

import importlib
import json
import threading
from typing import Any

from ..exceptions import MissingDependencyError
from ..layers.tracing import Event

__all__ = ["OTelSink"]

INSTALL_HINT = "pip install 'minloop[otel]'"


def _otel_trace() -> Any:
    try:
        return importlib.import_module("opentelemetry.trace")
    except ImportError:
        raise MissingDependencyError("OpenTelemetry (opentelemetry-api)", INSTALL_HINT) from None


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


class OTelSink:
    """Emits one span per run, step, model call and tool call to ``tracer_provider`` (the global
    provider when None). ``provider`` fills ``gen_ai.provider.name`` when you know it."""

    def __init__(
        self, tracer_provider: Any = None, *, capture_content: bool = False, provider: str | None = None
    ) -> None:
        self._api = _otel_trace()
        source = tracer_provider if tracer_provider is not None else self._api.get_tracer_provider()
        self._tracer = source.get_tracer("minloop")
        self.capture_content = capture_content
        self.provider = provider
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], tuple[Any, float]] = {}  # (trace_id, "run"|"step"|...): (span, t0)
        self._models: dict[str, str] = {}

    def emit(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            with self._lock:
                handler(event)

    def _start(self, event: Event, key: str, name: str, parent: str | None, attrs: dict[str, Any]) -> None:
        context = None
        if parent is not None and (event.trace_id, parent) in self._open:
            context = self._api.set_span_in_context(self._open[(event.trace_id, parent)][0])
        attributes = {"minloop.trace_id": event.trace_id, **{k: v for k, v in attrs.items() if v is not None}}
        span = self._tracer.start_span(name, context, attributes=attributes, start_time=_ns(event.time))
        self._open[(event.trace_id, key)] = (span, event.time)

    def _end(
        self,
        event: Event,
        key: str,
        attributes: dict[str, Any],
        error: str | None = None,
        at: float | None = None,
    ) -> None:
        opened = self._open.pop((event.trace_id, key), None)
        if opened is None:
            return
        span = opened[0]
        span.set_attributes({k: v for k, v in attributes.items() if v is not None})
        if error is not None:
            span.set_attribute("error.type", error.split(":", 1)[0])
            span.set_status(self._api.Status(self._api.StatusCode.ERROR, error))
        span.end(end_time=_ns(at if at is not None else event.time))

    def _on_run_start(self, event: Event) -> None:
        model = str(event.data.get("model", ""))
        self._models[event.trace_id] = model
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "minloop",
            "gen_ai.request.model": model,
            "minloop.max_steps": event.data.get("max_steps"),
            "minloop.tools": list(event.data.get("tools", [])),
        }
        self._start(event, "run", "invoke_agent minloop", None, self._with_provider(attributes))

    def _on_step_start(self, event: Event) -> None:
        choice = event.data.get("tool_choice")
        self._start(
            event,
            "step",
            f"step {event.step}",
            "run",
            {
                "minloop.step": event.step,
                "minloop.decayed": bool(event.data.get("decayed")),
                "minloop.tool_choice": choice if isinstance(choice, str) else json.dumps(choice),
            },
        )

    def _on_model_request(self, event: Event) -> None:
        model = self._models.get(event.trace_id, "")
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if self.capture_content:
            attributes["gen_ai.input.messages"] = json.dumps(event.data.get("messages"), ensure_ascii=False)
        self._start(event, "model", f"chat {model}".strip(), "step", self._with_provider(attributes))

    def _on_model_response(self, event: Event) -> None:
        data = event.data
        message, usage = data.get("message") or {}, data.get("usage") or {}
        attributes: dict[str, Any] = {
            "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
            "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
        }
        if message:
            reason = "tool_calls" if message.get("tool_calls") else "stop"
            attributes["gen_ai.response.finish_reasons"] = [reason]
        if self.capture_content and message:
            attributes["gen_ai.output.messages"] = json.dumps([message], ensure_ascii=False)
        self._end(event, "model", attributes, error=data.get("error"))

    def _on_tool_call(self, event: Event) -> None:
        data = event.data
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": data.get("name"),
            "gen_ai.tool.call.id": data.get("id"),
            "gen_ai.tool.type": "function",
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = data.get("arguments")
        self._start(event, f"tool:{data.get('id')}", f"execute_tool {data.get('name')}", "step", attributes)

    def _on_tool_result(self, event: Event) -> None:
        data = event.data
        key = f"tool:{data.get('call_id')}"
        if (event.trace_id, key) not in self._open:
            return
        started = self._open[(event.trace_id, key)][1]
        attributes = {"gen_ai.tool.call.result": data.get("content")} if self.capture_content else {}
        if data.get("rerouted_to"):
            attributes["minloop.rerouted_to"] = data["rerouted_to"]
        ended = started + float(data.get("latency") or 0.0)
        self._end(event, key, attributes, error=data.get("error"), at=ended)

    def _on_step_end(self, event: Event) -> None:
        usage = event.data.get("usage") or {}
        self._end(
            event,
            "step",
            {
                "minloop.decision": event.data.get("decision"),
                "minloop.valid": event.data.get("valid"),
                "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
            },
        )

    def _on_run_end(self, event: Event) -> None:
        data = event.data
        unfinished = [k for (tid, k) in self._open if tid == event.trace_id and k != "run"]
        for key in sorted(unfinished, key=lambda k: k == "step"):  # children first
            self._end(event, key, {}, error=f"unfinished: the run ended with {data.get('status')}")
        usage = data.get("usage") or {}
        status = str(data.get("status"))
        self._end(
            event,
            "run",
            {
                "minloop.status": status,
                "minloop.steps": data.get("steps"),
                "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
            },
            error=None if status == "success" else f"{status}: {data.get('error')}",
        )
        self._models.pop(event.trace_id, None)

    def _with_provider(self, attributes: dict[str, Any]) -> dict[str, Any]:
        return {**attributes, "gen_ai.provider.name": self.provider} if self.provider else attributes
