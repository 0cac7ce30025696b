"""One config schema: config.lua holds the defaults and sends the whole effective config;
Python keeps none (a missing key is refused, named)."""

from __future__ import annotations

from typing import Any

import pytest

from sightline.domain.config import ConfigError, CoreConfig
from tests.effective_config import EFFECTIVE


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (("provider", "timeout_ms"), "provider.timeout_ms"),
        (("rules",), "rules"),
        (("mcp", "call_timeout_ms"), "mcp.call_timeout_ms"),
        (("provider", "name"), "provider.name"),
        (("autoaccept",), "autoaccept"),
        (("tools", "max_iterations"), "tools.max_iterations"),
        (("mentions",), "mentions.max_file_bytes"),
    ],
)
def test_a_missing_key_is_refused_by_name(path: tuple[str, ...], named: str) -> None:
    import copy

    raw: Any = copy.deepcopy(EFFECTIVE)
    table = raw
    for key in path[:-1]:
        table = table[key]
    del table[path[-1]]
    with pytest.raises(ConfigError, match=rf"^{named}: expected .*, got nothing"):
        CoreConfig.from_dict(raw)


def test_python_has_no_defaults_of_its_own() -> None:
    with pytest.raises(TypeError):
        CoreConfig()  # type: ignore[call-arg]
    with pytest.raises(ConfigError):
        CoreConfig.from_dict({})
