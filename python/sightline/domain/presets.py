"""What each provider name means: a table of data, no logic.

`kind` picks the implementation (the anthropic SDK or the openai SDK's Chat Completions);
the rest are the defaults a user gets when the config leaves them out. The key is read
from `key_env`, else from `provider.api_key_cmd`; a preset with `key_env = None` (a local
server) needs no key.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    kind: str  # "anthropic" | "openai" | "gemini" | "echo"
    model: str  # the default model when provider.model is not set
    base_url: str | None = None  # None: the SDK's own default (or $ANTHROPIC_BASE_URL)
    key_env: str | None = None  # the environment variable holding the key
    needs_key: bool = True
    local: bool = False  # runs on this machine: no cost


PRESETS: dict[str, Preset] = {
    "echo": Preset(kind="echo", model="echo", needs_key=False, local=True),
    "anthropic": Preset(kind="anthropic", model="claude-sonnet-5-5", key_env="ANTHROPIC_API_KEY"),
    "openai": Preset(
        kind="openai",
        model="gpt-4.1",
        base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
    ),
    "ollama": Preset(
        kind="openai",
        model="llama3.1",
        base_url="http://localhost:11434/v1",
        needs_key=False,
        local=True,
    ),
    "openrouter": Preset(
        kind="openai",
        model="openai/gpt-4.1",
        base_url="https://openrouter.ai/api/v1",
        key_env="OPENROUTER_API_KEY",
    ),
    # The key may also be in $GOOGLE_API_KEY (providers/gemini_api.py KEY_ENVS).
    "gemini": Preset(kind="gemini", model="gemini-2.5-flash", key_env="GEMINI_API_KEY"),
    # Chat Completions with the token of the user's GitHub sign-in (providers/copilot_auth.py).
    "copilot": Preset(kind="openai", model="gpt-4.1", needs_key=False),
}


def preset(name: str) -> Preset | None:
    return PRESETS.get(name)


def default_model(name: str) -> str:
    found = PRESETS.get(name)
    return found.model if found else ""
