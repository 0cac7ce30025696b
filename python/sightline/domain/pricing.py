"""What tokens cost: the arithmetic over the list prices of domain/models.py (the one table
of models, with its sources and date), overridable by config.

Prices are US dollars per million tokens. `provider.prices` entries come first and may name
any model (found like the table's: exact name, else the longest entry it starts with at a
`-` boundary). A model not found has no cost (shown as unknown, never as 0); a local server
(ollama) costs nothing.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sightline.domain import models

Price = models.Price

# The table's prices and context windows by entry (read-only views of models.MODELS).
PRICES: dict[str, Price] = {k: m.price for k, m in models.MODELS.items() if m.price is not None}
CONTEXT: dict[str, int] = {k: m.context for k, m in models.MODELS.items() if m.context}
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


def price_of(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`, config first; None when unknown."""
    found = models.find(overrides or {}, model)
    if found is not None and overrides is not None:
        return overrides[found]
    found = models.find(PRICES, model)
    return PRICES[found] if found is not None else None


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
    found = models.find(CONTEXT, model)
    if found is not None:
        return CONTEXT[found]
    return LOCAL_CONTEXT if local else DEFAULT_CONTEXT
