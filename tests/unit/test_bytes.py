"""Bytes that are not UTF-8: lossless for the buffer, safe on the wire.

pynvim hands such bytes over as surrogate escapes; JSON encoders and HTTP refuse those, so a
single one used to make every later send fail. The buffer keeps its bytes exactly (Change with
Agent replaces exactly the selected bytes), the request carries U+FFFD, the history the
originals, and the conversation goes on."""

from __future__ import annotations

import json
from pathlib import Path

from sightline.domain import history
from tests.fakeapi import fake_api

__all__ = ["fake_api"]


def test_history_round_trips_surrogates_exactly(tmp_path: Path) -> None:
    conv = history.Conversation.create(tmp_path, "/ws")
    record = {"type": "message", "role": "user", "content": "x\udcff\u00e9", "visible": "x"}
    conv.append(record)
    conv.close()
    line = conv.path.read_text(encoding="utf-8").splitlines()[-1]
    assert "\\udcff" in line and "\u00e9" in line
    assert json.loads(line) == record
