"""The request table: unpack flat params, call the core, map errors to messages.

Every handler answers `{"ok": true, ...}` or `{"ok": false, "error": "<one line>"}`;
the Lua host turns that into `result` or `nil, message`.  Each method declares the shape of
its params (sightline.entry.params); `dispatch` checks them before the handler runs, so a handler
only sees declared params of the declared types, and bad input answers
`<method>: <param>: expected …`.  An internal error is a bug (tests/unit/test_fuzz_rpc.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sightline.agent import changes, rewind, steering
from sightline.agent.session import MODES
from sightline.core import MAIN_PANE, Core
from sightline.domain import extensions, scope, secrets
from sightline.domain.errors import Refused
from sightline.domain.mcp_config import ServerConfigError
from sightline.editor import msgtext
from sightline.editor.port import EditorError
from sightline.entry import extension_admin as admin
from sightline.entry import skills as skills_admin
from sightline.entry import slash as slash_run
from sightline.entry.params import (
    Choice,
    Directory,
    FilePath,
    Flag,
    Int,
    Invalid,
    Spec,
    Table,
    Text,
    check_params,
)
from sightline.gate import approvals
from sightline.gate.decisions import DECISIONS
from sightline.gate.proposals import compare_view, hunks_decided
from sightline.providers.base import ProviderError

log = logging.getLogger(__name__)

Handler = Callable[[Core, dict[str, Any]], Any]
METHODS: dict[str, Handler] = {}
SCHEMAS: dict[str, dict[str, Spec]] = {}

# Bounds far above real use that keep one request from holding the core for long.
MAX_PROMPT_CHARS = 1 << 22
MAX_LINE_CHARS = 1 << 20
MAX_NAME_CHARS = 255

# The workspace a request is about (the editor's cwd); absent = the session's.
WORKSPACE = Directory()
RANGE = {key: Int(min=0) for key in scope.RANGE_KEYS}


def method(name: str, /, **schema: Spec) -> Callable[[Handler], Handler]:
    """Register a handler with the shape of its params: name=Spec for each one it reads."""

    def register(fn: Handler) -> Handler:
        METHODS[name] = fn
        SCHEMAS[name] = schema
        return fn

    return register


@contextlib.contextmanager
def _named(name: str) -> Iterator[None]:
    """A refusal of the core names the method, as the params check does."""
    try:
        yield
    except Refused as err:
        raise Refused(f"{name}: {err.message}") from None


@method("core.ping")
def _ping(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"pid": os.getpid(), "sdk_loaded": core.preloaded.is_set()}


@method(
    "core.init",
    config=Table(),
    workspace=WORKSPACE,
    conversation=FilePath(),
    config_dir=Text(max_chars=4096),
)
def _init(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.config_dir = params.get("config_dir") or core.config_dir
    with _named("core.init"):
        core.configure(params.get("config", {}), params.get("workspace"))
    path = params.get("conversation")
    if path:
        try:
            core.history_open(path)
        except Refused as err:
            log.info("could not reopen %s: %s", path, err.message)
    # Sent as a notification by a starting Lua host: push the state (and a reopened
    # transcript) rather than answer.
    core.session.ui.flush()
    return {"status": core.session.status()}


@method("core.configure", config=Table())
def _configure(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    with _named("core.configure"):
        core.configure(params.get("config", {}))
    return {"status": core.session.status()}


@method(
    "agent.send",
    text=Text(required=True, max_chars=MAX_PROMPT_CHARS),
    workspace=WORKSPACE,
    edit_at=Int(min=0),
    steer=Flag(),
    **RANGE,
)
def _send(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return core.send(params)


# -- steering: edit, regenerate, fork, queued messages (agent/steering.py) -------------------


@method("agent.message_at", row=Int(min=0, required=True))
def _message_at(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return steering.message_at(core.session, params["row"])


@method("agent.regenerate")
def _regenerate(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    turn = steering.regenerate(core.session)
    return {"turn": turn.id, "status": core.session.status()}


@method("agent.fork", at=Int(min=0))
def _fork(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    forked = steering.fork(core.session, params.get("at"))
    return {**forked, "status": core.session.status()}


@method("agent.steer")
def _steer(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"count": steering.steer(core.session), "status": core.session.status()}


@method("agent.unqueue", id=Int(min=0), how=Choice(values=("cancel", "edit"), required=True))
def _unqueue(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    text = steering.unqueue(core.session, params.get("id"), params["how"])
    return {"text": text, "status": core.session.status()}


@method("agent.stop")
def _stop(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    stopped = core.session.stop()
    return {"stopped": stopped, "status": core.session.status()}


@method("agent.reset")
def _reset(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.reset()
    return {"status": core.session.status()}


@method("agent.compact")
def _compact(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    turn = core.session.compact()
    return {"turn": turn.id, "status": core.session.status()}


@method("images.paste")
def _paste(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return core.paste()


@method("agent.status")
def _status(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"status": core.session.status()}


@method("agent.model", name=Text(max_chars=MAX_NAME_CHARS))
def _model(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """Set the model (`name`), or answer the current one."""
    if params.get("name"):
        core.set_model(params["name"])
    provider = core.session.provider
    model = getattr(provider, "agent_model", None) or provider.model  # an ACP agent's own
    return {"model": model, "status": core.session.status()}


@method("agent.agent_mode", name=Text(max_chars=MAX_NAME_CHARS))
def _agent_mode(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """An ACP agent's own mode: set it (`name`), or list its modes and the current one."""
    return {**core.agent_mode(params.get("name")), "status": core.session.status()}


