"""Keeping API keys out of logs, history, tool output, error texts and the model's requests."""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from typing import Any, AnyStr

KEY_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    # The OpenAI-compatible presets (domain/presets.py key_env).
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "VLLM_API_KEY",
    "LLAMA_API_KEY",
    # azure, bedrock (the SDKs would read these; the providers pass them explicitly).
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    # web_search's services (tools/search.py)
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
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


# Redact first, then cut: a text cut to its size limit must not end in part of a secret
# (which no redaction would recognise any more) nor begin with one. Every cut of text that
# can reach the model goes through cut_point/start_point, and redaction removes the whole
# secrets left (Request, history, transcript): the same as redacting before cutting.


def margin() -> int:
    """How far past a cut a reader must look for cut_point to see a secret whole: the longest
    secret, in UTF-8 bytes (also enough for characters)."""
    found = _secrets
    return max((len(s.encode(errors="surrogatepass")) for s in found), default=0)


def cut_point(data: AnyStr, limit: int, more: bool = False) -> int:
    """Where to cut `data` to keep at most `limit` of it: `limit`, or before a secret that
    runs across it — or off the end of `data`, where the rest was not read (`more`: `data`
    is the head of a longer text)."""
    cut = min(max(limit, 0), len(data))
    if cut == len(data) and not more:
        return cut
    needles = _needles(data)
    moved = True
    while moved and cut > 0:
        moved = False
        for secret in needles:
            for p in range(max(0, cut - len(secret) + 1), cut):
                n = min(len(secret), len(data) - p)
                if data[p : p + n] == secret[:n]:
                    cut, moved = p, True
                    break
            if moved:
                break
    return cut


def start_point(data: AnyStr, start: int) -> int:
    """Where to start keeping the end of `data` from `start` on: `start`, or after a secret
    that runs across it — or that began before `data`, whose start was dropped."""
    start = min(max(start, 0), len(data))
    if start == 0:
        return 0
    needles = _needles(data)
    moved = True
    while moved and start < len(data):
        moved = False
        for secret in needles:
            for q in range(start + 1, min(start + len(secret), len(data) + 1)):
                # An occurrence ending at q covers start when it began before it.
                p = q - len(secret)
                if data[max(p, 0) : q] == secret[max(-p, 0) :]:
                    start, moved = q, True
                    break
            if moved:
                break
    return start


def _needles(data: AnyStr) -> list[AnyStr]:
    found = _secrets
    if isinstance(data, bytes):
        return [s.encode(errors="surrogatepass") for s in found]
    return list(found)


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
