"""Tool definitions written as the model's template writes them, and the schema as a grammar."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import ModelRequest
from minloop.builtins import default_tools
from minloop.models.local import LocalModel
from minloop.models.local.decoding import decision_schema
from minloop.models.local.render import Layout, compact
from minloop.models.local.runtime import ONE_LINE, grammar_of, post, tokenize

HEAD = "\n\n# Tools\n<tools>"
TAIL = "\n</tools>\nCall one."


def qwen_like(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """A template in the layout Qwen2.5's uses: the tools after the system message's text."""
    system, *rest = messages
    block = HEAD + "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + TAIL if tools else ""
    turns = "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in rest)
    return f"<system>{system['content']}{block}</system>{turns}<assistant>"


def in_the_user_turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """A template that lists the tools elsewhere (as Llama 3's does, in the user's turn)."""
    listed = json.dumps(tools) if tools else ""
    return "".join(f"<{m['role']}>{m['content']}{listed if m['role'] == 'user' else ''}" for m in messages)


def ascii_only(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """Qwen's layout, but with non-ASCII text escaped: the compact lines would differ in more than spaces."""
    system, *rest = messages
    block = HEAD + "".join("\n" + json.dumps(t) for t in tools) + TAIL if tools else ""
    return f"<system>{system['content']}{block}</system>" + "".join(m["content"] for m in rest)


def test_the_layout_is_read_from_the_template() -> None:
    layout = Layout.of(qwen_like)
    assert layout == Layout(HEAD, TAIL)
    tool = {"type": "function", "function": {"name": "f", "description": "东京", "parameters": {}}}
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert layout.inline(messages, [tool, tool]) == [
        {
            "role": "system",
            "content": 'Be brief.\n\n# Tools\n<tools>\n{"type":"function","function":{"name":"f",'
            '"description":"东京","parameters":{}}}\n{"type":"function","function":{"name":"f",'
            '"description":"东京","parameters":{}}}\n</tools>\nCall one.',
        },
        {"role": "user", "content": "hi"},
    ]
    assert layout.inline([{"role": "user", "content": "hi"}], [tool]) is None  # no system message to extend


def test_other_layouts_keep_the_tools_with_the_runtime() -> None:
    def broken(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        raise ValueError("this template cannot render tools")

    assert Layout.of(in_the_user_turn) is None
    assert Layout.of(ascii_only) is None
    assert Layout.of(broken) is None


def test_the_schema_becomes_a_grammar_with_one_space_at_most() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    grammar = grammar_of(decision_schema([tool], "auto")) or ""
    if grammar.startswith("%llguidance"):  # the prebuilt runtime: the schema, its separators fixed
        held = json.loads(grammar.split("%json", 1)[1])
        assert held["x-guidance"] == ONE_LINE and held["anyOf"] == decision_schema([tool], "auto")["anyOf"]
    else:  # a runtime built without llguidance: a GBNF grammar; one it cannot make is None
        assert 'space ::= " "?' in grammar.splitlines() and '"\\n"' not in grammar
        assert grammar_of({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}) is None


@pytest.mark.local_model
def test_the_prompt_is_the_templates_own_and_the_schema_a_grammar(local: LocalModel) -> None:
    tools = [t.spec() for t in default_tools(".")]
    request = ModelRequest([{"role": "user", "content": "现在东京几点？"}], tools)
    body = local.body(request)
    server = local.load()
    theirs = post(server, "/apply-template", {"messages": body["messages"], "tools": tools})["prompt"]
    wired = local.wire(body)  # the default: the template's own spaces, and no tools beside a grammar
    assert "tools" not in wired and wired["grammar"] == grammar_of(body["json_schema"])
    assert post(server, "/apply-template", {"messages": wired["messages"]})["prompt"] == theirs
    short = LocalModel(compact_tools=True).wire(body)
    for tool in tools:
        theirs = theirs.replace(json.dumps(tool, ensure_ascii=False), compact(tool))
    assert post(server, "/apply-template", {"messages": short["messages"]})["prompt"] == theirs
    assert short["grammar"] == wired["grammar"]
    fewer = LocalModel(compact_tools=True).count_tokens(request.messages, tools)
    assert fewer < 0.9 * local.count_tokens(request.messages, tools)


@pytest.mark.local_model
def test_a_call_is_written_on_one_line(local: LocalModel) -> None:
    tools = [t.spec() for t in default_tools(".")]
    request = ModelRequest([{"role": "user", "content": "What time is it in Tokyo?"}], tools)
    response = asyncio.run(local.call(request))
    call = response.message["tool_calls"][0]["function"]
    written = json.dumps(
        {"name": call["name"], "arguments": json.loads(call["arguments"])}, ensure_ascii=False
    )
    assert response.usage.completion_tokens <= len(tokenize(local.load(), written)) + 1  # and the end
