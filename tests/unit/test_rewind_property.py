"""The rewind's one rule, over random turns: after any rewind every file either equals its
checkpoint (its state before the chosen turn) or holds what the user typed since, untouched;
no byte the user typed is lost. Turns write through the gate (edits and new files) and as an
ACP agent writing files itself; the user edits buffers and files between turns. The rewind
is the real one (agent/rewind.py) over the in-memory editor, its questions answered as a
user who takes the defaults: their own text kept, the new files deleted. Rewinding the rewind
then brings back every file as it was before it."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sightline.agent import checkpointing, rewind, steering
from sightline.agent.session import Session
from sightline.agent.turn import Turn
from sightline.domain import diff
from sightline.domain.checkpoints import digest
from sightline.tools import write
from tests.effective_config import core_config
from tests.fake_editor import FakeEditor

GATE_FILES = ("a.txt", "b.txt", "c.txt")
ACP_FILES = ("hook.sh", "gen.txt")  # written by the agent itself, never opened in Neovim

text = st.lists(st.sampled_from(["x", "y", "zz", "", "λ"]), min_size=1, max_size=4).map(
    lambda lines: "\n".join(lines) + "\n"
)
gate_write = st.tuples(st.just("gate"), st.sampled_from(GATE_FILES), text)
acp_write = st.tuples(st.just("acp"), st.sampled_from(ACP_FILES), st.none() | text)
turn = st.lists(gate_write | acp_write, min_size=1, max_size=3)
user_edit = st.tuples(st.sampled_from(GATE_FILES + ACP_FILES), text)
step = st.tuples(turn, st.lists(user_edit, max_size=2))


@dataclass
class World:
    ws: Path
    fake: FakeEditor
    session: Session

    def state(self, rel: str) -> bytes | None:
        """What the user sees: a buffer's unsaved text, else the file."""
        path = str(self.ws / rel)
        found = self.fake.buffer_of(path)
        if found is not None and found[1].modified:
            return diff.buffer_text(found[1].lines).encode()
        return (self.ws / rel).read_bytes() if (self.ws / rel).exists() else None

    def states(self) -> dict[str, bytes | None]:
        return {rel: self.state(rel) for rel in GATE_FILES + ACP_FILES}


def world(root: Path) -> World:
    ws = root / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / "hook.sh").write_text("#!/bin/sh\n")
    fake = FakeEditor(buffers={})
    session = Session(fake, core_config(autoaccept=True), str(ws), [], root / "history")
    session._conversation()
    return World(ws, fake, session)


def play_turn(w: World, n: int, writes: list[tuple[str, str, str | None]]) -> set[str]:
    t = Turn(n, w.session)
    checkpointing.begin(w.session, t, f"turn {n}")
    # Its message, as a send records and shows it (a rewind that forks forks before it).
    user = {"type": "message", "role": "user", "content": f"turn {n}", "visible": f"turn {n}"}
    w.session.record(user)
    w.session.transcript.add_user(user["visible"], key=user)
    w.session.record({"type": "message", "role": "assistant", "content": "ok"})
    touched = set()
    for how, rel, body in writes:
        path = w.ws / rel
        if how == "gate":
            assert body is not None
            now = w.state(rel)
            if now is None:
                write.propose_create(t, {"path": rel, "content": body})
            elif now.strip(b"\n") and now.decode() != body:
                old = now.decode().removesuffix("\n")
                write.propose_edit(t, {"path": rel, "old_string": old, "new_string": body[:-1]})
            else:
                continue
        else:
            before = path.read_bytes() if path.exists() else None
            if body is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(body)
            after = path.read_bytes() if path.exists() else None
            if before == after:
                continue
            store = w.session.checkpoints  # what the ACP scan keeps of each file it hashes
            was = None if before is None else store.put(before)
            now_h = None if after is None else store.put(after)
            t.files.wrote_itself(str(path), rel, was, now_h)
        touched.add(rel)
    checkpointing.finish(w.session, t)
    return touched


def user_types(w: World, rel: str, body: str) -> bool:
    path = str(w.ws / rel)
    found = w.fake.buffer_of(path)
    if found is not None:
        if diff.buffer_text(found[1].lines) == body:
            return False
        found[1].lines = body[:-1].split("\n")
        found[1].modified = True  # typed, not saved
    else:
        if w.state(rel) == body.encode():
            return False
        (w.ws / rel).write_text(body)
    return True


