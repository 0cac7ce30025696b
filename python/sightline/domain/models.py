"""What each model can do and what it costs: the one table the core and the pane read.

A provider's `capabilities` (providers/base.py) are its own facts (what provider.thinking
means to it, whether it runs on this machine) joined with its model's entry here
(`lookup`): tools, vision, thinking, context window, list price. `pricing.price_of` and
`pricing.context_window` read this table too; `provider.prices` and
`provider.context_window` override it.

A model is found by its exact name, else by the longest entry it starts with at a `-`
boundary (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`), after its name is read the
way the vendors' platforms write it: a vendor prefix dropped (OpenRouter's
`openai/gpt-4.1`, Bedrock's `anthropic.claude-…` and cross-region `us.anthropic.claude-…`),
Bedrock's `-v1:0` version and Vertex's `@20250929` date read as a plain suffix. A model not
in the table is `UNKNOWN`: it is offered tools (a server that refuses them is caught as it
refuses), no vision is claimed for it, and no price (shown as unknown, never as 0).

Prices: US dollars per million tokens, the vendors' list prices (SOURCES) as they read on
AS_OF. Pure data and lookups: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

Price = Mapping[str, float]  # input, output, cache_read, cache_write

AS_OF = "2026-12-01"
# Where each vendor publishes the prices and limits entered below.
SOURCES: dict[str, str] = {
    "anthropic": "https://www.anthropic.com/pricing (also Bedrock and Vertex list prices)",
    "openai": "https://openai.com/api/pricing and https://platform.openai.com/docs/models",
    "mistral": "https://mistral.ai/pricing and https://docs.mistral.ai/getting-started/models",
    "deepseek": "https://api-docs.deepseek.com/quick_start/pricing",
    "xai": "https://docs.x.ai/docs/models",
    "google": "https://ai.google.dev/gemini-api/docs/pricing (paid tier, prompts ≤ 200k tokens)",
}


@dataclass(frozen=True)
class Model:
    """One model's (or one family's) facts; None is not known."""

    vendor: str = ""  # whose SOURCES entry the facts come from
    context: int | None = None  # the context window in tokens
    price: Price | None = None
    tools: bool = True  # it can call tools; without, it chats (no reading, no edits)
    vision: bool | None = None  # it reads images
    thinking: bool | None = None  # provider.thinking applies to it (None: sent as set)


UNKNOWN = Model()


def _claude(price: Price, *, thinking: bool = True) -> Model:
    return Model("anthropic", 200_000, price, vision=True, thinking=thinking)


def _openai(
    context: int, price: Price, *, thinking: bool, vision: bool = True, tools: bool = True
) -> Model:
    return Model("openai", context, price, tools=tools, vision=vision, thinking=thinking)


def _gemini(price: Price) -> Model:
    return Model("google", 1_048_576, price, vision=True, thinking=True)


MODELS: dict[str, Model] = {
    # Anthropic: every Claude model here reads images and calls tools.
    "claude": Model("anthropic", 200_000, vision=True),
    "claude-opus-4": _claude(
        {"input": 15.0, "output": 75.0, "cache_read": 1.5, "cache_write": 18.75}
    ),
    "claude-opus-4-5": _claude(
        {"input": 5.0, "output": 25.0, "cache_read": 0.5, "cache_write": 6.25}
    ),
    "claude-sonnet": _claude(
        {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
    ),
    "claude-haiku-4-5": _claude(
        {"input": 1.0, "output": 5.0, "cache_read": 0.1, "cache_write": 1.25}
    ),
    "claude-3-5-haiku": _claude(
        {"input": 0.8, "output": 4.0, "cache_read": 0.08, "cache_write": 1.0}, thinking=False
    ),
    # OpenAI: reasoning_effort only for the reasoning models (others refuse it).
    "gpt-4.1": _openai(1_047_576, {"input": 2.0, "output": 8.0, "cache_read": 0.5}, thinking=False),
    "gpt-4.1-mini": _openai(
        1_047_576, {"input": 0.4, "output": 1.6, "cache_read": 0.1}, thinking=False
    ),
    "gpt-4.1-nano": _openai(
        1_047_576, {"input": 0.1, "output": 0.4, "cache_read": 0.025}, thinking=False
    ),
    "gpt-4o": _openai(128_000, {"input": 2.5, "output": 10.0, "cache_read": 1.25}, thinking=False),
    "gpt-4o-mini": _openai(
        128_000, {"input": 0.15, "output": 0.6, "cache_read": 0.075}, thinking=False
    ),
    "gpt-5": _openai(400_000, {"input": 1.25, "output": 10.0, "cache_read": 0.125}, thinking=True),
    "gpt-5-mini": _openai(
        400_000, {"input": 0.25, "output": 2.0, "cache_read": 0.025}, thinking=True
    ),
    "gpt-5-nano": _openai(
        400_000, {"input": 0.05, "output": 0.4, "cache_read": 0.005}, thinking=True
    ),
    "o1-mini": _openai(
        128_000,
        {"input": 1.1, "output": 4.4, "cache_read": 0.55},
        thinking=False,
        vision=False,
        tools=False,
    ),
    "o3": _openai(200_000, {"input": 2.0, "output": 8.0, "cache_read": 0.5}, thinking=True),
    "o4-mini": _openai(200_000, {"input": 1.1, "output": 4.4, "cache_read": 0.275}, thinking=True),
    # Mistral (La Plateforme).
    "mistral-large": Model("mistral", 128_000, {"input": 2.0, "output": 6.0}, vision=False),
    "mistral-medium": Model("mistral", 128_000, {"input": 0.4, "output": 2.0}, vision=True),
    "mistral-small": Model("mistral", 128_000, {"input": 0.1, "output": 0.3}, vision=True),
    "codestral": Model("mistral", 256_000, {"input": 0.3, "output": 0.9}, vision=False),
    "pixtral-large": Model("mistral", 128_000, {"input": 2.0, "output": 6.0}, vision=True),
    # DeepSeek: deepseek-reasoner always thinks (streamed as reasoning_content).
    "deepseek-chat": Model(
        "deepseek",
        128_000,
        {"input": 0.28, "output": 0.42, "cache_read": 0.028},
        vision=False,
        thinking=False,
    ),
    "deepseek-reasoner": Model(
        "deepseek",
        128_000,
        {"input": 0.28, "output": 0.42, "cache_read": 0.028},
        vision=False,
        thinking=False,
    ),
    # xAI: grok-4 reasons by itself and refuses reasoning_effort.
    "grok-4": Model(
        "xai",
        256_000,
        {"input": 3.0, "output": 15.0, "cache_read": 0.75},
        vision=True,
        thinking=False,
    ),
    "grok-code-fast-1": Model(
        "xai",
        256_000,
        {"input": 0.2, "output": 1.5, "cache_read": 0.02},
        vision=False,
        thinking=False,
    ),
    "grok-3-mini": Model(
        "xai", 131_072, {"input": 0.3, "output": 0.5, "cache_read": 0.075}, thinking=True
    ),
    # Google's Gemini API (the free tier costs nothing but is shown at these prices).
    "gemini": Model("google", 1_048_576, vision=True, thinking=True),
    "gemini-2.5-pro": _gemini({"input": 1.25, "output": 10.0, "cache_read": 0.125}),
    "gemini-2.5-flash": _gemini({"input": 0.3, "output": 2.5, "cache_read": 0.03}),
    "gemini-2.5-flash-lite": _gemini({"input": 0.1, "output": 0.4, "cache_read": 0.01}),
    "gemini-3-pro": _gemini({"input": 2.0, "output": 12.0, "cache_read": 0.2}),
    "gemini-3-flash": _gemini({"input": 0.5, "output": 3.0, "cache_read": 0.05}),
}

# Bedrock's `anthropic.` vendor part, with an optional cross-region profile (`us.`, `eu.`,
# `apac.`, `global.`); its `-v1:0` version suffix; Vertex's `@date`.
_BEDROCK_VENDOR = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")


def names_of(model: str) -> list[str]:
    """The names `model` is looked up by, most specific first."""
    name = model.rsplit("/", 1)[-1]
    name = _BEDROCK_VENDOR.sub("", name)
    name = _BEDROCK_VERSION.sub("", name).replace("@", "-")
    return list(dict.fromkeys((model, name)))


def find(table: Mapping[str, object], model: str) -> str | None:
    """The entry of `table` that `model` is: its exact name, else the longest entry it
    starts with at a `-` boundary (for each of its names, most specific first)."""
    for name in names_of(model):
        if name in table:
            return name
        best = max((k for k in table if name.startswith(k + "-")), key=len, default="")
        if best:
            return best
    return None


@functools.lru_cache(maxsize=256)
def lookup(model: str) -> Model:
    """What the table knows of `model` (UNKNOWN when nothing); cached, as each status the
    pane is sent asks it."""
    found = find(MODELS, model)
    return MODELS[found] if found is not None else UNKNOWN
