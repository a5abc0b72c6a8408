"""Typed final output: ``Loop(..., output=SomeModel)``.

The final answer must be JSON that validates against ``output``: a Pydantic model, any type
Pydantic can validate (a dataclass, ``TypedDict``, ``list[int]``, ...), or a JSON schema given as
a ``dict`` (validated with ``jsonschema``). The model is told the shape in the most reliable
way it supports:

* an endpoint with structured output receives the schema as ``response_format``
  (``ModelRequest.output_schema``; see ``minloop.models.openai``);
* the embedded model decodes its answer under the schema;
* any other model reads the schema in the prompt (``instruction``), sent with every call.

The schema sent is always an object: a type whose schema is not an object (``int``,
``list[str]``) is wrapped as ``{"result": ...}`` and unwrapped after validation. Checking is an
answer check like any other (``minloop.decision``): a reply that does not validate stays in the
transcript as ``unfinished``, counts as an invalid step, and the validation errors go back to
the model with the next call. ``TypedOutput`` is the layer that does all of this for a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import TypeAdapter, ValidationError, create_model

from ..decision import combine_checks
from ..exceptions import MinloopError, MissingDependencyError
from ..layer import CallModel, Layer
from ..messages import Message
from ..models.base import ModelRequest
from ..result import RunResult, Step
from ..state import Continue, Final, Outcome, Prompt, Reply, RunState, Stop

__all__ = ["OutputError", "OutputSpec", "TypedOutput", "response_format"]

INSTRUCTION = (
    "When you give the final answer, reply with only one JSON object, no other text, that matches "
    "this JSON schema:\n{schema}"
)
INVALID = (
    "Your answer is not valid output: {problems}. Reply with only one JSON object that matches "
    "the required schema."
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)


class OutputError(ValueError):
    """The answer's text is not valid output; ``problems`` lists what is wrong, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class OutputSpec:
    """What a typed answer must look like, built from ``Loop(output=...)``.

    ``schema`` is the JSON schema sent to the model (an object); ``parse(text)`` returns the
    validated value or raises ``OutputError``; ``check`` is the answer check the loop composes
    with any others.
    """

    target: Any
    name: str
    schema: dict[str, Any]
    wrapped: bool = False
    adapter: TypeAdapter[Any] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, output: Any) -> OutputSpec:
        if isinstance(output, dict):
            _check_json_schema(output)
            return cls(output, str(output.get("title") or "final_answer"), output)
        try:
            schema = TypeAdapter(output).json_schema()
        except Exception as exc:  # pydantic raises several kinds for a type it cannot handle
            raise MinloopError(f"output={output!r} is not a type Pydantic can validate: {exc}") from None
        name = getattr(output, "__name__", None) or "final_answer"
        if schema.get("type") == "object":
            return cls(output, name, schema, adapter=TypeAdapter(output))
        wrapper = create_model("Output", result=(output, ...))
        return cls(output, name, wrapper.model_json_schema(), wrapped=True, adapter=TypeAdapter(wrapper))

    @property
    def instruction(self) -> str:
        """What a model without structured output reads about the required shape."""
        return INSTRUCTION.format(schema=json.dumps(self.schema, ensure_ascii=False))

    def parse(self, text: str) -> Any:
        """The validated value of an answer's text (a fenced block is accepted too: a bare fence,
        or ```json with the tag in any case, ```JSON or ```Json)."""
        match = _FENCE.match(text)
        raw = match.group(1) if match else text.strip()
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise OutputError([f"the answer is not JSON ({exc})"]) from None
        if self.adapter is None:
            return _validate_with_jsonschema(self.schema, data)
        try:
            value = self.adapter.validate_python(data)
        except ValidationError as exc:
            raise OutputError([_problem(e) for e in exc.errors(include_url=False)]) from None
        return value.result if self.wrapped else value

    def check(self, text: str, messages: Sequence[Message] = ()) -> str | None:
        """The answer check: ``None`` if ``text`` is valid output, else what to fix."""
        try:
            self.parse(text)
        except OutputError as exc:
            return INVALID.format(problems="; ".join(exc.problems))
        return None


