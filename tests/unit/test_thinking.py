"""Thinking: provider.thinking checked in both schemas, streamed into its own transcript
section (SightlineThinking), and passed back exactly as the API requires during tool use.

The end-to-end test drives the real anthropic SDK in a child Neovim against the loopback
Messages server, which signs thinking blocks and refuses (400, like the real API) a tool
turn whose thinking block was dropped, moved or altered."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sightline.agent.replay import render_records
from sightline.domain.config import ConfigError, ProviderConfig
from sightline.providers.anthropic_api import AnthropicProvider, thinking_allowed
from sightline.providers.base import Request
from sightline.providers.openai_api import _Assembler, chat_request
from sightline.ui.transcript import THINKING_GROUP, THINKING_HEADER, Transcript
from tests import fakeapi as fa
from tests.effective_config import core_config, provider_config
from tests.fakeapi import fake_api, validation_error

__all__ = ["fake_api"]


# -- config -------------------------------------------------------------------------------


def provider(**values: Any) -> ProviderConfig:
    return core_config(provider=values).provider


def test_thinking_takes_a_budget_an_effort_or_off() -> None:
    assert provider(name="anthropic", thinking=8000).thinking == 8000
    assert provider(name="anthropic", thinking=8000.0).thinking == 8000
    assert provider(name="anthropic", thinking="high").thinking == "high"
    assert provider(name="openai", thinking="low").thinking == "low"
    assert provider(name="anthropic", thinking=False).thinking is None
    assert provider(name="anthropic").thinking is None


@pytest.mark.parametrize(
    ("values", "said"),
    [
        # Shapes only: the bounds and the budget-or-effort rule are config.lua's (setup()
        # refuses them: tests/nvim/test_thinking.py, tests/nvim/test_port_config.py).
        ({"name": "anthropic", "thinking": True}, "token budget"),
        ({"name": "anthropic", "thinking": {}}, "token budget"),
        ({"name": "anthropic", "context_window": "big"}, "a whole number"),
    ],
)
def test_a_bad_thinking_value_names_its_path(values: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as err:
        core_config(provider=values)
    key = "thinking" if "thinking" in values else "context_window"
    assert str(err.value).startswith(f"provider.{key}:") and said in str(err.value)


# -- the request ----------------------------------------------------------------------------

USER = {"role": "user", "content": [{"type": "text", "text": "read a"}]}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
}


def params(thinking: int | str | None, messages: list[dict[str, Any]]) -> dict[str, Any]:
    cfg = provider_config(name="anthropic", model="claude-test", thinking=thinking)
    return AnthropicProvider(cfg)._params(Request("sys", messages, []))


def test_the_budget_goes_on_top_of_max_tokens_and_an_effort_means_a_budget() -> None:
    body = params(4000, [USER])
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert body["max_tokens"] == 8192 + 4000
    assert params("low", [USER])["thinking"]["budget_tokens"] == 2048
    assert "thinking" not in params(None, [USER])
    assert validation_error(body) is None


def test_a_tool_turn_without_its_thinking_block_goes_without_thinking() -> None:
    # A history written with thinking off: its last call has no thinking block to send back.
    plain: list[dict[str, Any]] = [USER, {"role": "assistant", "content": [CALL]}, RESULT]
    assert not thinking_allowed(plain)
    assert "thinking" not in params(8000, plain)
    assert validation_error(params(8000, plain)) is None
    signed = fa.thinking("I will read a.")
    block = {"type": "thinking", "thinking": signed.thinking, "signature": signed.signature}
    kept: list[dict[str, Any]] = [USER, {"role": "assistant", "content": [block, CALL]}, RESULT]
    assert params(8000, kept)["thinking"]["budget_tokens"] == 8000
    assert validation_error(params(8000, kept)) is None


def test_the_fake_refuses_a_dropped_moved_or_altered_thinking_block() -> None:
    signed = fa.thinking("I will read a.")
    block = {"type": "thinking", "thinking": signed.thinking, "signature": signed.signature}

    def body(content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "model": "m",
            "max_tokens": 9000,
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "messages": [USER, {"role": "assistant", "content": content}, RESULT],
        }

    assert validation_error(body([block, CALL])) is None
    assert "Expected `thinking`" in str(validation_error(body([CALL])))
    text = {"type": "text", "text": "so"}
    assert "Expected `thinking`" in str(validation_error(body([text, block, CALL])))
    altered = {**block, "thinking": "I will read b."}
    assert "Invalid `signature`" in str(validation_error(body([altered, CALL])))
    redacted = {"type": "redacted_thinking", "data": fa.redacted_thinking().data}
    assert validation_error(body([redacted, CALL])) is None
    assert "Invalid `signature`" in str(
        validation_error(body([{**redacted, "data": "made.up"}, CALL]))
    )
    too_big = {**body([block, CALL]), "max_tokens": 2048}
    assert "greater than `thinking.budget_tokens`" in str(validation_error(too_big))


def test_an_openai_compatible_model_gets_the_reasoning_effort_and_its_reasoning_is_shown() -> None:
    cfg = provider_config(name="openai", model="o4-mini", thinking="high")
    assert chat_request(cfg, Request("sys", [USER], []))["reasoning_effort"] == "high"
    assert "reasoning_effort" not in chat_request(cfg, Request("s", [USER], [], thinking=False))
    off = provider_config(name="openai", model="gpt-4.1")
    assert "reasoning_effort" not in chat_request(off, Request("sys", [USER], []))
    assembler = _Assembler()
    delta = SimpleNamespace(content=None, tool_calls=None, reasoning_content="hmm")
    chunk = SimpleNamespace(
        usage=None, choices=[SimpleNamespace(index=0, delta=delta, finish_reason=None)]
    )
    assembler.feed(chunk)
    assert assembler.thought == "hmm"
    assert assembler.reply().content == []  # never sent back: Chat Completions takes none


# -- the transcript -------------------------------------------------------------------------


def test_thinking_is_its_own_section_above_the_text_and_foldable() -> None:
    t = Transcript()
    t.add_user("why?")
    t.append_thinking("first\nsecond")
    t.append_text("Because.")
    delta = t.full()
    lines = delta["lines"]
    head = lines.index(THINKING_HEADER)
    assert lines[head : head + 3] == [THINKING_HEADER, "first", "second"]
    assert lines[-1] == "Because." and lines[-2] == ""
    painted = {h[0] for h in delta["hls"] if h[3] == THINKING_GROUP}
    assert painted == {head, head + 1, head + 2}
    assert delta["folds"] == [[head, head + 3]]  # [first, end): header to its last line


def test_a_reopened_conversation_shows_its_thinking() -> None:
    t = Transcript()
    render_records(
        t,
        [
            {"type": "message", "role": "user", "content": "q", "visible": "q"},
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "pondering", "signature": "s"},
                    {"type": "redacted_thinking", "data": "x"},
                    {"type": "text", "text": "answer"},
                ],
            },
        ],
    )
    lines = t.full()["lines"]
    assert THINKING_HEADER in lines and "pondering" in lines[lines.index(THINKING_HEADER) + 1]
    assert "answer" in lines


# -- end to end ---------------------------------------------------------------------------