def rewind_as_a_user(w: World, seq: int, fork: bool = False) -> None:
    """Start the rewind and answer its questions with the defaults a user sees: deleting the
    new files is accepted, every proposal to overwrite their own text is rejected."""
    rewind.start(w.session, seq, fork)
    deadline = time.monotonic() + 20
    while w.session.turn is not None:
        assert time.monotonic() < deadline, "the rewind did not end"
        pending = w.session.gate.pending
        if pending is not None:
            w.session.gate.decide("accept" if pending.kind == "delete" else "reject")
        time.sleep(0.001)


@settings(max_examples=40, deadline=None)
@example(  # the user typed in the buffer, ending on the very text the turn had saved
    steps=[([("gate", "a.txt", "x\n")], [("a.txt", "x\nx\n"), ("a.txt", "x\n")])],
    pick=0,
    fork=False,
)
@example(  # the user typed between two turns that both changed the file
    steps=[
        ([("gate", "a.txt", "x\n")], []),
        ([("gate", "b.txt", "y\n")], [("a.txt", "zz\n")]),
        ([("gate", "a.txt", "y\n")], []),
    ],
    pick=0,
    fork=True,
)
@given(
    steps=st.lists(step, min_size=1, max_size=4), pick=st.integers(min_value=0), fork=st.booleans()
)
def test_after_any_rewind_every_file_is_its_checkpoint_or_holds_the_users_later_edits(
    steps: list[tuple[list[tuple[str, str, str | None]], list[tuple[str, str]]]],
    pick: int,
    fork: bool,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        w = world(Path(tmp))
        before_turn: dict[int, dict[str, bytes | None]] = {}  # checkpoint seq -> files
        touched: dict[int, set[str]] = {}
        edited_after: dict[str, int] = {}  # file -> the last checkpoint seq the user edited after
        seq = 0
        for n, (writes, edits) in enumerate(steps, 1):
            snapshot = w.states()
            changed = play_turn(w, n, writes)
            cps = w.session.checkpoints.load(w.session._conversation().id)
            if cps and cps[-1].seq > seq:
                seq = cps[-1].seq
                before_turn[seq], touched[seq] = snapshot, changed
            for rel, body in edits:
                if user_types(w, rel, body) and seq:
                    edited_after[rel] = seq
        if not before_turn:
            return
        chosen = sorted(before_turn)[pick % len(before_turn)]
        undone = set().union(*(touched[s] for s in touched if s >= chosen))
        pre = w.states()
        old = w.session._conversation().id
        cp = next(c for c in w.session.checkpoints.load(old) if c.seq == chosen)
        fork = fork and cp.kind == "turn"
        rewind_as_a_user(w, chosen, fork)
        post = w.states()
        conv = w.session._conversation()
        prompts = [r["visible"] for r in conv.records if steering.is_prompt(r)]
        if fork:  # a new conversation, without the chosen turn and the later ones
            assert conv.id != old
            assert prompts == [f"turn {n}" for n in range(1, len(steps) + 1)][: cp.message - 1]
        else:
            assert conv.id == old and len(prompts) == len(steps)
        for rel in GATE_FILES + ACP_FILES:
            if rel not in undone:
                assert post[rel] == pre[rel], f"{rel} was not rewound, yet it changed"
                continue
            # Its checkpoint: the state before the first undone turn that changed it (what
            # the user typed before that turn is in it).
            first = min(s for s in touched if s >= chosen and rel in touched[s])
            if edited_after.get(rel, 0) >= first:
                assert post[rel] == pre[rel], f"{rel}: the user's text was overwritten"
            else:
                assert post[rel] == before_turn[first][rel], f"{rel} is not its checkpoint"
                if edited_after.get(rel, 0) < chosen:  # untouched by the user: as before
                    assert post[rel] == before_turn[chosen][rel]

        # The rewind is a checkpoint: rewinding it brings back what it undid.
        kept = w.session.checkpoints.load(w.session._conversation().id)
        if fork:  # the fork keeps the earlier turns' checkpoints, and gets the rewind's
            assert [c.seq for c in kept if c.kind == "turn"] == [
                s for s in before_turn if s < chosen
            ]
        if kept and kept[-1].kind == "rewind":
            last = kept[-1]
            rewind_as_a_user(w, last.seq)
            assert w.states() == pre


def test_digest_is_the_acp_scans_hash() -> None:
    from sightline.providers.acp import snapshot

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f")
        Path(path).write_bytes(b"some bytes\n")
        assert snapshot._digest(path) == digest(b"some bytes\n")
