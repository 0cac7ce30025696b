"""History files as the store writes them, and ones each broken in its own way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORRUPT: dict[str, list[dict[str, Any]]] = {
    "created is not a number": [
        {"type": "meta", "id": "c1", "workspace": "WS", "created": "yesterday"},
        {"type": "message", "role": "user", "content": "q", "visible": "q"},
    ],
    "blank first prompt": [
        {"type": "meta", "id": "c2", "workspace": "WS", "created": 2},
        {"type": "message", "role": "user", "content": "  ", "visible": "  \n"},
        {"type": "message", "role": "assistant", "content": "string reply"},
    ],
    "bad blocks": [
        {"type": "meta", "id": "c3", "workspace": "WS", "created": 3},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "text", "text": "ok"}],
            "visible": "ok",
        },
        {"type": "message", "role": "assistant", "content": ["not a block"]},
        {"type": "message", "role": "assistant", "content": 42},
        {"type": "message", "role": "robot", "content": "who"},
        {"type": "proposal", "lines": "diff"},
        {"type": "plan", "steps": [1, 2]},
        {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "fine"}]},
    ],
}


def write_conv(directory: Path, name: str, records: list[dict[str, Any]], ws: str) -> Path:
    path = directory / f"{name}.jsonl"
    text = "\n".join(json.dumps(r).replace('"WS"', json.dumps(ws)) for r in records)
    path.write_text(text + "\n")
    return path
