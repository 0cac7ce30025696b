"""The request built from a conversation's history: always a valid Messages API conversation.

History is written as it happens, by this core or an older one that may have died at any
point (a proposal waiting, a command running), and it holds whatever the model sent
(duplicate tool_use ids, non-object inputs). The API refuses such a conversation on every
later send, so the conversation would be lost. `wire_messages` therefore never trusts the
records: it keeps what the API accepts and repairs the rest, one rule per API constraint:

* roles alternate, the first message is the user's; same-role neighbours are merged, but a
  prompt that follows a prompt which got no reply (the turn was stopped before any text,
  failed, or the core ended while the reply streamed) is a turn of its own: between them
  stands an assistant message saying that no reply came (`NO_REPLY`), so the model answers
  the new prompt and never takes the old one as asked again;
* no empty content, no whitespace-only text block;
* every tool_use has a unique, well-formed id and an object input;
* the message after an assistant message with tool_use blocks is a user message that starts
  with exactly one tool_result for each of them (a missing one is answered as not completed);
  a tool_result anywhere else is dropped;
* text is valid Unicode: lone surrogates (pynvim's escapes of bytes that are not UTF-8)
  become U+FFFD on the wire, while history and buffers keep the originals;
* thinking and redacted_thinking blocks go back byte for byte, in their place in the
  assistant message (the API checks their signature before a tool_result);
* with `signatures` (a provider whose replies are signed per part: Gemini), the `signature`
  of an assistant text or tool_use block stays on it, as recorded; without, none is sent;
* after a compaction record (see sightline.agent.compaction), the request is its summary as a user
  message, then the records it keeps, then those after it: the rules above then apply to
  that sequence, so a compaction at any point still makes a valid request.

Pure: no Neovim, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from sightline.domain import images

# What the model reads for a call the previous core never finished (restart, kill, quit).
ABANDONED = (
    "not completed: the session ended before this call finished "
    "(the core was restarted, crashed or Neovim quit); nothing more was done"
)

# What the model reads in place of the reply a prompt never got, by how its turn ended (the
# event recorded after it); the transcript says it in its own words (domain/narrator.py).
NO_REPLY = {
    "stopped": "(no reply: the user stopped this turn before any answer)",
    "error": "(no reply: the request failed)",
    "interrupted": (
        "(no reply: the session ended before the answer; Neovim quit or the core was restarted)"
    ),
}
NO_REPLY_OTHER = "(no reply: this turn ended before any answer)"

_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_SURROGATES = re.compile("[\ud800-\udfff]")
_SIGNATURE = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_ASSISTANT_KEEP = {"thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}


SUMMARY_INTRO = (
    "The earlier part of this conversation was summarised to save context "
    "(the user sees it in full):\n\n"
)


def is_compaction(record: Any) -> bool:
    """A compaction record the request can use: a summary, and how many of the records
    before it stay as they are (the rest it replaces)."""
    if not isinstance(record, dict) or record.get("type") != "compaction":
        return False
    summary, keep = record.get("summary"), record.get("keep")
    whole = isinstance(keep, int) and not isinstance(keep, bool) and keep >= 0
    return isinstance(summary, str) and bool(summary.strip()) and whole


def effective(records: list[Any]) -> list[Any]:
    """The records a request is built from: after the last compaction record, its summary
    (as a user message), the records it keeps, then the records after it."""
    return _effective(records)[0]


def _effective(records: list[Any]) -> tuple[list[Any], dict[str, Any] | None]:
    """`effective(records)` and the summary's message at its head (None: no compaction)."""
    last = None
    for i, record in enumerate(records):
        if is_compaction(record):
            last = i
    if last is None:
        return records, None
    record = records[last]
    cut = max(0, last - record["keep"])
    head = {
        "type": "message",
        "role": "user",
        "content": [{"type": "text", "text": SUMMARY_INTRO + record["summary"]}],
    }
    return [head, *records[cut:last], *records[last + 1 :]], head


