"""A small MCP server for the client tests, written with the official SDK.

Tools of both kinds (`lookup` says it only reads, `touch` writes a file), a slow tool, one that
kills the server, one that returns an image, a resource, and a tool whose schema is refused.
Run as `python demo.py` (stdio) or `python demo.py http PORT` (Streamable HTTP on loopback).
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("demo")

# Where `touch` writes and what `env_value` reports: set by the test through the config.
OUT = os.environ.get("DEMO_OUT", "")


@server.tool(annotations=ToolAnnotations(read_only_hint=True), description="Look a word up.")
def lookup(word: str) -> str:
    return f"definition of {word}: a demo word"


@server.tool(description="Create a file named in DEMO_OUT with the given text.")
def touch(text: str) -> str:
    Path(OUT).write_text(text)
    return f"wrote {len(text)} characters"


@server.tool(description="Report an environment variable's value.")
def env_value(name: str) -> str:
    return f"{name}={os.environ.get(name, '')}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True), description="Sleep for a while.")
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


@server.tool(description="Kill this server.")
def crash() -> str:
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True), description="A tiny image.")
def picture() -> list[TextContent | ImageContent]:
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 24).decode()
    return [
        TextContent(type="text", text="here it is"),
        ImageContent(type="image", data=data, mime_type="image/png"),
    ]


@server.tool(description="Print a lot.")
def flood(lines: int) -> str:
    return "\n".join(f"line {i} " + "x" * 100 for i in range(lines))


@server.resource(
    "demo://notes", name="notes", description="The demo notes.", mime_type="text/plain"
)
def notes() -> str:
    return "NOTES-RESOURCE-TEXT: the demo server's notes\n"


if __name__ == "__main__":
    # A test holds the start here (the client waits for the handshake) until it makes the file.
    gate = os.environ.get("DEMO_START_GATE", "")
    while gate and not os.path.exists(gate):
        time.sleep(0.02)
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
