"""`python -m sightline.host`: the core, the public name Lua starts (the adapter itself is
sightline.entry.stdio; this name stays when modules move)."""

import os

from sightline.entry.stdio import main

if __name__ == "__main__":
    main()
    os._exit(0)
