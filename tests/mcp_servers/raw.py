"""A bare JSON-RPC MCP server on stdio (no SDK), listing what the SDK's server classes never
send: beside a good tool, `raw.py big` lists one whose schema is larger than the client takes,
`raw.py string` one whose schema is not an object schema; `raw.py name TOOL LABEL` lists one
tool of that name, whose calls answer with LABEL."""

from __future__ import annotations

import json
import sys
from typing import Any

BIG = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}}
MODE = sys.argv[1] if len(sys.argv) > 1 else "big"
LABEL = sys.argv[3] if MODE == "name" else "ok"
TOOLS: list[dict[str, Any]]
if MODE == "name":
    TOOLS = [{"name": sys.argv[2], "description": "named", "inputSchema": {"type": "object"}}]
else:
    TOOLS = [
        {"name": "good", "description": "fine", "inputSchema": {"type": "object"}},
        {
            "name": "bad",
            "description": "refused",
            "inputSchema": {"string": {"type": "string"}, "big": BIG}[MODE],
        },
    ]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": LABEL}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    reply = answer(json.loads(line))
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
