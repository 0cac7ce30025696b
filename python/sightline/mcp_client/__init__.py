"""The MCP client: the user's MCP servers as tools of a kind, and their resources in `@`."""
