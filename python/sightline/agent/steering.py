"""Steering a conversation: edit an earlier message, regenerate the last reply, fork into a
new conversation, and messages typed while a turn runs (queued; steered in at the next tool
boundary). The branches themselves are domain/branches.py; the history stays exactly what
was sent on each of them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from sightline.agent import checkpointing
from sightline.agent.state import SessionState
from sightline.agent.turn import Turn
from sightline.domain import history, narrator
from sightline.domain.errors import Refused

log = logging.getLogger(__name__)

# How long a regenerate waits for the turn it replaces to let go (its worker answers the
# withdrawn proposals, then ends); past it, the regenerate is said to have failed.
REPLACED_WAIT_S = 10.0
WITHDRAWN = "withdrawn: the user asked for another answer to this turn"


def is_prompt(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and record.get("type") == "message"
        and record.get("role") == "user"
        and isinstance(record.get("visible"), str)
    )


def last_prompt(records: list[dict[str, Any]]) -> int | None:
    """The index of the user's last message on the branch (what a regenerate answers)."""
    return next((i for i in range(len(records) - 1, -1, -1) if is_prompt(records[i])), None)


def writable(session: SessionState) -> history.Conversation:
    conv = session.conversation
    if conv is None or not conv.messages():
        raise Refused("sightline: nothing to steer yet: the conversation is empty")
    if conv.read_only:
        raise Refused("this conversation is open in another Neovim (read-only)")
    if session.provider.capabilities.runs_turns:
        raise Refused(
            "sightline: an ACP agent keeps its own conversation: it cannot be edited, "
            "regenerated or forked here (send a new message instead)"
        )
    return conv


def idle_or_refuse(session: SessionState) -> None:
    """A fork (edit, fork) needs the conversation at rest: no turn, nothing to decide."""
    if session.turn is None:
        return
    if session.gate.pending is not None:
        raise Refused(
            "sightline: a proposal waits for your decision: accept or reject it first "
            "(or :Sightline stop)"
        )
    raise Refused("sightline: a turn is running: wait for it or :Sightline stop first")


# -- edit ---------------------------------------------------------------------------------


def message_at(session: SessionState, row: int) -> dict[str, Any]:
    """The user's message drawn at transcript row `row`: its text and where it stands
    (`at`, for send's edit_at and fork's at). Refused when the row shows no message of
    the user's, or while the conversation is not at rest."""
    conv = writable(session)
    idle_or_refuse(session)
    key = session.transcript.user_at(row)
    at = next((i for i, r in enumerate(conv.records) if r is key), None)
    if at is None or not is_prompt(key):
        raise Refused("sightline: put the cursor on one of your messages (under ▍You) first")
    return {"text": key["visible"], "at": at}


def edit(session: SessionState, at: int) -> None:
    """Before the edited message is sent: a new branch holding what came before record
    `at`, shown (the transcript says the earlier version is kept). The caller holds the
    lock and checked that no turn runs."""
    conv = writable(session)
    idle_or_refuse(session)
    if not 0 <= at < len(conv.records) or not is_prompt(conv.records[at]):
        raise Refused("sightline: that message is no longer in this conversation")
    if conv.records[at].get("note"):
        raise Refused(
            "sightline: that message was a Change with Agent on a selection: "
            "select the text and change it again"
        )
    conv.fork(at, "edit")
    session.show_branch()


def switch(session: SessionState, branch: str) -> None:
    """Continue another branch of the open conversation (the history picker's branches)."""
    with session._lock:
        conv = session.conversation
        if conv is None or branch not in conv.tree.branches:
            raise Refused(f"sightline: this conversation has no branch {branch}")
        if conv.read_only:
            raise Refused("this conversation is open in another Neovim (read-only)")
        idle_or_refuse(session)
        conv.switch(branch)
        session.show_branch()
    session.ui.flush()


# -- regenerate -----------------------------------------------------------------------------


