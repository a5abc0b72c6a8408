"""The embedded model streams its tokens; under constrained decisions a reader sees the answer's
words as they are generated, never the JSON around them."""

from __future__ import annotations

import asyncio
import json

import pytest

from minloop import Loop, ModelRequest, tool
from minloop.layers.streaming import StreamEvent, TextDelta, ToolCallFinished, ToolCallStarted
from minloop.models.local import LocalModel
from minloop.models.local.stream import AnswerText, Repetition


def decode(pieces: list[str]) -> list[str]:
    decoder = AnswerText()
    return [decoder.feed(p) for p in pieces]


def test_the_answer_is_decoded_as_it_grows_with_escapes_split_across_pieces() -> None:
    pieces = ['{"', "answer", '": "Hel', "lo\\", 'n\\"', "wor", 'ld"}']
    assert decode(pieces) == ["", "", "Hel", "lo", '\n"', "wor", "ld"]
    text = json.dumps({"answer": "你好 🙂 Tab\there"})  # \uXXXX escapes, a surrogate pair
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    assert "".join(decode(pieces)) == "你好 🙂 Tab\there"
    assert decode([' { "answer" :', ' "ok"', " }"]) == ["", "ok", ""]


def test_a_call_shows_nothing() -> None:
    assert decode(['{"name": "add", ', '"arguments": {"a": 1}}']) == ["", ""]
    assert decode(['{"calls": [{"answer": "x"}]}']) == [""]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def local() -> LocalModel:
    model = LocalModel(max_tokens=48)
    model.load()
    return model


async def watch(loop: Loop, prompt: str) -> tuple[list[StreamEvent], str | None, str]:
    async with loop.stream(prompt) as events:
        seen = [e async for e in events]
    assert events.result is not None
    return seen, events.result.output, events.result.status


@pytest.mark.local_model
def test_the_embedded_model_streams_an_answer_in_pieces_not_its_json(local: LocalModel) -> None:
    seen, output, status = asyncio.run(watch(Loop(local, [add]), "Say hello to Ada, briefly."))
    text = [e.text for e in seen if isinstance(e, TextDelta)]
    assert status == "success" and output
    assert len(text) > 1  # several pieces, as generated
    assert "".join(text).strip() == output
    assert not any("answer" in piece or "{" in piece for piece in text)


@pytest.mark.local_model
def test_the_embedded_model_streams_a_chinese_answer_and_announces_its_calls(local: LocalModel) -> None:
    seen, output, status = asyncio.run(watch(Loop(local), "用一句话向小明问好。"))
    assert status == "success" and output
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)).strip() == output
    seen, _, _ = asyncio.run(watch(Loop(local, [add]), "Use the add tool to add 2 and 3."))
    started = [e for e in seen if isinstance(e, ToolCallStarted)]
    finished = [e.call for e in seen if isinstance(e, ToolCallFinished)]
    assert started and started[0].name == "add" and started[0].step == 1
    assert [(c.name, json.loads(c.arguments)) for c in finished][:1] == [("add", {"a": 2, "b": 3})]


def repeated(pieces: list[str]) -> tuple[int | None, Repetition]:
    watch = Repetition()
    return next((i for i, piece in enumerate(pieces) if watch(piece)), None), watch


def test_an_answer_is_stopped_where_it_writes_a_sentence_again() -> None:
    loop = [
        "The weather is mild. ",
        "The day is warm and sunny",
        " today. The day is warm",
        " and sunny today. The",
    ]
    assert (
        repeated(loop)[0] == 3
        and repeated(loop)[1].kept == "The weather is mild. The day is warm and sunny today."
    )
    chinese = ["今天的海面非常平静，天空也是一片湛蓝的颜色。", "今天的海面非常平静，天空也是一片湛蓝的颜色。"]
    assert repeated(chinese)[1].kept == "今天的海面非常平静，天空也是一片湛蓝的颜色。"
    # a short refrain, a sentence written again with one word changed, a sentence not yet ended: no loop
    for pieces in (
        ["Row, row. ", "Row, row. ", "Gently down the stream.\n"],
        ["The day is warm and sunny today. ", "The day is cold and sunny today. "],
        ["The day is warm and sunny today. ", "The day is warm and sunny today"],
    ):
        stopped, watch = repeated(pieces)
        assert (stopped, watch.kept) == (None, None), pieces


@pytest.mark.local_model
@pytest.mark.parametrize(
    ("request_text", "sentence", "most"),
    [  # five copies would be ~45 and ~100 tokens
        (
            "Repeat this sentence five times: The sea is calm and blue today.",
            "The sea is calm and blue today.",
            30,
        ),
        (
            "把这句话重复五遍：今天的海面非常平静，天空也是一片湛蓝的颜色。",
            "今天的海面非常平静，天空也是一片湛蓝的颜色。",
            50,
        ),
    ],
)
def test_the_embedded_model_stops_a_repeated_sentence(
    local: LocalModel, request_text: str, sentence: str, most: int
) -> None:
    reply = asyncio.run(local.call(ModelRequest([{"role": "user", "content": request_text}])))
    assert reply.message["content"] == sentence  # written once: the second copy stopped the answer
    assert 0 < reply.usage.completion_tokens < most, reply.usage  # counted though the stream was stopped
