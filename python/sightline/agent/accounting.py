"""What a conversation used and cost: tokens per conversation, per turn and live while a
reply streams, their price, and how full the context window is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sightline.domain import narrator, pricing
from sightline.domain.config import ProviderConfig
from sightline.providers.base import Reply, Usage


class Accounts:
    """The counts of one conversation. `cfg` and `model` are asked each time: a new setup()
    or `:Sightline model` prices the next reply at the new model's price."""

    def __init__(
        self,
        cfg: Callable[[], ProviderConfig],
        model: Callable[[], str],
        local: Callable[[], bool],
        subscription: Callable[[], bool] = lambda: False,
    ):
        self._cfg = cfg
        self._model = model
        self._local = local  # the provider runs on this machine: free, context size unknown
        self._subscription = subscription  # billed by its plan: tokens have no list price
        self.reset()

    def reset(self) -> None:
        self.tokens = pricing.Tokens()  # finished replies of this conversation
        self.turn_tokens = pricing.Tokens()  # those of the current (or last) turn
        self.live = pricing.Tokens()  # the reply streaming now, as far as the API said
        self.spent: float | None = 0.0  # dollars of `tokens`; None once a price was unknown
        self.turn_spent: float | None = 0.0
        # The whole input plus output of the last reply: what the next request holds at least
        # (0 after a compaction, until the next reply says).
        self.last_context = 0

    def new_turn(self) -> None:
        self.turn_tokens, self.turn_spent, self.live = pricing.Tokens(), 0.0, pricing.Tokens()

    def streaming(self, usage: Usage) -> None:
        """The reply streaming now has used this much so far."""
        self.live = _tokens(usage)

    def account(self, reply: Reply) -> None:
        used = _tokens(reply.usage())
        cost = self._cost(used)
        self.tokens += used
        self.turn_tokens += used
        self.live = pricing.Tokens()
        self.spent = _plus(self.spent, cost)
        self.turn_spent = _plus(self.turn_spent, cost)

    def replied(self, reply: Reply) -> None:
        """A reply of the turn loop: paid for, and the size of the next request."""
        self.account(reply)
        self.last_context = _context_of(reply)

    def charge_live(self) -> None:
        """A stopped reply: what it used so far is still paid for."""
        if self.live != pricing.Tokens():
            live = self.live
            self.account(
                Reply(
                    input_tokens=live.input,
                    output_tokens=live.output,
                    cache_read_tokens=live.cache_read,
                    cache_write_tokens=live.cache_write,
                )
            )

    def replay(self, records: list[dict[str, Any]]) -> None:
        """The counts of a conversation reopened from history (any record shape)."""
        self.reset()
        for record in records:
            if record.get("type") == "message" and isinstance(record.get("usage"), dict):
                self.account(_recorded_usage(record["usage"]))
        self.turn_tokens, self.turn_spent = pricing.Tokens(), 0.0
        for record in records:
            if record.get("type") == "compaction":
                self.last_context = 0
            elif record.get("type") == "message" and isinstance(record.get("usage"), dict):
                self.last_context = _context_of(_recorded_usage(record["usage"]))

    def _price(self) -> pricing.Price | None:
        if self._local():
            return {}  # a local server: free
        if self._subscription():
            return self._cfg().prices.get(self._model())
        return pricing.price_of(self._model(), self._cfg().prices)

    def _cost(self, tokens: pricing.Tokens) -> float | None:
        price = self._price()
        return None if price is None else pricing.cost(tokens, price)

    def context_window(self) -> int:
        return pricing.context_window(
            self._model(), local=self._local(), configured=self._cfg().context_window
        )

    def usage(self) -> dict[str, Any]:
        """status().tokens and status().cost: per conversation and per turn, live."""
        live = self.live
        live_cost = self._cost(live) if live != pricing.Tokens() else 0.0
        total, turn = _plus(self.spent, live_cost), _plus(self.turn_spent, live_cost)
        tokens: dict[str, Any] = (self.tokens + live).to_dict()
        tokens["turn"] = (self.turn_tokens + live).to_dict()
        return {
            "tokens": tokens,
            "cost": None if total is None else {"total": total, "turn": turn or 0.0},
            "usage_parts": narrator.usage_parts(self.tokens + live, total),
        }

    def footer(self, seconds: float) -> narrator.Note:
        return narrator.turn_footer(seconds, self.turn_tokens, self.turn_spent)

    def footer_record(self, seconds: float) -> dict[str, Any]:
        """The facts of the footer, for the history (`footer_of` reads them back)."""
        return {
            "type": "event",
            "event": "done",
            "seconds": round(seconds, 3),
            "tokens": self.turn_tokens.to_dict(),
            "cost": self.turn_spent,
        }


def footer_of(record: dict[str, Any]) -> narrator.Note | None:
    """The footer a recorded `done` event shows (None when it is not of that shape: it
    comes from a file)."""
    seconds, tokens, cost = _number(record.get("seconds")), record.get("tokens"), record.get("cost")
    if seconds is None or not isinstance(tokens, dict):
        return None
    if cost is not None and _number(cost) is None:
        return None
    counts = [tokens.get(k, 0) for k in pricing.KEYS]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        return None
    return narrator.turn_footer(seconds, pricing.Tokens(*counts), _number(cost))


def _number(value: Any) -> float | None:
    """A count or amount read from a file: a number of at least 0, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _plus(a: float | None, b: float | None) -> float | None:
    """A sum of costs: unknown when either is."""
    return None if a is None or b is None else a + b


def _context_of(reply: Reply) -> int:
    """The tokens the next request holds at least: this one's whole input and the reply."""
    return (
        reply.input_tokens
        + reply.cache_read_tokens
        + reply.cache_write_tokens
        + reply.output_tokens
    )


def _tokens(usage: Usage) -> pricing.Tokens:
    return pricing.Tokens(usage.input, usage.output, usage.cache_read, usage.cache_write)


def _recorded_usage(raw: dict[str, Any]) -> Reply:
    """The usage of a recorded reply (any shape: it comes from a file)."""

    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return Reply(
        input_tokens=count("input"),
        output_tokens=count("output"),
        cache_read_tokens=count("cache_read"),
        cache_write_tokens=count("cache_write"),
    )
