"""The embedded model: a GGUF run in-process by llama.cpp (through ``xllamacpp``).

``LocalModel()`` runs the bundled Qwen2.5-Coder-1.5B-Instruct (Q4_K_M); ``LocalModel(
"qwen2.5-coder-0.5b")`` its smaller, faster sibling; ``LocalModel(path="any.gguf")`` any GGUF with a
chat template. The weights load once per process and are shared by every ``LocalModel`` with
the same file and settings. The prompt is the model's own chat template with the tools; the
reply is constrained to a valid decision (see ``minloop.models.local.decoding``). Calls are
serialised per loaded model, so the KV cache keeps the unchanged prefix of a growing
transcript and a later step evaluates only its new tokens.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...exceptions import ModelError
from ...guard import ensure_not_in_tool
from ...language import user_language
from ...messages import Message
from ..base import ModelRequest, ModelResponse, TextDelta
from ..runaway import stopped_reply
from . import chinese, copied, decoding, insist, policy
from .decoding import ANSWER, answer_schema, decision_schema, renderable, response_of, with_instruction
from .evidence import HONESTY, AnswerWatch, EvidenceCheck, asks_more, is_note
from .gguf import check_gguf
from .grammar import COMPACT_AFTER, Unguided
from .loaded import Loaded
from .prefix_cache import PrefixCache
from .runtime import apply_template, complete, relevance_of, tokenize
from .select import SELECT_ABOVE, SELECT_TOKENS, narrowed, narrowing
from .stream import Repetition, streamed_call
from .translate import Translations
from .watch import CallWatch

__all__ = ["LocalModel"]

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
ABSTAIN_TOKENS = 64  # the short answer after a call on invented values or an unsupported answer (~2 s)


class LocalModel(Loaded):
    """An embedded GGUF model implementing the ``Model`` protocol.

    ``grounded`` (default on) is its decision policy for tool calls (``.grounding``): optional
    arguments whose values the conversation does not give are dropped (see ``_fills``), and a call
    whose *required* values are not in the conversation is not made (nor one cut off by the token
    limit; ``watch`` stops it at the first such value): the model is asked once more, tools off,
    for a short answer (``ABSTAIN_TOKENS``). Measured with ``minloop eval bfcl``, this is what makes
    a 0.5B model abstain when no offered tool serves the request. ``gate`` (off) is the older
    relevance gate (``relevance``). ``parallel`` lets one decision hold several calls. A typed
    answer (``ModelRequest.output_schema``) is decoded under its schema.

    ``select_above`` (default ``SELECT_ABOVE``; ``None``: never) and ``select_tokens`` (default
    ``SELECT_TOKENS``; ``None``: count tools only): a menu of more tools, or whose definitions
    take more tokens, is narrowed before each decision to the few tools whose names, descriptions
    and parameters share words with the user's messages (``minloop.models.local.select``), plus
    the tools already called; when nothing matches, the model answers without tools.
    ``prefix_cache`` (on): the system prompt and tool definitions are evaluated once and kept on
    disk under the cache directory, so a new process with the same tools skips them
    (``minloop.models.local.prefix_cache``). ``compact_tools`` (on): the tool definitions are
    written as the model's template writes them but without the spaces in their JSON, 19% fewer
    tokens (``minloop.models.local.render``). ``compact_json`` (``COMPACT_AFTER``; ``None``:
    never): a call from a selection is written as compact JSON (``minloop.models.local.grammar``),
    with llguidance once that many decisions were made.

    ``faithful`` (default on) holds answers to the evidence: ``answer_check`` is
    ``minloop.models.local.evidence.EvidenceCheck`` (an answer that uses no tool result is
    declined at once, since the second try has tools off), which a ``Loop`` uses unless
    ``Controls(answer_check=...)`` names another, and grounding maps argument values onto their
    parameter's vocabulary (the time zone of "东京"). ``honest`` (off) adds a sentence to the format
    instruction: state only facts the user or a tool gave (it made the 0.5B skip its tools).

    ``guide`` (on) steers decisions with a user's own tools (``minloop.models.local.policy``): a
    Chinese request is translated once, so a large English menu is ranked by its English words
    and a call's English values ("MSFT" for "微软") are grounded; a menu no word matches is shown
    whole when it fits; a Chinese request is answered in Chinese; after one result, the call the
    request still needs is made (the other of two named things, a currency, the calculator); a
    call that copies its tool's own example takes the request's one value of the same shape
    ("LH401" for "BA117"), else is asked for once more.
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
        grounded: bool = True,
        parallel: bool = True,
        gate: float | None = None,
        select_above: int | None = SELECT_ABOVE,
        select_tokens: int | None = SELECT_TOKENS,
        prefix_cache: bool = True,
        compact_tools: bool = True,
        compact_json: int | None = COMPACT_AFTER,
        faithful: bool = True,
        honest: bool = False,
        guide: bool = True,
    ) -> None:
        self.path = check_gguf(Path(path)) if path is not None else None
        self._weights: str | None = None  # the resolved weights file (see _key)
        self.model = model
        self.name = self.path.stem if self.path else model
        self.n_ctx = n_ctx
        self.threads = threads or os.cpu_count() or 1
        self.sampling = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self.constrain = constrain
        self.grounded = grounded
        self.parallel = parallel
        self.gate = gate
        self.select_above = select_above
        self.select_tokens = select_tokens
        self.prefix_cache = prefix_cache
        self.compact_tools = compact_tools
        self.compact_json = compact_json
        self.faithful = faithful
        self.honest = honest
        self.guide = guide
        # its second try has tools off, so an answer that used no tool result is declined at once
        self._menus: dict[str, list[dict[str, Any]]] = {}  # the tools offered, by the first user message
        self._english = Translations(self._server)  # texts translated, by the model, once each
        translated = lambda text: self._english.now(text) or None  # the check reads answers too
        check = EvidenceCheck(resend_unused=False, menu=self._menu_of, english=translated)
        self.answer_check: EvidenceCheck | None = check if faithful else None

    def plain(self) -> LocalModel:
        """This model without minloop's decision policy (no grounding, gate, evidence check or tool
        selection) and without the disk prefix cache the policy's runs fill: a baseline."""
        twin = copy.copy(self)
        twin.grounded, twin.gate, twin.select_above, twin.prefix_cache = False, None, None, False
        twin.compact_tools, twin.compact_json = False, None
        twin.faithful, twin.honest, twin.answer_check, twin.guide = False, False, None, False
        return twin

    @property
    def context_window(self) -> int:
        return self.n_ctx

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
        """Exact prompt tokens of a request, through the model's own template and tokenizer."""
        server, _ = self._server()
        body = self.wire(self.body(ModelRequest(list(messages), list(tools))))
        return len(tokenize(server, apply_template(server, body["messages"], body.get("tools"))))

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        self._menus = {} if len(self._menus) >= 256 else self._menus
        self._menus[policy.opening(request.messages)] = list(request.tools)
        language, text = user_language(request.messages), policy.since_user(request.messages)[0]
        follow = policy.follow_up(request.messages, request.tools, language, self._english.get(text))
        if self.guide and follow is not None and follow.translate:  # "比特币" unknown: "Bitcoin"
            follow = policy.in_english(follow, await self._english_of(follow.untranslated))
        if self.guide and request.tool_choice == "auto" and follow is not None:
            if follow.arguments is not None:  # the call as it is: the other of two named things
                return ModelResponse(message=policy.called(follow, request.messages))
            forced = replace(
                request,
                messages=[*request.messages, {"role": "system", "content": follow.note}],
                tool_choice={"type": "function", "function": {"name": follow.tool}},
            )
            response = await self._call(forced, followed=True, grounds_in=request.messages)
            if not policy.repeats(response.message, request.messages):
                return response
        note = policy.results_note(request.messages, user_language(request.messages)) if self.guide else None
        if note is not None and not is_note(request.messages[-1]):  # two results: the answer now
            messages = [*request.messages, {"role": "system", "content": note}]
            request = replace(request, messages=messages, tool_choice="none")
        response, check = await self._call(request), self.answer_check if self.guide else None
        response = (
            policy.split(response, request.messages, self._english.get(text)) if self.guide else response
        )
        return await insist.insisted(request, response, self._call, check, self._english.get(text))

    async def _call(
        self, request: ModelRequest, followed: bool = False, grounds_in: Sequence[Message] | None = None
    ) -> ModelResponse:
        """One decision for ``request``; ``followed``: its forced call is the policy's, grounded too,
        in ``grounds_in`` (the conversation without the policy's note)."""
        server, lock = self._server()
        if self.guide and self.grounded and chinese.first_chinese(request):
            request = chinese.with_english(request, await self._english_of(request.messages[-1]["content"]))
        shown = await self._narrow(request)
        compact, request = len(shown.tools) < len(request.tools), shown  # see grammar
        if self._gated(request):
            relevant = await asyncio.to_thread(relevance_of, server, lock, self.body(request))
            request = replace(request, tool_choice="auto" if relevant >= (self.gate or 0.0) else "none")
        # The evidence check sent the answer back: answer again from what is there, tools off, briefly
        # (at the usual length when the note asks for more: a result left out, a comparison set right).
        retry_answer = self.faithful and bool(request.messages) and is_note(request.messages[-1])
        request = replace(request, tool_choice="none") if retry_answer else request
        body = copied.banning(self.body(request), request.messages, lambda text: tokenize(server, text))
        if retry_answer and not asks_more(request.messages[-1]):
            body["max_tokens"] = min(self.sampling["max_tokens"], ABSTAIN_TOKENS)
        prefix = f"call_{sum(m.get('role') == 'assistant' for m in request.messages) + 1}"
        grounds = self.grounded and (request.tool_choice == "auto" or followed) and bool(request.tools)
        evidence = self._evidence(request.messages if grounds_in is None else grounds_in)
        watch = CallWatch(request.tools, evidence, resolve=self.faithful) if grounds else None
        response, at_limit = await self._generate(request, body, prefix, self.prefixes(), watch, compact)
        if watch is not None and watch.missing:  # stopped at its first invented required value
            message, missing = response.message, watch.missing
        elif not (grounds and response.message.get("tool_calls")):
            return response
        else:
            stated, resolve = self._fills(request), self.faithful
            message, missing = copied.grounded_calls(
                response.message, request.tools, evidence, resolve=resolve, stated=stated
            )
        if at_limit:  # cut off mid-value: a runaway invention
            missing = {call["function"]["name"]: ["arguments"] for call in message.get("tool_calls") or []}
        if not missing:
            return replace(response, message=message)
        read = watch.arguments if watch is not None and watch.missing else None
        if self.guide and (
            again := copied.asked_again(request, message, missing, read) or insist.others(request, missing)
        ):
            if isinstance(again, dict):  # the request's own value of the example's shape
                return replace(response, message=again)
            return await self._call(again, True, request.messages)  # the tool's own example: once more
        # A call resting on invented values is not made: the model answers, told what is missing.
        note = {
            "role": "system",
            "content": decoding.ungrounded_note(missing, user_language(request.messages)),
        }
        retry = replace(request, messages=[*request.messages, note], tool_choice="none")
        body = {**self.body(retry), "max_tokens": min(self.sampling["max_tokens"], ABSTAIN_TOKENS)}
        answer, _ = await self._generate(retry, body, prefix)
        return replace(answer, usage=response.usage + answer.usage)

    async def _generate(
        self,
        request: ModelRequest,
        body: dict[str, Any],
        prefix: str,
        cache: PrefixCache | None = None,
        call: CallWatch | None = None,
        compact: bool = False,
    ) -> tuple[ModelResponse, bool]:
        """One completion for ``request``, and whether it ran to the token limit. An answer is
        stopped at its first unsupported sentence when the evidence check would replace it anyway
        (``_watch``), and where it writes again what it just wrote (a loop, ``..runaway``), which
        is dropped; an answer stopped there, or at ``max_tokens``, says so (``stopped``)."""
        wired = self.wire(body, compact)
        try:
            reply, evidence, loop = await self._complete(request, wired, cache, call)
        except ModelError as exc:  # llama.cpp's own engine refuses a grammar it cannot parse
            if "grammar" not in wired or "grammar" not in str(exc):
                raise
            self._compaction().refused(wired["grammar"])
        if wired.get("grammar") in self._compaction().unapplied:
            call.reset() if call is not None else None  # decoded again: the grammar did not apply
            reply, evidence, loop = await self._complete(request, self.wire(body), cache, call)
        cut = bool(evidence and evidence.tripped)
        response = response_of(reply, prefix, constrained="json_schema" in body, cut=cut)
        at_limit = reply["choices"][0].get("finish_reason") == "length"
        full = at_limit and body["max_tokens"] >= self.sampling["max_tokens"]  # not a short answer asked for
        return stopped_reply(response, None if cut else loop.kept, full), at_limit

    async def _complete(
        self,
        request: ModelRequest,
        wired: dict[str, Any],
        cache: PrefixCache | None,
        call: CallWatch | None,
    ) -> tuple[dict[str, Any], AnswerWatch | None, Repetition]:
        """The runtime's reply to ``wired``, read as it grows by ``call`` and an ``Unguided`` guard
        (the raw pieces) and by the answer's watches, which are returned with it."""
        server, lock = self._server()
        guard = Unguided() if "grammar" in wired else None
        evidence, loop = self._watch(request), Repetition()
        watches: list[Callable[[str], bool]] = [loop] if evidence is None else [evidence, loop]
        readers = [r for r in (call, guard) if r is not None]
        raw = (lambda piece: any([r(piece) for r in readers])) if readers else None
        reply = await asyncio.to_thread(complete, server, lock, wired, cache, watches=watches, raw=raw)
        self._compaction().decided(wired, guard)
        return reply, evidence, loop

    def _watch(self, request: ModelRequest) -> AnswerWatch | None:
        """A watch that stops an answer at the end of its first unsupported sentence, when the
        loop's answer check is this model's evidence check: the answer is not accepted, and the
        rest would either never be shown or go back to the model only to be written again."""
        own = self.answer_check is not None and request.answer_check is self.answer_check
        return AnswerWatch(request.messages) if own and request.output_schema is None else None

    def narrowed(self, request: ModelRequest, english: str | None = None) -> ModelRequest:
        """The request with only the tools that can matter, when the menu has more than
        ``select_above`` tools or its definitions more than about ``select_tokens`` tokens
        (see ``select.narrowed``)."""
        return narrowed(request, self.select_above, self.select_tokens, english)

    async def _narrow(self, request: ModelRequest) -> ModelRequest:
        """``narrowed``. A large menu in another script than the request (English tools, a
        Chinese request) cannot be ranked, so it is shown whole; when whole it would not fit the
        window, the user's last message is translated into English by the model (once per text)
        and the tools are ranked by that."""
        narrow, unranked = narrowing(request, self.select_above, self.select_tokens)
        said = [m.get("content") for m in request.messages if m.get("role") == "user"]
        text = said[-1] if said else None
        if self.guide and request.tools and not narrow.tools and request.tool_choice == "auto":
            fits = await asyncio.to_thread(self._fits, request)  # no word matched: the model decides
            return request if fits else narrow
        whole = not self.guide and await asyncio.to_thread(self._fits, request)
        if not unranked or not isinstance(text, str) or whole:
            return narrow  # narrowed, small, or cannot be ranked and fits the window whole
        english = await self._english_of(text)  # "" when the translation was not faithful
        return self.narrowed(request, english) if english else narrow

    def _menu_of(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
        return self._menus.get(policy.opening(messages))

    async def _english_of(self, text: str) -> str:
        """The model's English translation of a user's ``text`` (once per text)."""
        return await asyncio.to_thread(self._english.now, text)

    def _evidence(self, messages: Sequence[Message]) -> list[Message]:
        """What a call's values are grounded in: the conversation, and the English translation
        of the user's last message when one was made."""
        text = policy.since_user(messages)[0]
        english = self._english.get(text) if self.guide else None
        return [*messages, {"role": "user", "content": english}] if english else list(messages)

    def _fits(self, request: ModelRequest) -> bool:
        """Whether the whole request and an answer of the token limit fit the window."""
        return self.count_tokens(request.messages, request.tools) + self.sampling["max_tokens"] <= self.n_ctx

    def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """``call``, with the answer's text yielded as it is generated (see ``.stream``)."""
        return streamed_call(self.call, request)

    def relevance(self, request: ModelRequest) -> float:
        """The model's probability that one of the tools serves the user's last message."""
        server, lock = self._server()
        return relevance_of(server, lock, self.body(request))

    def _gated(self, request: ModelRequest) -> bool:
        """The relevance gate decides a new request's first step: call a tool, or answer."""
        last = request.messages[-1] if request.messages else {}
        return (
            self.gate is not None
            and bool(request.tools)
            and request.tool_choice == "auto"
            and last.get("role") == "user"
        )

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The runtime's chat-completion request for a ``ModelRequest``."""
        body: dict[str, Any] = {
            "messages": renderable(request.messages),
            **self.sampling,
            "cache_prompt": True,
        }
        answer = answer_schema(request.output_schema)
        said, language = policy.since_user(request.messages)[0], user_language(request.messages)
        answer = chinese.answer_in(answer, language, said, bool(request.tools)) if self.guide else answer
        if request.tools:
            body["tools"] = list(request.tools)
            if self.constrain:
                honesty = HONESTY[language] if self.honest else None
                body["messages"] = with_instruction(body["messages"], self.parallel, honesty)
                body["json_schema"] = decision_schema(
                    request.tools,
                    request.tool_choice,
                    parallel=self.parallel,
                    answer=answer,
                    fill=self._fills(request),
                )
        elif self.constrain and (request.output_schema is not None or answer is not ANSWER):
            body["json_schema"] = answer
        return body

    def _fills(self, request: ModelRequest) -> bool:
        """Whether a call writes every option and keeps the ones the user stated (``decoding.filled``):
        when grounding checks the call and the request is in English, the language of the tool
        definitions (a Chinese request cannot state an option by its English name)."""
        english = user_language(request.messages) == "en"
        return self.constrain and self.grounded and request.tool_choice == "auto" and english

    def wire(self, body: dict[str, Any], compact: bool = False) -> dict[str, Any]:
        """The runtime request for ``body``: its tools written into the system message without the
        spaces in their JSON (``compact_tools``); with ``compact``, its reply decoded as compact
        JSON, see ``grammar.Compaction``."""
        layout = self._layout() if self.compact_tools and body.get("tools") else None
        inlined = layout.inline(body["messages"], body["tools"]) if layout else None
        if inlined is not None:
            body = {**{k: v for k, v in body.items() if k != "tools"}, "messages": inlined}
        after = self.compact_json
        return body if after is None or not compact else self._compaction().wire(body, after)
