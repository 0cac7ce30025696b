"""`python -m sightline.mcp`: the MCP stdio server, the public name external agents' configs
hold (the server itself is sightline.entry.mcp; this name stays when modules move)."""

import sys

from sightline.entry.mcp import main

if __name__ == "__main__":
    sys.exit(main())
