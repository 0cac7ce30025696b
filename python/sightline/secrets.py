"""Keeping API keys out of logs, history, tool output and error texts."""

from __future__ import annotations

import logging
import threading

KEY_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
)

_lock = threading.Lock()
_secrets: set[str] = set()


def register(secret: str | None) -> None:
    """Remember a secret so that redact() removes it wherever it shows up."""
    if secret and len(secret) >= 4:
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, "[REDACTED]")
    return text


class RedactingFilter(logging.Filter):
    """A log filter that rewrites each record's message with secrets removed."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


def scrubbed_env(env: dict[str, str]) -> dict[str, str]:
    """The environment for commands the agent runs: the provider's key variables removed."""
    return {k: v for k, v in env.items() if k not in KEY_ENV_VARS}
