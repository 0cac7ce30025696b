"""`python -m sightline.providers.acp AGENT_JSON`: describe the agent for :checkhealth.

AGENT_JSON is provider.agent as JSON (a preset name or {cmd, env, client_writes}). Prints
one JSON object: found, version, capabilities, whether scoped turns are available. The
agent is started, initialized and stopped again; nothing else is sent to it.
"""

from __future__ import annotations

import json
import sys

from sightline.config import ConfigError, CoreConfig
from sightline.providers.acp import AcpProvider


def main() -> None:
    raw = json.loads(sys.argv[1]) if len(sys.argv) > 1 else None
    try:
        cfg = CoreConfig.from_dict({"provider": {"name": "acp", "agent": raw}})
    except ConfigError as err:
        print(json.dumps({"found": False, "error": str(err)}))  # noqa: T201
        return
    provider = AcpProvider(cfg.provider)
    try:
        print(json.dumps(provider.describe()))  # noqa: T201
    finally:
        provider.close()


if __name__ == "__main__":
    main()