class TypedOutput(Layer):
    """Holds a run's final answer to ``spec``: the model is told the shape (as the request's
    output schema when it is ``structured``, else in the control message), an answer that does
    not validate goes back to it, and the result carries the validated ``output_value``."""

    def __init__(self, spec: OutputSpec, structured: bool = False) -> None:
        self.spec = spec
        self.structured = structured

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        check = combine_checks(self.spec.check, prompt.answer_check)
        notes = prompt.notes if self.structured else (*prompt.notes, self.spec.instruction)
        return replace(prompt, notes=notes, answer_check=check)

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        if not self.structured:
            return await call(request)
        return await call(replace(request, output_schema=self.spec.schema))

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        if isinstance(outcome, Final):  # a check's replacement is not checked as output
            text = outcome.message["content"]
            if self.spec.check(text) is not None:
                return Stop("output_invalid", f"the answer check ended the run with no valid output: {text}")
        elif (
            isinstance(outcome, Continue)
            and step.decision == "unfinished"
            and run.prompt
            and run.prompt.decayed
        ):
            note = self.spec.check(step.message["content"])
            if note is not None:
                return Stop("output_invalid", f"the answer did not validate, even with tools off: {note}")
        return outcome

    def end(self, run: RunState, result: RunResult) -> RunResult:
        text = (result.final_message or {}).get("content")
        if not isinstance(text, str) or not (result.status == "success" or result.forced_by):
            return result
        try:
            return replace(result, output_value=self.spec.parse(text))
        except OutputError:  # a forced answer that does not validate: the text is still the final message
            return result


def _problem(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "the answer"
    return f"{where}: {error.get('msg', 'invalid')}"


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise MissingDependencyError(
            "jsonschema (for an output given as a JSON schema)", "pip install 'minloop[cli]'"
        ) from None
    return jsonschema


def _check_json_schema(schema: dict[str, Any]) -> None:
    if schema.get("type") != "object":
        raise MinloopError('an output JSON schema must describe an object ("type": "object")')
    js = _jsonschema()
    try:
        js.validators.validator_for(schema).check_schema(schema)
    except js.SchemaError as exc:
        raise MinloopError(f"the output JSON schema is not valid: {exc.message}") from None
    _check_references(schema, js.validators.validator_for(schema))


def _check_references(schema: dict[str, Any], validator: Any) -> None:
    """Every ``$ref`` must resolve inside the schema (nothing is fetched from the network)."""
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    spec = specification_with(validator.META_SCHEMA.get("$schema", ""))
    base = str(schema.get("$id", ""))
    resolver = Registry().with_resource(base, spec.create_resource(schema)).resolver(base)
    for ref in sorted(set(_refs(schema))):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise MinloopError(
                f"the output JSON schema is not valid: $ref {ref!r} points to nothing in the schema"
            ) from None


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for k, v in node.items() if k not in ("const", "enum", "default") for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _validate_with_jsonschema(schema: dict[str, Any], data: Any) -> Any:
    js = _jsonschema()
    validator = js.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        raise OutputError(
            [f"{'.'.join(map(str, e.absolute_path)) or 'the answer'}: {e.message}" for e in errors]
        )
    return data


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions ``response_format`` for an answer under ``schema``. ``strict`` is on
    only when the schema meets strict mode's rules (every object closed, every property
    required); otherwise the endpoint follows it on a best-effort basis and the loop validates."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "final_answer"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": _strict(schema)}}


def _strict(node: Any) -> bool:
    if isinstance(node, list):
        return all(_strict(n) for n in node)
    if not isinstance(node, dict):
        return True
    if node.get("type") == "object" or "properties" in node:
        closed = node.get("additionalProperties") is False
        if not closed or set(node.get("required", ())) != set(node.get("properties", {})):
            return False
    return all(_strict(v) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
