"""Compaction as it runs: `:Sightline compact` as a turn of its own, and the automatic one
the turn loop asks for near the context window (what is asked and recorded: compaction.py)."""

from __future__ import annotations

import logging
import traceback

from sightline.agent import compaction
from sightline.agent.state import SessionState
from sightline.agent.turn import Turn
from sightline.domain import narrator
from sightline.providers.base import ProviderError, Reply, Usage

log = logging.getLogger(__name__)


def run(session: SessionState, turn: Turn) -> None:
    """`:Sightline compact`'s worker thread: summarise the whole conversation so far."""
    status = "done"
    try:
        session.provider.prepare()
        assert session.conversation is not None
        if not _compact(session, turn, len(session.conversation.records)):
            status = "stopped"
    except ProviderError as err:
        status = "error"
        if not turn.cancelled():
            session.transcript.add_note(*narrator.not_compacted(err.message))
    except Exception as err:
        status = "error"
        log.error("compaction failed:\n%s", traceback.format_exc())
        if not turn.cancelled():
            session.transcript.add_note(*narrator.internal_error(err))
    finally:
        session.finish(turn, status)


def auto(session: SessionState, turn: Turn) -> None:
    """The conversation nears the context window: summarise what came before the
    current prompt. A failure is said and the turn goes on uncompacted."""
    assert session.conversation is not None
    records = session.conversation.records
    upto = compaction.current_prompt(records)
    if upto is None or not compaction.summarisable(records[:upto]):
        return
    try:
        _compact(session, turn, upto)
    except ProviderError as err:
        if not turn.cancelled():
            session.transcript.add_note(*narrator.compaction_skipped(err.message))
            session.accounts.last_context = 0  # not tried again before the next reply
            session.ui.schedule()


def _compact(session: SessionState, turn: Turn, upto: int) -> bool:
    """Summarise records[:upto] by a model request and record the compaction; False
    when stopped (then nothing is recorded)."""
    assert session.conversation is not None
    records = list(session.conversation.records)
    replaced = compaction.summarisable(records[:upto])
    session.transcript.add_note(*narrator.compacting())
    session.ui.flush()
    reply: Reply | None = None
    for event in session.provider.stream(compaction.request(records[:upto]), turn.cancelled):
        if turn.cancelled():
            return False
        if isinstance(event, Usage):
            session.accounts.streaming(event)
        elif isinstance(event, Reply):
            reply = event
    if reply is None or turn.cancelled():
        return False
    session.accounts.account(reply)
    summary = compaction.summary_of(reply)
    if not summary:
        raise ProviderError("The model answered the summarising request with no text.")
    with turn.lock:
        if turn.cancelled():
            return False
        keep = len(session.conversation.records) - upto
        session.record(compaction.record(summary, keep, replaced))
    session.accounts.last_context = 0
    session.transcript.add_note(*narrator.compacted(replaced))
    session.ui.schedule()
    return True
