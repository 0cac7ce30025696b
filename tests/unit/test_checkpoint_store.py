"""The checkpoint store: each text kept once by its hash; past its cap the oldest checkpoints
are dropped (and said so in the transcript), the texts nothing needs any more deleted."""

from __future__ import annotations

import os
import threading
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
        change = checkpointing.Pending(str(tmp_path / "f"), "f", None, data, True)
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


def test_a_prune_by_another_core_never_deletes_a_text_a_checkpoint_is_about_to_name(
    tmp_path: Path,
) -> None:
    """Two cores on one store, interleaved at the worst point: core A found its text in the
    store already (the ACP scan kept it long ago, no checkpoint names it yet) and is about
    to append the checkpoint naming it, when core B, past the cap, prunes. B waits for A's
    lock; after it, A's text is still there and A's checkpoint restorable."""
    directory = tmp_path / "cp"
    a, b = Store(directory, max_bytes=1500), Store(directory, max_bytes=1 << 20)
    kept = a.put(b"x" * 100)  # the oldest blob, referenced by nothing yet
    os.utime(a._blob(kept), (1, 1))
    old = b.put(b"y" * 2000)
    b.save(
        "conv-b", Checkpoint(1, "turn", "t", now() - 60, (FileChange("/y", "y", None, old, True),))
    )
    small = b.put(b"z" * 10)
    b.max_bytes = 1500  # the next checkpoint B writes passes the cap

    in_window, b_waits_or_ran = threading.Event(), threading.Event()
    b.on_wait = b_waits_or_ran.set

    def prune() -> None:
        assert in_window.wait(10)
        # B's own turn ends: its checkpoint written, the cap enforced.
        b.save(
            "conv-b", Checkpoint(2, "turn", "t", now(), (FileChange("/z", "z", None, small, True),))
        )
        b_waits_or_ran.set()

    pruner = threading.Thread(target=prune)
    pruner.start()

    def make(seq: int) -> Checkpoint:
        assert a.has(kept)  # what checkpointing checks for a text the scan kept
        in_window.set()
        assert b_waits_or_ran.wait(10)  # B is blocked on the lock (or, unlocked, pruned)
        return Checkpoint(seq, "turn", "t", now(), (FileChange("/x", "x", kept, None, True),))

    a.write("conv-a", make)
    pruner.join(10)
    assert not pruner.is_alive()
    assert a.get(kept) == b"x" * 100  # A's checkpoint still has its text
    assert [cp.seq for cp in a.load("conv-a")] == [1]
    assert b.get(old) is None  # B's prune did run: the text only its dropped #1 named is gone
    assert [cp.seq for cp in b.load("conv-b")] == [2]