def clean_text(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (JSON encoders and HTTP refuse them)."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def clean(value: Any) -> Any:
    """Every string in a JSON-like value made safe for the wire (see `clean_text`)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def _text_block(block: dict[str, Any]) -> dict[str, Any] | None:
    text = block.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    # cache_control is dropped: breakpoints are the provider's, per request (at most 4).
    return {"type": "text", "text": clean_text(text)}


def _image_ref(block: dict[str, Any]) -> dict[str, Any] | None:
    """An image reference as kept (domain/images.py); the request inlines its bytes."""
    return dict(block) if images.is_reference(block) else None


def _result_content(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return clean_text(content) if content.strip() else "(no output)"
    if isinstance(content, list):
        kept = [
            t
            for b in content
            if isinstance(b, dict) and (t := _text_block(b) or _image_ref(b)) is not None
        ]
        return kept or "(no output)"
    return "(no output)" if content is None else clean_text(str(content))


def _signature(block: dict[str, Any], out: dict[str, Any], keep: bool) -> dict[str, Any]:
    sig = block.get("signature")
    if keep and isinstance(sig, str) and _SIGNATURE.match(sig):
        out["signature"] = sig
    return out


def _blocks(role: str, content: Any, signatures: bool = False) -> list[dict[str, Any]]:
    """The blocks of one record that the API could accept, in order; the rest dropped."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    out: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            if text := _text_block(block):
                out.append(_signature(block, text, signatures and role == "assistant"))
        elif kind == "tool_use" and role == "assistant":
            # Ids and inputs are repaired in the pairing pass (they need the whole history).
            out.append(dict(block))
        elif kind == "tool_result" and role == "user":
            out.append(dict(block))
        elif kind == "image" and role == "user" and (ref := _image_ref(block)) is not None:
            out.append(ref)
        elif role == "assistant" and kind in _ASSISTANT_KEEP:
            keys = _ASSISTANT_KEEP[str(kind)]
            # Unchanged or not at all: the signature covers the text. One the API cannot
            # have sent (lone surrogates, from a damaged file) cannot go back either.
            values = [block.get(k) for k in keys]
            if all(isinstance(v, str) and not _SURROGATES.search(v) for v in values):
                out.append({"type": kind, **{k: block[k] for k in keys}})
    return out


def _messages(
    records: list[Any], head: Any = None, signatures: bool = False
) -> list[dict[str, Any]]:
    """Message records as (role, blocks), same-role neighbours merged, tool_results first;
    a prompt after a prompt that got no reply is kept apart by a NO_REPLY message. `head` is
    a compaction's summary (not a prompt: the kept prompt after it joins it)."""
    out: list[dict[str, Any]] = []
    prompted = False  # out[-1] is a user message holding a prompt's text
    ended: str | None = None  # the event recorded since the last message
    for record in records:
        if not isinstance(record, dict):
            continue
        if record.get("type") == "event":
            ended = record.get("event") if isinstance(record.get("event"), str) else None
            continue
        if record.get("type") != "message":
            continue
        role = record.get("role")
        if role not in ("user", "assistant"):
            continue
        blocks = _blocks(str(role), record.get("content"), signatures)
        if not blocks:
            continue
        text = role == "user" and record is not head and any(b["type"] == "text" for b in blocks)
        if text and prompted:
            reply = {"type": "text", "text": NO_REPLY.get(str(ended), NO_REPLY_OTHER)}
            out.append({"role": "assistant", "content": [reply], "no_reply": True})
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
        prompted = role == "user" and (text or prompted)
        ended = None
    return out


class _Ids:
    """Tool-use ids unique across the request: a repeated or malformed id gets a new one."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.n = 0

    def take(self, wanted: Any) -> str:
        if isinstance(wanted, str) and _ID.match(wanted) and wanted not in self.seen:
            self.seen.add(wanted)
            return wanted
        while True:
            self.n += 1
            fresh = f"toolu_sightline_{self.n}"
            if fresh not in self.seen:
                self.seen.add(fresh)
                return fresh


def _calls(blocks: list[dict[str, Any]], ids: _Ids, signatures: bool) -> list[tuple[str, str]]:
    """Repair the tool_use blocks of an assistant message in place; (original id, wire id)."""
    calls: list[tuple[str, str]] = []
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        original = block.get("id")
        wire_id = ids.take(original)
        name, args = block.get("name"), block.get("input")
        original_block = dict(block)
        block.clear()
        block.update(
            type="tool_use",
            id=wire_id,
            name=name if isinstance(name, str) and _NAME.match(name) else "invalid_tool_name",
            # The session answered a non-object input with an error result; the model's own
            # message must still be one the API accepts.
            input=clean(args) if isinstance(args, dict) else {},
        )
        _signature(original_block, block, signatures)
        calls.append((str(original), wire_id))
    return calls


def _answer(calls: list[tuple[str, str]], blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user message after tool calls: one result per call (in call order), then the rest.

    Results are matched to calls by their original id, in order, so two calls that shared an
    id get the first and the second result with that id."""
    results: dict[str, list[dict[str, Any]]] = {}
    rest: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "tool_result":
            results.setdefault(str(block.get("tool_use_id")), []).append(block)
        else:
            rest.append(block)
    answered: list[dict[str, Any]] = []
    for original, wire_id in calls:
        queue = results.get(original) or []
        found = queue.pop(0) if queue else None
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": wire_id}
        if found is None:
            out.update(content=ABANDONED, is_error=True)
        else:
            out["content"] = _result_content(found.get("content"))
            if found.get("is_error") is True:
                out["is_error"] = True
        answered.append(out)
    return answered + rest


def wire_messages(records: list[Any], signatures: bool = False) -> list[dict[str, Any]]:
    """Messages for the API from any history: role and content only, always valid (with
    `signatures`, the per-part signatures a provider asked for; see the module's rules)."""
    ids = _Ids()
    out: list[dict[str, Any]] = []
    calls: list[tuple[str, str]] = []  # those of out[-1] when it is the assistant's
    for msg in _messages(*_effective(records), signatures=signatures):
        if msg["role"] == "assistant":
            no_reply = msg.pop("no_reply", False)
            if not out or (no_reply and out[-1]["role"] == "assistant"):
                # A conversation starts with the user; a NO_REPLY whose prompt was dropped
                # (only stray tool_results) stands for nothing.
                continue
            new_calls = _calls(msg["content"], ids, signatures)
            if out[-1]["role"] == "assistant":
                # Only after an assistant message without calls (see below): merge.
                out[-1]["content"].extend(msg["content"])
            else:
                out.append(msg)
            calls = new_calls
            continue
        content = _answer(calls, msg["content"])
        calls = []
        if not content:
            # Only stray tool_results: drop the message; the next assistant one merges into
            # the previous (which had no calls, or `content` would hold their answers).
            continue
        if out and out[-1]["role"] == "user":  # cannot happen after merging; kept safe
            out[-1]["content"].extend(content)
        else:
            out.append({"role": "user", "content": content})
    if calls:
        # The history ends with calls nobody answered (the core died while they ran).
        out.append({"role": "user", "content": _answer(calls, [])})
    elif out and out[-1]["role"] == "assistant":
        # A request ends with the user's turn; a trailing reply would be read as a prefill.
        out.pop()
    return out


def unanswered(records: list[Any]) -> list[dict[str, Any]]:
    """The tool_use blocks after the last user message: calls the history leaves without a
    result (the core ended while they waited or ran)."""
    waiting: list[dict[str, Any]] = []
    for msg in _messages(*_effective(records)):
        if msg["role"] == "user":
            waiting = []
        else:
            waiting += [b for b in msg["content"] if b.get("type") == "tool_use"]
    return waiting


def cut_off(records: list[Any]) -> bool:
    """Whether the history ends in a turn that got no reply and never said how it ended: its
    last message is the user's and no event follows it (the core ended while the reply
    streamed; a stop, an error and a finished turn each record an event)."""
    for record in reversed(records):
        if not isinstance(record, dict):
            continue
        if record.get("type") == "event":
            return False
        if record.get("type") == "message" and record.get("role") in ("user", "assistant"):
            return bool(record["role"] == "user")
    return False
