"""The checkpoint store: each text kept once by its hash; past its cap the oldest checkpoints
are dropped (and said so in the transcript), the texts nothing needs any more deleted."""

from __future__ import annotations

from pathlib import Path

from sightline.agent import checkpointing
from sightline.agent.session import Session
from sightline.domain.checkpoints import Checkpoint, FileChange, Store, digest, now
from tests.effective_config import core_config
from tests.fake_editor import FakeEditor


def test_a_text_is_kept_once_whatever_holds_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "cp")
    h = store.put(b"same text\n")
    assert store.put(b"same text\n") == h == digest(b"same text\n")
    assert [p.name for p in (tmp_path / "cp" / "blobs").rglob("*") if p.is_file()] == [h]
    assert store.size() == len(b"same text\n")
    assert store.get(h) == b"same text\n" and store.get("?") is None


def test_past_the_cap_the_oldest_checkpoints_are_dropped_and_the_pane_says_so(
    tmp_path: Path,
) -> None:
    session = Session(FakeEditor(buffers={}), core_config(), str(tmp_path), [], tmp_path / "h")
    conv = session._conversation().id
    store = session.checkpoints
    cap_mb = 1
    session.cfg = core_config(checkpoints={"max_mb": cap_mb})
    big = [bytes([65 + i]) * (400 << 10) for i in range(4)]  # 400 KiB each
    for i, data in enumerate(big):
        store.max_bytes = session.cfg.checkpoints_max_bytes
        h = store.put(data)
        change = FileChange(str(tmp_path / "f"), "f", None, h, True)
        checkpointing.save(session, f"turn {i + 1}", "turn", [change])
    kept = [cp.seq for cp in store.load(conv)]
    assert kept == [3, 4]  # 2 × 400 KiB fit in 1 MB; the oldest went
    assert store.get(digest(big[0])) is None and store.get(digest(big[3])) == big[3]
    assert store.size() <= 1 << 20
    said = "\n".join(session.transcript.lines)
    assert "the oldest checkpoint was dropped to keep the checkpoint store under 1 MB" in said
    # A seq is never reused, even for dropped checkpoints.
    assert store.next_seq(conv) == 5


def test_a_damaged_manifest_line_is_skipped(tmp_path: Path) -> None:
    store = Store(tmp_path / "cp")
    cp = Checkpoint(1, "turn", "t", now(), (FileChange("/x", "x", None, None, False),))
    store.append("c", cp.to_json())
    with (tmp_path / "cp" / "c.jsonl").open("a") as fh:
        fh.write('{"type": "checkpoint", "seq": "two"}\n{"torn')
    assert store.load("c") == [cp]
