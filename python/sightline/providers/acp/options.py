"""An ACP agent's session config options (model, mode, thought level, any `select` option)
as plain data: what the bar shows, what `:Sightline model` / `:Sightline mode` list and take.

The agent sends the whole set with `session/new` (or `session/load`), in the answer to
`session/set_config_option` and in `config_option_update`; each replaces the last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sightline.domain.errors import Refused


@dataclass(frozen=True)
class Option:
    id: str
    name: str
    category: str  # "model" | "mode" | "thought_level" | "" (any other)
    value: str
    values: tuple[tuple[str, str], ...]  # (value, name), in the agent's order

    def value_name(self) -> str:
        return next((name for value, name in self.values if value == self.value), self.value)

    def view(self) -> dict[str, str]:
        """What the status (and the bar) gets of it."""
        return {
            "id": self.id,
            "name": self.name,
            "category": self.category,
            "value": self.value,
            "value_name": self.value_name(),
        }


def of(raw: Sequence[object] | None) -> list[Option]:
    """The SDK's config option models as data: `select` options only (a boolean one has no
    values to list), groups flattened."""
    out = []
    for opt in raw or []:
        if getattr(opt, "type", None) != "select":
            continue
        values: list[tuple[str, str]] = []
        for item in getattr(opt, "options", None) or []:
            inner = getattr(item, "options", None)
            for choice in inner if isinstance(inner, list) else [item]:
                value, name = getattr(choice, "value", None), getattr(choice, "name", None)
                if isinstance(value, str):
                    values.append((value, name if isinstance(name, str) and name else value))
        category = getattr(opt, "category", None)
        out.append(
            Option(
                str(getattr(opt, "id", "")),
                str(getattr(opt, "name", "") or getattr(opt, "id", "")),
                category if isinstance(category, str) else "",
                str(getattr(opt, "current_value", "")),
                tuple(values),
            )
        )
    return out


def find(options: Sequence[Option], kind: str) -> Option | None:
    """The option of a category (`model`, `mode`, `thought_level`), else of that id."""
    for opt in options:
        if opt.category == kind:
            return opt
    return next((opt for opt in options if opt.id == kind), None)


def choose(opt: Option, wanted: str) -> str:
    """The value `wanted` names (its value, or its name, without case); refused with the
    values there are."""
    for value, _ in opt.values:
        if wanted == value:
            return value
    low = wanted.lower()
    for value, name in opt.values:
        if low in (value.lower(), name.lower()):
            return value
    listed = ", ".join(value for value, _ in opt.values) or "none"
    raise Refused(f"{opt.name.lower()}: the agent has no {wanted!r} (it offers: {listed})")
