"""`:checkhealth sightline`'s look at the interpreter the core would run: its Python, every
package the core imports (with what needs it), where the provider's key would come from,
and for the cloud providers (azure, bedrock, vertex) and any provider.base_url or local
server: which credentials were found (where from, never a value) and whether the endpoint
answers a connection.

Run as `python -m sightline.entry.health '{"provider": "openai", "mcp": false}'` (with
`"config": {...}`, the effective provider table's keys it reads). It runs where those
packages may be missing, so it imports only the standard library, the domain's tables and
the providers' credential lookups (which import no SDK). A package needed now is imported
(a broken install shows); the others are only found, as importing them all would take
seconds (anthropic alone ~1.5 s).
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

from sightline.domain import presets, sandbox


@dataclass(frozen=True)
class Package:
    module: str  # what the core imports
    dist: str  # what pip installs (pyproject's dependencies)
    needed_by: str  # said to the user
    kinds: tuple[str, ...] = ()  # the provider kinds that need it; () = the core itself
    extra: str | None = None  # the pip extra that brings it (`sightline[bedrock]`)


PACKAGES: tuple[Package, ...] = (
    Package("pynvim", "pynvim", "the core"),
    Package("msgpack", "msgpack", "the core"),
    Package("platformdirs", "platformdirs", "the core"),
    Package("tree_sitter", "tree-sitter", "the core (kept approvals)"),
    Package("tree_sitter_bash", "tree-sitter-bash", "the core (kept approvals)"),
    Package("yaml", "pyyaml", "the core (prompt files and skills)"),
    Package(
        "anthropic",
        "anthropic",
        "the anthropic, bedrock and vertex providers",
        ("anthropic", "bedrock", "vertex"),
    ),
    Package(
        "openai", "openai", "the openai, azure and OpenAI-compatible providers", ("openai", "azure")
    ),
    Package("boto3", "boto3", "the bedrock provider", ("bedrock",), "bedrock"),
    Package("botocore", "botocore", "the bedrock provider", ("bedrock",), "bedrock"),
    Package("google.auth", "google-auth", "the vertex provider", ("vertex",), "vertex"),
    Package("requests", "requests", "the vertex provider", ("vertex",), "vertex"),
    Package("google.genai", "google-genai", "the gemini provider", ("gemini",), "gemini"),
    Package("acp", "agent-client-protocol", "the acp provider", ("acp",)),
    Package("mcp", "mcp", "MCP servers and sightline-mcp", ("mcp",)),
    # The tools' own: found, not imported (no provider kind names them).
    Package("markdownify", "markdownify", "fetch_url and @url (pages as Markdown)", ("web",)),
    Package("bs4", "beautifulsoup4", "fetch_url and @url (pages as Markdown)", ("web",)),
    Package("PIL", "pillow", "images in the conversation", ("images",)),
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
        "extra": pkg.extra,
    }


# Variables a provider also reads its key from, after the preset's own (gemini_api.KEY_ENVS).
OTHER_KEY_ENVS = {"gemini": ("GOOGLE_API_KEY",)}


def key_source(provider: str, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """Where the provider's key comes from: its variable (the first set, of those it reads)
    and whether it is set (never the value). copilot: where its GitHub sign-in is. A
    provider without a preset (acp, echo) needs none of sightline's keys."""
    if provider == "copilot":
        return signin((cfg or {}).get("host"))
    found = presets.preset(provider)
    if found is None or not found.needs_key or found.kind == "azure":
        return {"needs_key": False}  # azure: its credentials are checked whole (below)
    names = [n for n in (found.key_env, *OTHER_KEY_ENVS.get(provider, ())) if n]
    env = next((n for n in names if os.environ.get(n)), names[0] if names else "")
    return {"needs_key": True, "env": env, "set": bool(env and os.environ.get(env))}


def signin(host: Any) -> dict[str, Any]:
    """copilot: where its GitHub sign-in is (sightline's, copilot.vim's), never the token."""
    from sightline.providers import copilot_auth

    found = copilot_auth.Host.of(host if isinstance(host, str) else None)
    return {"needs_key": False, "signin": copilot_auth.token_sources(found), "host": found.name}


def sandbox_status(raw: object) -> dict[str, Any]:
    """Whether run_command runs sandboxed with this tools.sandbox, and why not."""
    try:
        cfg = sandbox.SandboxConfig.from_value(raw)
    except ValueError as err:
        return {"sandboxed": False, "why": str(err), "mode": "?"}
    found = sandbox.probe(cfg)
    mode = cfg.mode
    return {"sandboxed": found.sandboxed, "why": found.why, "bwrap": found.bwrap, "mode": mode}


def credentials(provider: str, cfg: dict[str, Any]) -> dict[str, Any] | None:
    """For a cloud provider: where its credentials come from and what is missing (`error`,
    with what to do); None for the others (key_source says theirs)."""
    kind = provider_kind(provider)
    if kind == "azure":
        return _azure(cfg)
    if kind == "bedrock":
        return _bedrock(cfg)
    if kind == "vertex":
        return _vertex(cfg)
    return None


