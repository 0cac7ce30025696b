"""Entry adapters: the processes and requests that call into the core.

The RPC host, the command line, the MCP server; nothing else imports them."""
