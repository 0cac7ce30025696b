"""`python -m sightline.providers.acp PROVIDER_JSON`: describe the agent for :checkhealth.

PROVIDER_JSON is the effective provider table as JSON (config.lua's, provider.agent a preset
name or {cmd, env, client_writes}: the core keeps no defaults of its own). Prints
one JSON object: found, version, capabilities, whether scoped turns are available. The
agent is started, initialized and stopped again; nothing else is sent to it.
"""

from __future__ import annotations

import json
import sys

from sightline.domain.config import ConfigError, ProviderConfig
from sightline.providers.acp import AcpProvider


def main() -> None:
    raw = json.loads(sys.argv[1]) if len(sys.argv) > 1 else None
    try:
        provider_cfg = ProviderConfig.from_dict(raw)
    except ConfigError as err:
        print(json.dumps({"found": False, "error": str(err)}))  # noqa: T201
        return
    provider = AcpProvider(provider_cfg)
    try:
        print(json.dumps(provider.describe()))  # noqa: T201
    finally:
        provider.close()


if __name__ == "__main__":
    main()
