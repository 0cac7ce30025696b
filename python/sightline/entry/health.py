"""`:checkhealth sightline`'s look at the interpreter the core would run: its Python, every
package the core imports (with what needs it), and where the provider's key would come from.

Run as `python -m sightline.entry.health '{"provider": "openai", "mcp": false}'`. It runs
where those packages may be missing, so it imports only the standard library and the
domain's preset table. A package needed now is imported (a broken install shows); the
others are only found, as importing them all would take seconds (anthropic alone ~1.5 s).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

from sightline.domain import presets


@dataclass(frozen=True)
class Package:
    module: str  # what the core imports
    dist: str  # what pip installs (pyproject's dependencies)
    needed_by: str  # said to the user
    kinds: tuple[str, ...] = ()  # the provider kinds that need it; () = the core itself


PACKAGES: tuple[Package, ...] = (
    Package("pynvim", "pynvim", "the core"),
    Package("msgpack", "msgpack", "the core"),
    Package("platformdirs", "platformdirs", "the core"),
    Package("yaml", "pyyaml", "the core (prompt files and skills)"),
    Package("anthropic", "anthropic", "the anthropic provider", ("anthropic",)),
    Package("openai", "openai", "the openai, ollama and openrouter providers", ("openai",)),
    Package("acp", "agent-client-protocol", "the acp provider", ("acp",)),
    Package("mcp", "mcp", "MCP servers and sightline-mcp", ("mcp",)),
)


def provider_kind(provider: str) -> str:
    """The implementation a provider name runs on (a preset's kind; acp is its own)."""
    found = presets.preset(provider)
    return found.kind if found else provider


def check_package(pkg: Package, needed: bool) -> dict[str, Any]:
    """Whether pkg is there (imported when needed now, else only found) and its version."""
    error = ""
    try:
        if needed:
            importlib.import_module(pkg.module)
        elif importlib.util.find_spec(pkg.module) is None:
            error = "not installed"
    except Exception as e:  # a broken install raises anything; say its kind, not a traceback
        error = f"{type(e).__name__}: {e}".splitlines()[0][:200]
    try:
        version = importlib.metadata.version(pkg.dist)
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return {
        "module": pkg.module,
        "dist": pkg.dist,
        "version": version,
        "needed_by": pkg.needed_by,
        "needed": needed,
        "error": error,
    }


def key_source(provider: str) -> dict[str, Any]:
    """Where the provider's key comes from: its variable and whether it is set (never the
    value). A provider without a preset (acp, echo) needs none of sightline's keys."""
    found = presets.preset(provider)
    if found is None or not found.needs_key:
        return {"needs_key": False}
    env = found.key_env or ""
    return {"needs_key": True, "env": env, "set": bool(env and os.environ.get(env))}


def report(provider: str, mcp: bool) -> dict[str, Any]:
    kind = provider_kind(provider)
    packages = [
        check_package(p, not p.kinds or kind in p.kinds or (mcp and "mcp" in p.kinds))
        for p in PACKAGES
    ]
    return {
        "python": sys.version.split()[0],
        "packages": packages,
        "key": key_source(provider),
    }


def main(argv: list[str]) -> int:
    args = json.loads(argv[0]) if argv else {}
    provider = str(args.get("provider") or "echo")
    print(json.dumps(report(provider, bool(args.get("mcp")))))  # noqa: T201 (its output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
