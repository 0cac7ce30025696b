"""A long conversation in the history store, as sightline writes one: many turns of Markdown
prose with code blocks, tool calls and their results (command output), and edit proposals
shown as diffs. For issue 14's "a 100 000-token conversation opens and scrolls without lag"
(tests/bench_history.py) and its test (tests/nvim/test_history_long.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sightline.domain import history

CHARS_PER_TOKEN = 4  # the estimate the fakes use (tests/fakeapi.py)


def first_words(turn: int) -> str:
    return f"Question {turn}: how does module_{turn} work?"


def last_words(turn: int) -> str:
    return f"That closes turn {turn}."


def _turn(i: int) -> list[dict[str, Any]]:
    """One turn's records: the question, a reply with a tool call, its result, a proposal
    (its diff), and the final answer in Markdown with a code block."""
    call_id, edit_id = f"toolu_{i:05d}_a", f"toolu_{i:05d}_b"
    code = "\n".join(f"    value_{k} = compute({k}, 'text {i}')" for k in range(12))
    answer = (
        f"## Module {i}\n\n"
        f"The module **module_{i}** reads the input, checks it and writes `out_{i}.txt`. "
        "It is called from the command line and from the tests; the parts are:\n\n"
        "- the *reader*, which splits the lines;\n"
        "- the **checker**, which refuses empty values;\n"
        "- the writer, which appends to the file.\n\n"
        f"```python\ndef run_{i}(path):\n{code}\n    return path\n```\n\n"
        + "A paragraph of explanation that goes on for a while, as replies do. " * 4
        + f"\n\n{last_words(i)}"
    )
    output = "\n".join(f"src/module_{i}.py:{k}: value_{k} = compute({k})" for k in range(14))
    diff = [
        [f"  src/module_{i}.py", None],
        [f"@@ -{i},3 +{i},3 @@", "SightlineDiffHunk"],
        [f"-    value = compute({i})", "SightlineDiffDelete"],
        [f"+    value = compute({i}, strict=True)", "SightlineDiffAdd"],
        ["     return value", None],
        ["✓ applied", "SightlineNote"],
    ]
    return [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "text", "text": first_words(i)}],
            "visible": first_words(i),
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Let me look at `module_{i}` first."},
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": "run_command",
                    "input": {"command": f"grep -n value src/module_{i}.py"},
                },
            ],
            "stop_reason": "tool_use",
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": f"exit 0\n{output}"}
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": edit_id,
                    "name": "propose_edit",
                    "input": {"path": f"src/module_{i}.py", "old": "x", "new": "y"},
                }
            ],
            "stop_reason": "tool_use",
        },
        {"type": "proposal", "id": i, "kind": "edit", "path": f"src/module_{i}.py", "lines": diff},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": edit_id, "content": "applied"}],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
        },
    ]


def write(directory: Path, workspace: str, tokens: int = 100_000) -> tuple[Path, int, int]:
    """A conversation of at least `tokens` tokens in the history store `directory`, for
    `workspace`: (its file, its number of turns, its size in tokens)."""
    conv = history.Conversation.create(directory, workspace)
    conv.close()
    size, turns = 0, 0
    with conv.path.open("a", encoding="utf-8") as fh:  # one write, not one fsync a record
        while size < tokens * CHARS_PER_TOKEN:
            for record in _turn(turns):
                line = json.dumps(record, ensure_ascii=False)
                size += len(line)
                fh.write(line + "\n")
            turns += 1
    return conv.path, turns, size // CHARS_PER_TOKEN