@method("agent.sessions")
def _agent_sessions(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """An ACP agent's own sessions of the workspace (session/list)."""
    return {"sessions": core.agent_sessions()}


@method("agent.resume", id=Text(required=True, max_chars=MAX_NAME_CHARS))
def _agent_resume(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """Resume one of them: its replayed history in the pane, the next message in it."""
    return {"status": core.agent_resume(params["id"])}


@method("provider.login", name=Text(required=True, max_chars=MAX_NAME_CHARS))
def _login(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """Start a provider's sign-in (copilot); it goes on in the pane."""
    core.login(params["name"])
    return {"started": True}


@method("provider.login_cancel")
def _login_cancel(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """`:Sightline stop` with no turn running: end a sign-in that waits for its code."""
    return {"cancelled": core.cancel_login()}


@method("agent.models", wait_ms=Int(min=0, max=5000))
def _models(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """The provider's models (cached; the first call fetches them on a worker thread and
    waits at most `wait_ms`)."""
    return core.models(params.get("wait_ms", 0) / 1000)


@method("agent.mode", mode=Choice(required=True, values=MODES))
def _mode(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.set_mode(params["mode"])
    return {"status": core.session.status()}


@method("agent.autoaccept", value=Flag(required=True))
def _autoaccept(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.autoaccept = params["value"]
    core.session.ui.schedule()
    return {"status": core.session.status()}


@method(
    "agent.decide",
    decision=Choice(required=True, values=DECISIONS),
    reason=Text(max_chars=MAX_LINE_CHARS),
)
def _decide(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.gate.decide(params["decision"], params.get("reason", ""))
    return {"status": core.session.status()}


@method(
    "agent.hunk",
    proposal=Int(required=True, min=1),
    hunk=Int(min=0),
    decision=Choice(required=True, values=DECISIONS),
    reason=Text(max_chars=MAX_LINE_CHARS),
)
def _hunk(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """Decide one hunk of the edit shown inline (no `hunk`: every undecided one)."""
    decisions = core.session.gate.decide_hunk(
        params["proposal"], params.get("hunk"), params["decision"], params.get("reason", "")
    )
    out: dict[str, Any] = {"decisions": decisions, "status": core.session.status()}
    compare = hunks_decided(core.session, params["proposal"], decisions)
    if compare is not None:
        out["compare"] = compare  # the open compare view, as it shows these decisions
    return out


@method("agent.compare")
def _compare(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"proposal": compare_view(core.session)}


@method("checkpoints.list")
def _checkpoints_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"checkpoints": rewind.choices(core.session)}


@method("checkpoints.rewind", seq=Int(min=1), row=Int(min=0), fork=Flag())
def _checkpoints_rewind(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """Rewind to before checkpoint `seq`, or the turn of transcript row `row`; with `fork`,
    in a new conversation forked before that turn."""
    if params.get("seq") is None and params.get("row") is None:
        raise Refused("checkpoints.rewind: seq or row is required")
    seq = params.get("seq") or rewind.at_row(core.session, params["row"])
    turn, text = rewind.start(core.session, seq, fork=bool(params.get("fork")))
    return {"turn": turn.id, "text": text, "status": core.session.status()}


@method("changes.review", ref=Text(max_chars=MAX_NAME_CHARS))
def _changes_review(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """The hunks of this conversation's changes (or since git ref `ref`), as quickfix items;
    their reverts are then offered file by file."""
    turn, items = changes.start(core.session, params.get("ref") or None)
    return {"items": items, "turn": turn.id if turn else None}


@method("history.list")
def _history_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": core.history_list()}


@method("history.open", path=FilePath(required=True), branch=Text(max_chars=20, non_empty=True))
def _history_open(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"status": core.history_open(params["path"], params.get("branch"))}


@method("history.preview", path=FilePath(required=True))
def _history_preview(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"lines": core.history_preview(params["path"])}


@method(
    "history.rename",
    path=FilePath(required=True),
    title=Text(max_chars=MAX_NAME_CHARS, non_empty=True, required=True),
)
def _history_rename(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"title": core.history_rename(params["path"], params["title"])}


@method("history.delete", path=FilePath(required=True))
def _history_delete(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.history_delete(params["path"])
    return {}


@method("chats.list")
def _chats_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """The open conversations, one a pane (`:Sightline chats`)."""
    return {"chats": core.chats()}


@method("transcript.full")
def _transcript(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"transcript": core.session.transcript.full()}


def _workspace(core: Core, params: dict[str, Any]) -> str:
    """The workspace a request is about: the editor's, sent along, else the session's."""
    value = params.get("workspace")
    return value if isinstance(value, str) else core.session.workspace


@method("complete.warm", workspace=WORKSPACE)
def _complete_warm(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.slash.warm()  # (its reader of prompt files, parked until the first `/`)
    return core.completion.warm(_workspace(core, params))


@method(
    "complete.candidates",
    before=Text(max_chars=MAX_LINE_CHARS),
    token=Text(max_chars=MAX_LINE_CHARS),
    room=Int(min=1, max=100_000),
    workspace=WORKSPACE,
    row=Int(min=0),
    config_dir=Text(max_chars=4096),
)
def _complete_candidates(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """`before` (the line up to the cursor) or `token` (the text after `@`); `room`, the
    screen cells from the cursor to the right edge, fits the menu in.  `cpu_ms`, the
    core's CPU time for the answer, lets a benchmark tell work from waiting for a CPU."""
    started = time.thread_time()
    before, token = params.get("before"), params.get("token")
    if before is None and token is None:
        raise Refused("complete.candidates: expected `before` or `token` (a string)")
    result = core.completion.candidates(
        _workspace(core, params),
        before=before,
        token=token,
        room=params.get("room"),
        row=params.get("row"),
        config_dir=params.get("config_dir"),
    )
    return {**result, "cpu_ms": (time.thread_time() - started) * 1000}


@method(
    "slash.run",
    text=Text(required=True, max_chars=MAX_PROMPT_CHARS),
    workspace=WORKSPACE,
    config_dir=Text(max_chars=4096),
    file=Text(max_chars=4096),
    inputs=Table(),
    **RANGE,
)
def _slash_run(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """A message sent from the composer that starts with `/` (sightline.slash.run)."""
    return slash_run.run(core, params)


@method("extensions.list", workspace=WORKSPACE)
def _extensions_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    statuses = extensions.status(_workspace(core, params))
    return {
        "extensions": [s.to_dict() for s in statuses],
        "listing": admin.status_chunks(statuses),
    }


EXTENSION_NAME = Text(required=True, max_chars=MAX_NAME_CHARS)


@method("extensions.install", path=FilePath(required=True), force=Flag(), workspace=WORKSPACE)
def _extensions_install(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    with _extension_errors(core):
        # A relative path is the user's, typed in the editor: relative to its workspace.
        path = Path(_workspace(core, params)) / Path(params["path"]).expanduser()
        installed = extensions.install(path, force=params.get("force") is True)
    return {"message": admin.installed(installed), "extension": installed.status().to_dict()}


@method("extensions.uninstall", name=EXTENSION_NAME, workspace=WORKSPACE)
def _extensions_uninstall(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    name = params["name"]
    with _extension_errors(core):
        removed = extensions.uninstall(name, workspace=_workspace(core, params))
    return {"message": admin.uninstalled(name, removed)}


def _switch(core: Core, params: dict[str, Any], enabled: bool) -> dict[str, Any]:
    workspace = Path(_workspace(core, params))
    scoped = params.get("workspace_scope") is True
    with _extension_errors(core):
        result = extensions.set_enabled(
            params["name"], enabled, workspace=workspace, workspace_scope=scoped
        )
    return {
        "message": admin.switched(result, enabled, workspace, scoped),
        "extension": result.status().to_dict(),
    }


SWITCH = {"name": EXTENSION_NAME, "workspace": WORKSPACE, "workspace_scope": Flag()}


@method("extensions.enable", **SWITCH)
def _extensions_enable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return _switch(core, params, True)


@method("extensions.disable", **SWITCH)
def _extensions_disable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return _switch(core, params, False)


@contextlib.contextmanager
def _extension_errors(core: Core) -> Iterator[None]:
    """ExtensionError is the user's one-line message; the completion list is re-read
    after any change, even a half-done one."""
    try:
        yield
    except extensions.ExtensionError as err:
        raise Refused(str(err)) from None
    except OSError as err:
        where = f": {err.filename}" if err.filename else ""
        raise Refused(f"{err.strerror or err}{where}") from None
    finally:
        core.completion.forget_extensions()


MCP_NAME = Text(required=True, max_chars=MAX_NAME_CHARS)


@method("skills.list", workspace=WORKSPACE)
def _skills_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"skills": skills_admin.listing(_workspace(core, params), core.config_dir)}


@method("skills.enable", name=MCP_NAME, workspace=WORKSPACE)
def _skills_enable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    ws = _workspace(core, params)
    return {"message": skills_admin.switch(ws, core.config_dir, params["name"], True)}


@method("skills.disable", name=MCP_NAME, workspace=WORKSPACE)
def _skills_disable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    ws = _workspace(core, params)
    return {"message": skills_admin.switch(ws, core.config_dir, params["name"], False)}


@method("mcp.list", workspace=WORKSPACE)
def _mcp_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"servers": core.mcp.status(_workspace(core, params))}


@contextlib.contextmanager
def _mcp_errors() -> Iterator[None]:
    try:
        yield
    except ServerConfigError as err:
        raise Refused(f"sightline: {err}") from None


@method("mcp.enable", name=MCP_NAME, workspace=WORKSPACE)
def _mcp_enable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    with _mcp_errors():
        return {"message": core.mcp.set_enabled(params["name"], True, _workspace(core, params))}


@method("mcp.disable", name=MCP_NAME, workspace=WORKSPACE)
def _mcp_disable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    with _mcp_errors():
        return {"message": core.mcp.set_enabled(params["name"], False, _workspace(core, params))}


@method("mcp.restart", name=MCP_NAME, workspace=WORKSPACE)
def _mcp_restart(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    with _mcp_errors():
        return {"message": core.mcp.restart(params["name"], _workspace(core, params))}


MAX_ERROR_CHARS = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _refusal(text: str) -> dict[str, Any]:
    """The answer for a refused request: one line (a name may hold a newline), bounded,
    without the key."""
    line = _CONTROL.sub(lambda m: repr(m.group())[1:-1], secrets.redact(text))
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    return {"ok": False, "error": line}


def dispatch(core: Core, name: str, args: list[Any]) -> dict[str, Any]:
    handler = METHODS.get(name)
    if handler is None:
        return _refusal(f"unknown request {name!r}")
    raw = args[0] if args else {}
    if isinstance(raw, list | tuple) and not raw:
        raw = {}  # an empty Lua table is sent as an empty list
    if not isinstance(raw, dict):
        return _refusal(f"{name}: expected a table of named params")
    # Every request may name the pane (the tab page's conversation) it came from; none is
    # the first pane's, the one a single-pane user ever has.
    pane = raw.get("pane", MAIN_PANE)
    if "pane" in raw:
        raw = {k: v for k, v in raw.items() if k != "pane"}
    if isinstance(pane, bool) or not isinstance(pane, int) or not 1 <= pane <= 1 << 20:
        return _refusal(f"{name}: pane: expected a pane number (a positive integer)")
    try:
        params = check_params(SCHEMAS[name], raw)
    except Invalid as err:
        return _refusal(f"{name}: {err}")
    try:
        with core.bound(pane):
            result = handler(core, params)
    except (Refused, ProviderError) as err:
        return _refusal(err.message)
    except EditorError as err:  # Neovim refused a call; its text is safe to show
        return _refusal(f"{name}: {err}")
    except Exception as err:
        log.error("request %s failed:\n%s", name, traceback.format_exc())
        return _refusal(
            f"internal error in {name}: {type(err).__name__}: {err} (details in the log)"
        )
    out = {"ok": True}
    if isinstance(result, dict):
        out.update(result)
    return msgtext.safe(out)  # type: ignore[no-any-return]


# -- kept approvals (gate/approvals.py) -----------------------------------------------------


def _conversation_id(core: Core) -> str | None:
    conv = core.session.conversation
    return conv.id if conv else None


@method("approvals.list", workspace=WORKSPACE)
def _approvals_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    rules = core.session.approvals.rules(_workspace(core, params), _conversation_id(core))
    return {"lines": approvals.listing(rules)}


@method("approvals.revoke", number=Int(required=True, min=1), workspace=WORKSPACE)
def _approvals_revoke(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    rule = core.session.approvals.revoke(
        _workspace(core, params), _conversation_id(core), params["number"]
    )
    return {"message": f"sightline: revoked: {rule.effect} {rule.shown}"}
