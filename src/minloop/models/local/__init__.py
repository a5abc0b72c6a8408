"""The embedded model: a GGUF run in-process by llama.cpp (through ``xllamacpp``).

``LocalModel()`` runs the bundled Qwen2.5-Coder-1.5B-Instruct (Q4_K_M); ``LocalModel(
"qwen2.5-coder-0.5b")`` its smaller, faster sibling; ``LocalModel(path="any.gguf")`` any GGUF with a
chat template. The weights load once per process and are shared by every ``LocalModel`` with
the same file and settings. The prompt is the model's own chat template with the tools; the
reply is constrained to a valid decision (see ``minloop.models.local.decoding``). Calls are
serialised per loaded model, so the KV cache keeps the unchanged prefix of a growing
transcript and a later step evaluates only its new tokens.

What decides *around* the model's steps (the tools shown, grounding, the evidence check, the
answer's language) is not here: it is ``minloop.small``'s layers, which the model brings
(``layers``) and ``minloop.Loop`` installs. While it decodes, the model honours what they ask
(``ModelRequest.decoding``): it stops a call at its first refused value and an answer where
they say, and begins the answer in the language they name; it always stops an answer that
writes again what it just wrote (``minloop.models.runaway``).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...guard import ensure_not_in_tool
from ...layer import Layer
from ...messages import Message
from ..base import ModelRequest, ModelResponse, TextDelta
from ..runaway import Repetition, stopped_reply
from .chinese import answer_in
from .decoding import ANSWER, answer_schema, decision_schema, renderable, response_of, with_instruction
from .gguf import check_gguf
from .loaded import Loaded
from .prefix_cache import PrefixCache
from .render import compact, spaced
from .runtime import apply_template, complete, grammar_of, tokenize
from .stream import streamed_call
from .watch import CallWatch

__all__ = ["LocalModel"]

DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class LocalModel(Loaded):
    """An embedded GGUF model implementing the ``Model`` protocol.

    ``layers`` (default: ``minloop.small.small_model_layers()``) are the controls ``minloop.Loop``
    installs around its steps; ``plain()`` is the model without them. ``parallel`` lets one
    decision hold several calls; a typed answer is decoded under its schema. ``prefix_cache``
    (``.prefix_cache``) makes prompts quicker to evaluate; ``compact_tools`` (``.render``, off by
    default: the model chose the wrong tool more often without the spaces it was trained on)
    makes them shorter.
    """

    structured_output = True

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        path: str | os.PathLike[str] | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 384,
        seed: int = 0,
        constrain: bool = True,
        parallel: bool = True,
        prefix_cache: bool = True,
        compact_tools: bool = False,
        layers: Sequence[Layer] | None = None,
    ) -> None:
        self.path = check_gguf(Path(path)) if path is not None else None
        self._weights: str | None = None  # the resolved weights file (see _key)
        self.model = model
        self.name = self.path.stem if self.path else model
        self.n_ctx = n_ctx
        self.threads = threads or os.cpu_count() or 1
        self.sampling = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self.constrain = constrain
        self.parallel = parallel
        self.prefix_cache = prefix_cache
        self.compact_tools = compact_tools
        if layers is None:
            from ...small import small_model_layers

            layers = small_model_layers()
        self.layers: tuple[Layer, ...] = tuple(layers)

    def plain(self) -> LocalModel:
        """This model without the small-model layers and without the disk prefix cache: a baseline."""
        twin = copy.copy(self)
        twin.layers, twin.prefix_cache, twin.compact_tools = (), False, False
        return twin

    @property
    def context_window(self) -> int:
        return self.n_ctx

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        body = self.body(request)
        if request.decoding is not None and request.decoding.avoid:  # banned: the first token of each
            server, _ = self._server()
            firsts = {
                ids[0]
                for v in request.decoding.avoid
                for t in (v, " " + v, f'"{v}')
                if (ids := tokenize(server, t))
            }
            body["logit_bias"] = [[token, False] for token in sorted(firsts)]
        prefix = f"call_{sum(m.get('role') == 'assistant' for m in request.messages) + 1}"
        refuse = request.decoding.refuse if request.decoding is not None else None
        watch = CallWatch(request.tools, refuse) if refuse is not None and request.tools else None
        response, _ = await self._generate(request, body, prefix, self.prefixes(), watch)
        if watch is not None and watch.refused is not None:  # stopped at its first refused value
            arguments = json.dumps(watch.arguments, ensure_ascii=False)
            call = {
                "id": f"{prefix}_1",
                "type": "function",
                "function": {"name": watch.refused, "arguments": arguments},
            }
            return replace(response, message={"role": "assistant", "content": None, "tool_calls": [call]})
        return response

    async def _generate(
        self,
        request: ModelRequest,
        body: dict[str, Any],
        prefix: str,
        cache: PrefixCache | None = None,
        call: CallWatch | None = None,
    ) -> tuple[ModelResponse, bool]:
        """One completion for ``request``, and whether it ran to the token limit. An answer is
        stopped where ``request.decoding.stop`` says, and where it writes again what it just wrote
        (a loop, ``..runaway``), which is dropped; an answer stopped there, or at ``max_tokens``,
        says so (``stopped``)."""
        reply, stopped, loop = await self._complete(request, self.wire(body), cache, call)
        cut = bool(stopped and stopped.tripped)
        response = response_of(reply, prefix, constrained="json_schema" in body, cut=cut)
        at_limit = reply["choices"][0].get("finish_reason") == "length"
        return stopped_reply(response, None if cut else loop.kept, at_limit), at_limit

    async def _complete(
        self,
        request: ModelRequest,
        wired: dict[str, Any],
        cache: PrefixCache | None,
        call: CallWatch | None,
    ) -> tuple[dict[str, Any], _Stop | None, Repetition]:
        """The runtime's reply to ``wired``, read as it grows by ``call`` (the raw pieces) and by
        the answer's watches, which are returned with it."""
        server, lock = self._server()
        stop = request.decoding.stop if request.decoding is not None else None
        stopped, loop = (_Stop(stop) if stop is not None else None), Repetition()
        watches: list[Callable[[str], bool]] = [loop] if stopped is None else [stopped, loop]
        reply = await asyncio.to_thread(complete, server, lock, wired, cache, watches=watches, raw=call)
        return reply, stopped, loop

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
        """Exact prompt tokens of a request, through the model's own template and tokenizer."""
        server, _ = self._server()
        body = self.wire(self.body(ModelRequest(list(messages), list(tools))))
        return len(tokenize(server, apply_template(server, body["messages"], body.get("tools"))))

    def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """``call``, with the answer's text yielded as it is generated (see ``.stream``)."""
        return streamed_call(self.call, request)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The runtime's chat-completion request for a ``ModelRequest``."""
        body: dict[str, Any] = {
            "messages": renderable(request.messages),
            **self.sampling,
            "cache_prompt": True,
        }
        answer = answer_schema(request.output_schema)
        language = request.decoding.language if request.decoding is not None else None
        if language in ("en", "zh"):
            said = [m.get("content") for m in request.messages if m.get("role") == "user"]
            text = said[-1] if said and isinstance(said[-1], str) else ""
            answer = answer_in(answer, language, text, bool(request.tools))  # type: ignore[arg-type]
        if request.tools:
            body["tools"] = list(request.tools)
            if self.constrain:
                body["messages"] = with_instruction(body["messages"], self.parallel)
                body["json_schema"] = decision_schema(
                    request.tools, request.tool_choice, parallel=self.parallel, answer=answer
                )
        elif self.constrain and (request.output_schema is not None or answer is not ANSWER):
            body["json_schema"] = answer
        return body

    def wire(self, body: dict[str, Any]) -> dict[str, Any]:
        """The runtime request for ``body``: its schema as a grammar without line breaks
        (``runtime.grammar_of``), which the runtime takes only without ``tools``, so the tools are
        written into the system message as the template writes them (without the spaces in their
        JSON with ``compact_tools``); as it is for a template whose layout is not known."""
        grammar = grammar_of(body["json_schema"]) if "json_schema" in body else None
        layout = self._layout() if body.get("tools") and (grammar or self.compact_tools) else None
        write = compact if self.compact_tools else spaced
        inlined = layout.inline(body["messages"], body["tools"], write) if layout else None
        if inlined is not None:
            body = {**{k: v for k, v in body.items() if k != "tools"}, "messages": inlined}
        if grammar is not None and "tools" not in body:
            body = {**{k: v for k, v in body.items() if k != "json_schema"}, "grammar": grammar}
        return body


class _Stop:
    """``stop`` given an answer's whole text as it grows; ``tripped`` once it said stop."""

    def __init__(self, stop: Callable[[str], bool]) -> None:
        self.stop, self.text, self.tripped = stop, "", False

    def __call__(self, piece: str) -> bool:
        self.text += piece
        self.tripped = self.tripped or bool(self.stop(self.text))
        return self.tripped