def regenerate(session: SessionState) -> Turn:
    """Send the request after the user's last message again, on a new branch (the earlier
    answer stays on its own). A turn still running is the answer being replaced: it is
    ended without a word (its waiting proposals withdrawn, the model told nothing: the
    new branch never holds it), and the new one starts once it let go."""
    with session._lock:
        conv = writable(session)
        old = session.turn
        if old is None:
            at = last_prompt(conv.records)
            if at is None:
                raise Refused("sightline: nothing to regenerate: no message of yours yet")
            if conv.records[at].get("note"):
                raise Refused(
                    "sightline: that reply was to a Change with Agent: run the change again"
                )
        elif old.scope is not None:
            raise Refused("sightline: this turn is a Change with Agent: stop it and change again")
        if old is not None:
            session.stop(WITHDRAWN, quiet=True)
        session._turn_ids += 1
        turn = Turn(session._turn_ids, session, regenerate=True)
        replaced = old.thread if old is not None else None
        turn.prelude = _branch_when_free(session, turn, replaced)
        session._begin(turn)
    session.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": False})
    session.start(turn)
    return turn


def _branch_when_free(
    session: SessionState, turn: Turn, replaced: threading.Thread | None
) -> Callable[[], None]:
    def prelude() -> None:
        # On the new worker: the replaced turn's worker may still be answering a withdrawn
        # proposal (in Neovim, through the loop this must not block).
        if replaced is not None and replaced is not threading.current_thread():
            replaced.join(REPLACED_WAIT_S)
            if replaced.is_alive():
                raise Refused("the replaced answer did not end in time; try again")
        with session._lock, turn.lock:
            if turn.cancelled():
                return
            conv = session.conversation
            assert conv is not None
            at = last_prompt(conv.records)
            if at is None:
                raise Refused("nothing to regenerate: no message of yours")
            conv.fork(at + 1, "regenerate")
            session.show_branch()
            # Its checkpoint (agent/checkpointing.py) belongs to the message it answers again.
            checkpointing.begin(session, turn, str(conv.records[at]["visible"]))
            turn.files.message = session.transcript.users()
        session.ui.flush()

    return prelude


# -- fork into a new conversation ---------------------------------------------------------


def fork(session: SessionState, at: int | None = None) -> dict[str, Any]:
    """A new conversation holding this one's active branch up to record `at` (the whole of
    it without): it becomes the current one; the other stays in the history, both can be
    continued. With `at` on one of the user's messages, that message is left out and its
    text given back (for the composer). The new one keeps the checkpoints of the turns it
    holds, so they can be rewound there. Callable from other code (a rewind that forks)."""
    with session._lock:
        conv = writable(session)
        idle_or_refuse(session)
        records = list(conv.records)
        text = None
        if at is not None:
            if not 0 <= at < len(records):
                raise Refused("sightline: that message is no longer in this conversation")
            if is_prompt(records[at]):
                text = records[at]["visible"]
            else:
                at += 1
            records = records[:at]
        below = _checkpoints_held(session, conv.id, records)
        title = history.title_of(conv.records)
        meta = next((r for r in records if r.get("type") == "meta"), {})
        new = history.Conversation.create(
            session.history_dir,
            session.workspace,
            provider=meta.get("provider", session.cfg.provider.name),
            model=meta.get("model", session.provider.model),
            forked_from=conv.id,
        )
        for record in records:
            if record.get("type") == "meta":
                continue
            new.append(_copied(record))
        new.append({"type": "forked", "from": conv.id, "title": title})
        try:
            store = session.checkpoints
            store.copy(conv.id, new.id, below, store.next_seq(conv.id) - 1)
        except OSError:
            # The fork itself stands (its history is written); its turns cannot be rewound.
            log.exception("the fork's checkpoints were not copied")
            session.transcript.add_note(*narrator.fork_without_checkpoints())
        conv.close()
        session.conversation = new
        session.show_branch()
    session.ui.flush()
    return {"path": str(new.path), "text": text}


