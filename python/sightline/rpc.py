"""The request table: unpack flat params, call the core, map errors to messages.

Every handler answers `{"ok": true, ...}` or `{"ok": false, "error": "<one line>"}`;
the Lua host turns that into `result` or `nil, message`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sightline import extension_admin as admin
from sightline import extensions, secrets
from sightline.agent.proposals import compare_view
from sightline.core import Core
from sightline.errors import Refused
from sightline.providers.base import ProviderError

log = logging.getLogger(__name__)

Handler = Callable[[Core, dict[str, Any]], Any]
METHODS: dict[str, Handler] = {}


def method(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        METHODS[name] = fn
        return fn

    return register


def _str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise Refused(f"{key}: expected a string")
    return value


@method("core.ping")
def _ping(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    provider = sys.modules.get("sightline.providers.anthropic_api")
    loaded = provider is not None and provider.SDK_IMPORTED.is_set()
    return {"pid": os.getpid(), "sdk_loaded": loaded}


@method("core.init")
def _init(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.configure(params.get("config") or {}, params.get("workspace"))
    path = params.get("conversation")
    if isinstance(path, str) and path:
        try:
            core.history_open(path)
        except Refused as err:
            log.info("could not reopen %s: %s", path, err.message)
    # Sent as a notification by a starting Lua host: push the state (and a reopened
    # transcript) rather than answer.
    core.session.ui.flush()
    return {"status": core.session.status()}


@method("core.configure")
def _configure(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.configure(params.get("config") or {})
    return {"status": core.session.status()}


@method("agent.send")
def _send(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return core.send(params)


@method("agent.stop")
def _stop(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    stopped = core.session.stop()
    return {"stopped": stopped, "status": core.session.status()}


@method("agent.reset")
def _reset(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.reset()
    return {"status": core.session.status()}


@method("agent.status")
def _status(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"status": core.session.status()}


@method("agent.mode")
def _mode(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    core.session.set_mode(_str(params, "mode"))
    return {"status": core.session.status()}


@method("agent.autoaccept")
def _autoaccept(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    value = params.get("value")
    if not isinstance(value, bool):
        raise Refused("autoaccept: expected true or false")
    core.session.autoaccept = value
    core.session.ui.schedule()
    return {"status": core.session.status()}


@method("agent.decide")
def _decide(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    reason = params.get("reason") or ""
    core.session.gate.decide(_str(params, "decision"), str(reason))
    return {"status": core.session.status()}


@method("agent.compare")
def _compare(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"proposal": compare_view(core.session)}


@method("history.list")
def _history_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": core.history_list()}


@method("history.open")
def _history_open(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"status": core.history_open(_str(params, "path"))}


@method("resolve.python")
def _resolve_python(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    from sightline import pyresolve

    try:
        return pyresolve.resolve_request(params)
    except pyresolve.ResolveError as err:
        raise Refused(str(err)) from None


@method("transcript.full")
def _transcript(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return {"transcript": core.session.transcript.full()}


def _workspace(core: Core, params: dict[str, Any]) -> str:
    """The workspace a request is about: the editor's, sent along, else the session's."""
    value = params.get("workspace")
    return value if isinstance(value, str) and value else core.session.workspace


@method("complete.warm")
def _complete_warm(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return core.completion.warm(_workspace(core, params))


@method("complete.candidates")
def _complete_candidates(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    """`before` (the line up to the cursor) or `token` (the text after `@`).  `cpu_ms`, the
    core's CPU time for the answer, lets a benchmark tell work from waiting for a CPU."""
    started = time.thread_time()
    before, token = params.get("before"), params.get("token")
    if not isinstance(before, str) and not isinstance(token, str):
        raise Refused("complete.candidates: expected `before` or `token` (a string)")
    result = core.completion.candidates(
        _workspace(core, params),
        before=before if isinstance(before, str) else None,
        token=token if isinstance(token, str) else None,
    )
    return {**result, "cpu_ms": (time.thread_time() - started) * 1000}


@method("extensions.list")
def _extensions_list(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    statuses = extensions.status(_workspace(core, params))
    return {
        "extensions": [s.to_dict() for s in statuses],
        "listing": admin.status_chunks(statuses),
    }


@method("extensions.install")
def _extensions_install(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    # A relative path is the user's, typed in the editor: relative to its workspace.
    path = Path(_workspace(core, params)) / Path(_str(params, "path")).expanduser()
    with _extension_errors(core):
        installed = extensions.install(path, force=params.get("force") is True)
    return {"message": admin.installed(installed), "extension": installed.status().to_dict()}


@method("extensions.uninstall")
def _extensions_uninstall(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    name = _str(params, "name")
    with _extension_errors(core):
        removed = extensions.uninstall(name, workspace=_workspace(core, params))
    return {"message": admin.uninstalled(name, removed)}


def _switch(core: Core, params: dict[str, Any], enabled: bool) -> dict[str, Any]:
    workspace = Path(_workspace(core, params))
    scoped = params.get("workspace_scope") is True
    with _extension_errors(core):
        result = extensions.set_enabled(
            _str(params, "name"), enabled, workspace=workspace, workspace_scope=scoped
        )
    return {
        "message": admin.switched(result, enabled, workspace, scoped),
        "extension": result.status().to_dict(),
    }


@method("extensions.enable")
def _extensions_enable(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    return _switch(core, params, True)


@method("extensions.disable")
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


def dispatch(core: Core, name: str, args: list[Any]) -> dict[str, Any]:
    handler = METHODS.get(name)
    if handler is None:
        return {"ok": False, "error": f"unknown request {name!r}"}
    params = args[0] if args and isinstance(args[0], dict) else {}
    try:
        result = handler(core, params)
    except (Refused, ProviderError) as err:
        return {"ok": False, "error": secrets.redact(err.message)}
    except Exception as err:
        log.error("request %s failed:\n%s", name, traceback.format_exc())
        text = f"internal error in {name}: {type(err).__name__}: {err} (details in the log)"
        return {"ok": False, "error": secrets.redact(text)}
    out = {"ok": True}
    if isinstance(result, dict):
        out.update(result)
    return out