def _azure(cfg: dict[str, Any]) -> dict[str, Any]:
    if not (cfg.get("base_url") or os.environ.get("AZURE_OPENAI_ENDPOINT")):
        return {"error": "no endpoint: set provider.base_url or $AZURE_OPENAI_ENDPOINT"}
    if not (cfg.get("deployment") or cfg.get("model")):
        return {"error": "no deployment: set provider.deployment"}
    if cfg.get("entra_token_cmd"):
        return {"from": "provider.entra_token_cmd (a Microsoft Entra ID token)"}
    for env in ("AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_API_KEY"):
        if os.environ.get(env):
            return {"from": f"${env}"}
    if cfg.get("api_key_cmd"):
        return {"from": "provider.api_key_cmd"}
    return {
        "error": "no credential: set $AZURE_OPENAI_API_KEY, provider.api_key_cmd or "
        "provider.entra_token_cmd"
    }


def _bedrock(cfg: dict[str, Any]) -> dict[str, Any]:
    from sightline.providers.cloud_claude import aws_credentials, aws_region

    region = aws_region(cfg.get("region"))
    if not region:
        return {"error": "no AWS region: set provider.region or $AWS_REGION"}
    args, where = aws_credentials()
    if "aws_profile" in args:
        try:
            import boto3

            found = boto3.Session(profile_name=args["aws_profile"]).get_credentials()
        except ImportError:
            return {"error": "boto3 is not installed: pip install 'sightline[bedrock]'"}
        except Exception as err:  # a broken profile: its kind, never its content
            return {"error": f"the AWS profile could not be read ({type(err).__name__})"}
        if found is None:
            return {
                "error": "no AWS credentials: set $AWS_ACCESS_KEY_ID and "
                "$AWS_SECRET_ACCESS_KEY, $AWS_PROFILE, or run aws configure / aws sso login"
            }
        where = f"{where}: {getattr(found, 'method', 'found')}"
    return {"from": f"{where}, region {region}"}


def _vertex(cfg: dict[str, Any]) -> dict[str, Any]:
    from sightline.providers.cloud_claude import vertex_credential_source

    region = cfg.get("region") or os.environ.get("CLOUD_ML_REGION")
    if not region:
        return {"error": "no region: set provider.region or $CLOUD_ML_REGION"}
    where = vertex_credential_source()
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path and not os.path.isfile(path):
        return {"error": f"$GOOGLE_APPLICATION_CREDENTIALS names no file ({path})"}
    project = cfg.get("project") or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID")
    if not project and path:
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            project = data.get("project_id") or data.get("quota_project_id")
        except (OSError, ValueError, AttributeError):
            project = None
    said = f"{where}, region {region}" + (f", project {project}" if project else "")
    return {"from": said}


def endpoint(provider: str, cfg: dict[str, Any]) -> str | None:
    """The address the provider connects to, when :checkhealth should try it: the user's
    own (provider.base_url, an Azure resource), a local server, or a cloud region's."""
    found = presets.preset(provider)
    if found is None or found.kind == "echo":
        return None
    base = cfg.get("base_url")
    if found.kind == "azure":
        base = base or os.environ.get("AZURE_OPENAI_ENDPOINT")
    elif found.kind == "bedrock" and not base:
        region = cfg.get("region") or os.environ.get("AWS_REGION")
        base = f"https://bedrock-runtime.{region}.amazonaws.com" if region else None
    elif found.kind == "vertex" and not base:
        region = cfg.get("region") or os.environ.get("CLOUD_ML_REGION")
        if region:
            host = "aiplatform" if region == "global" else f"{region}-aiplatform"
            base = f"https://{host}.googleapis.com/v1"
    elif not base and found.local:
        base = found.base_url
    elif provider == "copilot" and cfg.get("host"):
        from sightline.providers import copilot_auth

        base = copilot_auth.Host.of(str(cfg["host"])).api  # the sign-in's exchange, first
    return base or None


def reachable(url: str, timeout_s: float = 3.0) -> dict[str, Any]:
    """Whether a TCP connection to the URL's host and port is accepted (no request is sent)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return {"url": url, "address": address, "ok": True}
    except OSError as err:
        reason = err.strerror or type(err).__name__
        return {"url": url, "address": address, "ok": False, "error": str(reason)}


def report(provider: str, mcp: bool, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    cfg = cfg or {}
    kind = provider_kind(provider)
    needs = [(p, not p.kinds or kind in p.kinds or (mcp and "mcp" in p.kinds)) for p in PACKAGES]
    # An optional extra is checked only for its provider: others never install it.
    # An extra's modules are only found, not imported: boto3 and google-auth would add
    # seconds to a check that already imports the provider's SDK.
    packages = [
        {**check_package(p, need and p.extra is None), "needed": need}
        for p, need in needs
        if need or p.extra is None
    ]
    url = endpoint(provider, cfg)
    return {
        "python": sys.version.split()[0],
        "packages": packages,
        "key": key_source(provider, cfg),
        "sandbox": sandbox_status(cfg.get("sandbox", "auto")),
        "credentials": credentials(provider, cfg),
        "endpoint": reachable(url) if url else None,
    }


def main(argv: list[str]) -> int:
    args = json.loads(argv[0]) if argv else {}
    provider = str(args.get("provider") or "echo")
    cfg = args.get("config") if isinstance(args.get("config"), dict) else {}
    print(json.dumps(report(provider, bool(args.get("mcp")), cfg)))  # noqa: T201 (its output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
