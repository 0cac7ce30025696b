"""Keeping API keys out of logs, history, tool output, error texts and the model's requests."""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from typing import Any

KEY_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
)
REDACTED = "[REDACTED]"

log = logging.getLogger(__name__)

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first, so a key inside another is not half-replaced
_version = 0  # counts register()s that added a secret: text redacted earlier may differ now
_captured: dict[str, str] = {}


def register(secret: str | None) -> None:
    """Remember a secret so that redact() removes it wherever it shows up."""
    global _secrets, _version
    if secret and len(secret) >= 4:
        with _lock:
            if secret not in _secrets:
                _secrets = tuple(sorted({*_secrets, secret}, key=len, reverse=True))
                _version += 1


def version() -> int:
    """Changes whenever a secret is added: what was redacted before must be redacted again."""
    return _version


def known() -> list[str]:
    """The registered secrets, for checks that must run where the text is (reveal refuses
    to show a buffer holding one); never for output."""
    with _lock:
        return sorted(_secrets)


def redact(text: str) -> str:
    for secret in _secrets:  # a tuple swapped whole by register(): no lock needed to read
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def settled(text: str, start: int = 0) -> int:
    """The last position p (start <= p <= len(text)) where `text` may be cut before it is
    redacted, whatever is appended to it later:
    redact(text + more) == redact(text[:p]) + redact(text[p:] + more).

    No secret crosses p, neither one `text` holds whole nor one its end begins. A streamed
    line is redacted up to here once, and only what follows is redacted again (redact
    before you cut). Keys hold no piece of REDACTED's brackets, so a replacement never
    makes a new occurrence.
    """
    secrets = _secrets
    end = p = len(text)
    moved = True
    while moved and p > start:
        moved = False
        for secret in secrets:
            size = len(secret)
            for at in range(max(start, p - size + 1), p):
                seen = text[at : at + size]
                if seen == secret or (at + size > end and secret.startswith(seen)):
                    p, moved = at, True  # this occurrence (or its beginning) reaches past p
                    break
    return max(p, start)


def redact_value(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with every string redacted; the same object
    when nothing in it holds a secret, so an unchanged request is not copied."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        items = {k: redact_value(v) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, (list, tuple)):
        out = [redact_value(v) for v in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out
    return value


class RedactingFilter(logging.Filter):
    """A log filter that rewrites each record's message with secrets removed."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


def scrubbed_env(env: dict[str, str]) -> dict[str, str]:
    """The environment for commands the agent runs: the provider's key variables removed."""
    return {k: v for k, v in env.items() if k not in KEY_ENV_VARS}


def env_secret(name: str) -> str | None:
    """A key variable's value: the one capture_env() took out of the environment, else the
    environment's (a process that never captured, like the command line)."""
    return _captured.get(name) or os.environ.get(name) or None


def capture_env() -> None:
    """Take the key variables out of this process's environment, keeping their values here.

    A command the agent runs could read them from /proc/<core>/environ, which shows the
    environment block the process started with, whatever os.environ says later; so the
    values are also overwritten in that block.
    """
    for name in KEY_ENV_VARS:
        value = os.environ.pop(name, None)  # pop also unsets it in the C environ
        if value:
            _captured[name] = value
            register(value)
    try:
        _wipe_initial_environ(KEY_ENV_VARS)
    except (OSError, ValueError) as err:
        log.warning("could not clear the key from /proc/self/environ: %s", err)


def _wipe_initial_environ(names: tuple[str, ...]) -> None:
    """Zero the values of `names` in the environment block the kernel shows as
    /proc/self/environ (the strings at env_start..env_end of the process's stack)."""
    with open("/proc/self/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    # Fields 50 and 51 of proc(5) (env_start, env_end); fields[0] here is field 3.
    start, end = int(fields[47]), int(fields[48])
    with open("/proc/self/environ", "rb") as fh:
        shown = fh.read()
    if end <= start or len(shown) != end - start or not _writable(start, end):
        raise ValueError("the environment block is not where /proc/self/stat says")
    if ctypes.string_at(start, end - start) != shown:
        raise ValueError("the environment block does not hold what /proc/self/environ shows")
    offset = 0
    for entry in shown.split(b"\0"):
        name, eq, _ = entry.partition(b"=")
        if eq and name.decode(errors="replace") in names:
            value_at = start + offset + len(name) + 1
            ctypes.memset(value_at, 0, len(entry) - len(name) - 1)
        offset += len(entry) + 1


def _writable(start: int, end: int) -> bool:
    with open("/proc/self/maps") as fh:
        for line in fh:
            span, perms = line.split()[:2]
            low, high = (int(x, 16) for x in span.split("-"))
            if low <= start and end <= high:
                return perms.startswith("rw")
    return False
