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
import socket
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

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
    Package("anthropic", "anthropic", "the anthropic provider", ("anthropic",)),
    Package("openai", "openai", "the openai, ollama and openrouter providers", ("openai",)),
    Package("acp", "agent-client-protocol", "the acp provider", ("acp",)),
    Package(
        "google.genai",
        "google-genai",
        "the gemini provider: pip install 'sightline[gemini]'",
        ("gemini",),
    ),
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


# Variables a provider also reads its key from, after the preset's own (gemini_api.KEY_ENVS).
OTHER_KEY_ENVS = {"gemini": ("GOOGLE_API_KEY",)}
# Where a provider connects when provider.base_url is not set (an SDK's own default).
DEFAULT_ENDPOINTS = {"gemini": "https://generativelanguage.googleapis.com"}
REACH_TIMEOUT_S = 3.0


def key_source(provider: str) -> dict[str, Any]:
    """Where the provider's key comes from: its variable (the first one set, of those it
    reads) and whether it is set (never the value). A provider without a preset (acp, echo)
    needs none of sightline's keys."""
    found = presets.preset(provider)
    if found is None or not found.needs_key:
        return {"needs_key": False}
    names = [n for n in (found.key_env, *OTHER_KEY_ENVS.get(provider, ())) if n]
    env = next((n for n in names if os.environ.get(n)), names[0] if names else "")
    return {"needs_key": True, "env": env, "set": bool(env and os.environ.get(env))}


def signin(host: str | None) -> dict[str, Any]:
    """copilot: where its GitHub sign-in is (sightline's, copilot.vim's), never the token."""
    from sightline.providers import copilot_auth

    found = copilot_auth.Host.of(host)
    return {"needs_key": False, "signin": copilot_auth.token_sources(found), "host": found.name}


def endpoint(provider: str, base_url: str | None) -> dict[str, Any] | None:
    """Whether the provider's endpoint takes a TCP connection (nothing is sent), for the
    providers with a known address; None for the others (local servers, agents, echo)."""
    found = presets.preset(provider)
    url = base_url or DEFAULT_ENDPOINTS.get(provider) or (found.base_url if found else None)
    if not url or (found is not None and found.local and not base_url):
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT_S).close()
        error = ""
    except OSError as err:
        error = (err.strerror or type(err).__name__) if not isinstance(err, TimeoutError) else ""
        error = error or "timed out"
    return {"address": f"{host}:{port}", "reachable": not error, "error": error}


def report(
    provider: str,
    mcp: bool,
    base_url: str | None = None,
    host: str | None = None,
    reach: bool = False,
) -> dict[str, Any]:
    """What :checkhealth shows; `reach`: also try the provider's endpoint (a connection)."""
    kind = provider_kind(provider)
    packages = [
        check_package(p, not p.kinds or kind in p.kinds or (mcp and "mcp" in p.kinds))
        for p in PACKAGES
    ]
    return {
        "python": sys.version.split()[0],
        "packages": packages,
        "key": signin(host) if provider == "copilot" else key_source(provider),
        "endpoint": _endpoint(provider, base_url, host) if reach else None,
    }


def _endpoint(provider: str, base_url: str | None, host: str | None) -> dict[str, Any] | None:
    if provider == "copilot":
        from sightline.providers import copilot_auth

        # The sign-in's exchange is the first thing a request needs.
        return endpoint(provider, copilot_auth.Host.of(host).api)
    return endpoint(provider, base_url) if provider in DEFAULT_ENDPOINTS else None


def main(argv: list[str]) -> int:
    args = json.loads(argv[0]) if argv else {}
    provider = str(args.get("provider") or "echo")
    base_url = args.get("base_url") if isinstance(args.get("base_url"), str) else None
    host = args.get("host") if isinstance(args.get("host"), str) else None
    out = report(provider, bool(args.get("mcp")), base_url, host, args.get("reach") is True)
    print(json.dumps(out))  # noqa: T201 (its output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