def _checkpoints_held(session: SessionState, conversation: str, held: list[Any]) -> int:
    """The seq below which a fork holding the records `held` keeps the checkpoints: that of
    the first turn whose message it leaves out (all of them when it leaves none out)."""
    store = session.checkpoints
    ids = {id(r) for r in held}
    for cp in store.load(conversation):
        if cp.kind != "turn":
            continue
        key = session.transcript.user_key(cp.message) if cp.message else None
        if key is None or id(key) not in ids:
            return cp.seq
    return store.next_seq(conversation)


def _copied(record: dict[str, Any]) -> dict[str, Any]:
    """A record as a forked conversation holds it: the same, except what names branches or
    queued messages of the other file (kept in place as inert records, so that compaction
    counts of the records before them stay right)."""
    kind = record.get("type")
    if kind == "branch":
        return {"type": "branched", "why": record.get("why")}
    if kind in ("queued", "unqueued"):
        return {"type": "copied", "of": kind}
    return record


# -- queued and steered messages ----------------------------------------------------------


def queue(session: SessionState, text: str, steer: bool = False) -> int | None:
    """Keep a message typed while a turn runs ("queued, not sent" in the history); None
    when no turn runs (the caller sends it). `steer` delivers it at the next tool boundary."""
    with session._lock:
        if session.turn is None:
            return None
        if not text.strip():
            raise Refused("nothing to send: the message is empty")
        conv = session.conversation
        if conv is None or conv.read_only:
            raise Refused("a turn is already running: wait for it or :Sightline stop")
        qid = conv.queue(text)
        if steer:
            session._steer.add(qid)
    session.ui.schedule()
    return qid


def steer(session: SessionState) -> int:
    """`:Sightline steer`: the queued messages go in at the next tool boundary instead of
    after the turn; returns how many."""
    with session._lock:
        waiting = session.conversation.tree.queued if session.conversation else {}
        if not waiting:
            raise Refused("sightline: nothing is queued: type a message while a turn runs")
        if session.provider.capabilities.runs_turns:
            raise Refused(
                "sightline: an ACP agent takes no message during its turn: "
                "the queued one is sent as its next prompt"
            )
        session._steer.update(waiting)
    session.ui.schedule()
    return len(waiting)


def unqueue(session: SessionState, qid: int | None, how: str) -> str:
    """Take a queued message back (the last one without `qid`): cancelled, or `edited`
    (its text is returned for the composer). Returns its text."""
    with session._lock:
        conv = session.conversation
        waiting = conv.tree.queued if conv else {}
        if not waiting or conv is None:
            raise Refused("sightline: nothing is queued")
        key = qid if qid is not None else next(reversed(waiting))
        if key not in waiting:
            raise Refused("sightline: that message is no longer queued (it was sent)")
        text = waiting[key]
        if conv.read_only:
            waiting.pop(key)
        else:
            conv.unqueue(key, "cancelled" if how == "cancel" else "returned")
        session._steer.discard(key)
    session.ui.schedule()
    return text


def take_steered(session: SessionState) -> list[tuple[int, str]]:
    """The messages to deliver at this tool boundary (the caller records them). Called
    with the turn's lock held, so it takes no session lock (stop takes them the other way)."""
    conv = session.conversation
    if conv is None or not session._steer:
        return []
    out = [(q, t) for q, t in list(conv.tree.queued.items()) if q in session._steer]
    session._steer.difference_update(q for q, _ in out)
    for qid, _ in out:
        conv.unqueue(qid, "steered")
    return out


def drain(session: SessionState, status: str) -> None:
    """A turn ended: the oldest queued message is sent now (as its own turn); after a
    failure, every one goes back into the composer."""
    with session._lock:
        conv = session.conversation
        if session.turn is not None or conv is None or not conv.tree.queued:
            return
        if status not in ("done", "limit"):
            session.give_back_queued()
            return
        session.draining = True  # not idle in between: the next turn follows at once
        qid, text = next(iter(conv.tree.queued.items()))
        conv.unqueue(qid, "sent")
        session._steer.discard(qid)
    try:
        session.send_text(text)
    except Refused as err:
        log.info("queued message not sent: %s", err.message)
        session.transcript.add_note(*narrator.error(err.message))
        session.ui.to_composer([text])
    finally:
        session.draining = False
