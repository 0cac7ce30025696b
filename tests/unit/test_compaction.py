"""Long conversations: `:Sightline compact` and the automatic trigger summarise the older
turns by a model request; the history keeps the originals and a compaction record; the next
request (from the summary and what follows) is valid; a reopened conversation goes on from
the summary. Against the Messages fake (real anthropic SDK) and the Chat Completions fake
(real openai SDK), in a child Neovim."""

from __future__ import annotations

from sightline.agent import compaction
from sightline.domain import pricing
from sightline.domain.wire import SUMMARY_INTRO, wire_messages
from sightline.providers.anthropic_api import AnthropicProvider
from sightline.providers.openai_api import chat_request
from tests import fakeopenai as fo
from tests.agent_util import texts
from tests.effective_config import provider_config
from tests.fakeapi import fake_api, validation_error

__all__ = ["fake_api"]


TURNS = [
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "text", "text": "q1"}],
        "visible": "q1",
    },
    {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "text", "text": "let me read"},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
        ],
    },
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 9000}],
    },
    {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "a1"}]},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "text", "text": "q2"}],
        "visible": "q2",
    },
]


def test_the_summarising_request_is_valid_for_both_providers_and_bounded() -> None:
    req = compaction.request(TURNS)
    assert req.tools == [] and req.thinking is False
    text = req.messages[0]["content"][0]["text"]
    assert "q1" in text and "[called read_file" in text and "characters left out" in text
    assert "let me read" in text and "\nt\n" not in text  # thinking stays out
    assert len(text) < 9000
    cfg = provider_config(name="anthropic", model="claude-t", thinking=4096)
    body = AnthropicProvider(cfg)._params(req)
    assert "thinking" not in body and validation_error(body) is None
    chat = chat_request(provider_config(name="openai", model="gpt-4.1"), req)
    assert fo.validation_error({**chat, "stream": True}) is None


def test_a_compaction_record_makes_the_next_request_from_the_summary() -> None:
    upto = compaction.current_prompt(TURNS)
    assert upto == 4 and compaction.summarisable(TURNS[:upto]) == 4
    record = compaction.record("They read a.", keep=1, replaced=4)
    messages = wire_messages([*TURNS, record])
    assert len(messages) == 1
    assert texts(messages[0]) == [SUMMARY_INTRO + "They read a.", "q2"]
    # Only the summary left: nothing more to compact.
    assert compaction.summarisable([*TURNS[:upto], compaction.record("s", 0, 4)]) == 0


def test_context_windows_come_from_config_the_table_or_a_default() -> None:
    assert pricing.context_window("claude-sonnet-4-5-20250929") == 200_000
    assert pricing.context_window("openai/gpt-4o-mini") == 128_000
    assert pricing.context_window("llama3.1", local=True) == 8192
    assert pricing.context_window("mystery") == 128_000
    assert pricing.context_window("claude-sonnet-4-5", configured=2048) == 2048
