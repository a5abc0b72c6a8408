"""Transcript rules: S4, S5, S16, S17, S21."""

from __future__ import annotations

import pytest

from minloop import TranscriptError, check_transcript
from minloop.messages import TranscriptChecker, normalize_input, tool_calls_of

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
}
ASK = {"role": "assistant", "content": None, "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": '{"temp": 25}'}
USER = {"role": "user", "content": "weather in Beijing?"}


def rule_of(messages: object) -> tuple[int | None, str]:
    with pytest.raises(TranscriptError) as info:
        check_transcript(messages)  # type: ignore[arg-type]
    return info.value.index, info.value.rule


def test_valid_transcripts_pass() -> None:
    check_transcript([USER])
    check_transcript(
        [
            {"role": "system", "content": "be brief"},
            USER,
            ASK,
            RESULT,
            {"role": "assistant", "content": "Sunny"},
        ]
    )
    legacy = {"role": "function", "name": "get_weather", "tool_call_id": "c1", "content": "{}"}
    check_transcript([USER, ASK, legacy])


def test_s4_needs_a_user_message_and_a_list() -> None:
    assert rule_of([{"role": "system", "content": "hi"}]) == (None, "no_user_message")
    assert rule_of([]) == (None, "no_user_message")
    assert rule_of("hello") == (None, "not_a_list")
    assert normalize_input("hi") == [{"role": "user", "content": "hi"}]


def test_s5_roles_are_strict() -> None:
    assert rule_of([USER, {"role": "robot", "content": "x"}]) == (1, "invalid_role")
    assert rule_of([USER, ASK, {"role": "function", "tool_call_id": "c1", "content": "{}"}]) == (
        2,
        "missing_name",
    )
    assert rule_of([USER, "text"]) == (1, "not_an_object")
    assert rule_of([USER, {"role": "assistant", "content": None}]) == (1, "missing_content")


def test_s16_result_must_follow_its_assistant_message() -> None:
    # a status message slipped between the call and its result (the seed's case 4.1)
    status = {"role": "system", "content": "tool executed"}
    assert rule_of([USER, ASK, status, RESULT]) == (1, "unanswered_tool_call")
    assert rule_of([USER, RESULT]) == (1, "orphan_tool_result")
    assert rule_of([USER, ASK, RESULT, USER, RESULT]) == (4, "orphan_tool_result")


def test_s16_tool_call_ids_must_match_once() -> None:
    assert rule_of([USER, ASK, {**RESULT, "tool_call_id": "c9"}]) == (2, "tool_call_id_mismatch")
    assert rule_of([USER, ASK, RESULT, RESULT]) == (3, "duplicate_tool_result")
    two = {**ASK, "tool_calls": [CALL, CALL]}
    assert rule_of([USER, two]) == (1, "duplicate_tool_call_id")
    assert rule_of([USER, ASK]) == (1, "unanswered_tool_call")


def test_s17_tool_content_is_a_json_string() -> None:
    assert rule_of([USER, ASK, {**RESULT, "content": {"temp": 25}}]) == (2, "content_not_json")
    assert rule_of([USER, ASK, {**RESULT, "content": "sunny"}]) == (2, "content_not_json")


def test_s21_error_names_index_and_rule() -> None:
    with pytest.raises(TranscriptError, match=r"message 2: tool_call_id_mismatch: .*'c9'"):
        check_transcript([USER, ASK, {**RESULT, "tool_call_id": "c9"}])


def test_s8_none_and_empty_list_both_mean_no_call() -> None:
    assert tool_calls_of({"role": "assistant", "tool_calls": None}) == []
    assert tool_calls_of({"role": "assistant", "tool_calls": []}) == []
    assert tool_calls_of({"role": "assistant"}) == []
    assert tool_calls_of(ASK) == [CALL]


def test_bad_tool_calls_shape_is_named() -> None:
    bad = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {}}}],
    }
    assert rule_of([USER, bad]) == (1, "bad_tool_calls")
    assert rule_of([USER, {"role": "assistant", "tool_calls": "f()"}]) == (1, "bad_tool_calls")


def verdict(check: object, messages: list) -> tuple[int | None, str] | None:
    try:
        check(messages)  # type: ignore[operator]
    except TranscriptError as exc:
        return exc.index, exc.rule
    return None


def test_incremental_checker_agrees_with_check_transcript_on_every_prefix() -> None:
    status = {"role": "system", "content": "tool executed"}
    transcripts = [
        [
            {"role": "system", "content": "be brief"},
            USER,
            ASK,
            RESULT,
            {"role": "assistant", "content": "Sunny"},
        ],
        [USER, ASK, status, RESULT],
        [USER, ASK, RESULT, RESULT],
        [USER, ASK, {**RESULT, "tool_call_id": "c9"}],
        [USER, ASK, RESULT, USER, RESULT],
        [{"role": "system", "content": "hi"}, USER, {"role": "robot", "content": "x"}],
    ]
    for messages in transcripts:
        checker, grown = TranscriptChecker(), []
        for message in messages:  # the list grows in place, as a run's transcript does
            grown.append(message)
            assert verdict(checker, grown) == verdict(check_transcript, grown), grown


def test_incremental_checker_rewalks_a_rewritten_list() -> None:
    checker = TranscriptChecker()
    messages = [USER, ASK, RESULT]
    checker(messages)
    messages[2] = {**RESULT, "tool_call_id": "c9"}  # replaced in place: same length
    assert verdict(checker, messages) == (2, "tool_call_id_mismatch")
    assert verdict(checker, [USER]) is None  # shorter: walked again from the start
