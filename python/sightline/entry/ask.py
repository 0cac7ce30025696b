"""`sightline ask "…"`: one turn from the command line, printed as it streams.

The prompt's `@ext:<name>` and `@path` mentions are resolved exactly as in
the pane (sightline.mentions.parts), against the current directory as the
workspace, with the default bounds.  No tools: the model answers from the
text and the context the mentions add.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TextIO

from sightline.domain.config import ProviderConfig
from sightline.mentions.build_parts import ContextLimits
from sightline.mentions.parts import context_parts
from sightline.providers import make_provider
from sightline.providers.base import ProviderError, Reply, Request, Retrying, TextDelta

SYSTEM = """You are sightline, answering one question asked on the command line.
The workspace root is {workspace}. You have no tools in this conversation: answer from
the user's message and the context attached to it. Answer in Markdown. Be brief."""


# The command line has no Neovim, so the plugin's effective config (lua/sightline/config.lua,
# which the core receives whole) never reaches it: these are the command's own settings.
CLI_MODEL = ""  # the provider's default model (sightline.domain.presets)
CLI_MAX_TOKENS = 8192
CLI_TIMEOUT_MS = 60000
CLI_RETRIES = 2


def default_provider() -> str:
    """Like the plugin: anthropic when a key is in the environment, else echo."""
    return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "echo"


def ask(text: str, *, provider: str, model: str | None, out: TextIO, err: TextIO) -> int:
    """Run the turn; 0 when the reply arrived, 1 (with one line on `err`) when it failed."""
    workspace = Path.cwd()
    parts = [text, *context_parts(text, workspace, ContextLimits())]
    request = Request(
        system=SYSTEM.format(workspace=workspace),
        messages=[{"role": "user", "content": [{"type": "text", "text": p} for p in parts]}],
        tools=[],
    )
    cfg = ProviderConfig(
        name=provider,
        model=model or CLI_MODEL,
        max_tokens=CLI_MAX_TOKENS,
        timeout_ms=CLI_TIMEOUT_MS,
        retries=CLI_RETRIES,
        base_url=None,
        api_key_cmd=None,
        prices={},
        agent=None,
        thinking=None,
        context_window=None,
    )
    stopped = threading.Event()  # never set: Ctrl-C ends the whole process
    wrote = ""
    try:
        backend = make_provider(cfg)
        backend.prepare()
        for event in backend.stream(request, stopped.is_set):
            if isinstance(event, TextDelta):
                out.write(event.text)
                out.flush()
                wrote = event.text or wrote
            elif isinstance(event, Retrying):
                err.write(f"sightline: {event.reason} Retrying in {event.delay_s:g} s.\n")
            elif isinstance(event, Reply) and event.stop_reason == "max_tokens":
                err.write(f"\nsightline: the reply stopped at {cfg.max_tokens} tokens.\n")
    except ProviderError as e:
        if wrote and not wrote.endswith("\n"):
            out.write("\n")
        err.write(f"sightline: {e.message}\n")
        return 1
    if wrote and not wrote.endswith("\n"):
        out.write("\n")
    return 0
