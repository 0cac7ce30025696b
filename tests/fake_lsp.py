"""A tiny language server over stdio for tests: it answers `initialize` at once and
`textDocument/documentSymbol` after a delay, with the symbols of a JSON file.

Usage: python tests/fake_lsp.py SYMBOLS.json DELAY_SECONDS
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

out_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    with out_lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def read() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message


def main() -> None:
    with open(sys.argv[1]) as f:
        symbols = json.load(f)
    delay = float(sys.argv[2])
    while (msg := read()) is not None:
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {"capabilities": {"documentSymbolProvider": True}},
                }
            )
        elif method == "textDocument/documentSymbol":

            def later(rid: Any = rid) -> None:
                time.sleep(delay)
                send({"jsonrpc": "2.0", "id": rid, "result": symbols})

            threading.Thread(target=later, daemon=True).start()
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": rid, "result": None})
        elif method == "exit":
            return
        elif rid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": None})


if __name__ == "__main__":
    main()
