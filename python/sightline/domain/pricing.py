"""What tokens cost: a small table of known models' list prices, overridable by config.

Prices are US dollars per million tokens. A model is found by its exact name, else by the
longest table entry it starts with at a `-` boundary (`claude-sonnet-4-5-20250929` →
`claude-sonnet-4-5`), after dropping an OpenRouter vendor prefix (`openai/gpt-4.1` →
`gpt-4.1`). `provider.prices` entries come first and may name any model. A model not
found has no cost (shown as unknown, never as 0); a local server (ollama) costs nothing.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Price = Mapping[str, float]  # input, output, cache_read, cache_write

# List prices as published by the vendors (per million tokens).
PRICES: dict[str, dict[str, float]] = {
    "claude-opus-4": {"input": 15.0, "output": 75.0, "cache_read": 1.5, "cache_write": 18.75},
    "claude-opus-4-5": {"input": 5.0, "output": 25.0, "cache_read": 0.5, "cache_write": 6.25},
    "claude-sonnet": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cache_read": 0.1, "cache_write": 1.25},
    "claude-3-5-haiku": {"input": 0.8, "output": 4.0, "cache_read": 0.08, "cache_write": 1.0},
    "gpt-4.1": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
    "gpt-4.1-mini": {"input": 0.4, "output": 1.6, "cache_read": 0.1},
    "gpt-4.1-nano": {"input": 0.1, "output": 0.4, "cache_read": 0.025},
    "gpt-4o": {"input": 2.5, "output": 10.0, "cache_read": 1.25},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_read": 0.075},
    "gpt-5": {"input": 1.25, "output": 10.0, "cache_read": 0.125},
    "gpt-5-mini": {"input": 0.25, "output": 2.0, "cache_read": 0.025},
    "gpt-5-nano": {"input": 0.05, "output": 0.4, "cache_read": 0.005},
    "o3": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
    "o4-mini": {"input": 1.1, "output": 4.4, "cache_read": 0.275},
    # Gemini API paid tier, prompts up to 200k tokens (ai.google.dev/gemini-api/docs/pricing,
    # 2025-12); the free tier costs nothing but is shown at these prices.
    "gemini-2.5-pro": {"input": 1.25, "output": 10.0, "cache_read": 0.125},
    "gemini-2.5-flash": {"input": 0.3, "output": 2.5, "cache_read": 0.03},
    "gemini-2.5-flash-lite": {"input": 0.1, "output": 0.4, "cache_read": 0.01},
    "gemini-3-pro": {"input": 2.0, "output": 12.0, "cache_read": 0.2},
    "gemini-3-flash": {"input": 0.5, "output": 3.0, "cache_read": 0.05},
}

# Context windows in tokens, looked up like prices (exact name, else the longest prefix).
CONTEXT: dict[str, int] = {
    "claude": 200_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini": 1_048_576,
}
DEFAULT_CONTEXT = 128_000  # a hosted model not in the table
LOCAL_CONTEXT = 8_192  # a local server's model (Ollama's default num_ctx is smaller still)

KEYS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(*(getattr(self, k) + getattr(other, k) for k in KEYS))

    def to_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in KEYS}


def _lookup(table: Mapping[str, Price], model: str) -> Price | None:
    if model in table:
        return table[model]
    best = ""
    for name in table:
        if model.startswith(name + "-") and len(name) > len(best):
            best = name
    return table[best] if best else None


def price_of(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`, config first; None when unknown."""
    for name in (model, model.rsplit("/", 1)[-1]):
        for table in (overrides or {}, PRICES):
            found = _lookup(table, name)
            if found is not None:
                return found
    return None


def cost(tokens: Tokens, price: Price) -> float:
    """Dollars for `tokens` at `price`. A missing cache price falls back to the input price
    (what a cache miss would have cost), so a partial table never undercounts to 0."""
    base = price.get("input", 0.0)
    total = (
        tokens.input * base
        + tokens.output * price.get("output", 0.0)
        + tokens.cache_read * price.get("cache_read", base)
        + tokens.cache_write * price.get("cache_write", base)
    )
    return total / 1_000_000


def context_window(model: str, *, local: bool = False, configured: int | None = None) -> int:
    """The context size of `model` in tokens: provider.context_window, else the table, else a
    default (small for a local server, whose models are often run with a short context)."""
    if configured:
        return configured
    for name in (model, model.rsplit("/", 1)[-1]):
        if name in CONTEXT:
            return CONTEXT[name]
        best = max((k for k in CONTEXT if name.startswith(k + "-")), key=len, default="")
        if best:
            return CONTEXT[best]
    return LOCAL_CONTEXT if local else DEFAULT_CONTEXT
