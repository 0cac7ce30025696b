"""The domain: sightline's rules and the data it keeps, below every other layer. It imports no
other layer of sightline and no pynvim, model SDK or MCP package: the standard library and
platformdirs only (tests/unit/test_layers.py, tests/unit/test_package_layers.py).

Most modules are pure functions of their arguments. Six touch the machine, each only for what
it owns: workspace (lists the workspace's folders, runs `git ls-files`), extensions (installed
extensions, their enable state), history (conversation files and their locks), mcp_config
(`.mcp.json` and its enables), secrets (the core's own environment block) and paths (where the
user's data lives). None starts a thread or holds a process open."""
