"""The agent's stdio as JSON-RPC messages for the SDK: newline-delimited JSON, framed as the
SDK frames it, except that a line which is not one well-formed message fails alone.

The SDK's own stdio reader hands every parsed line to its dispatcher, which ends the whole
connection on a JSON array (a batch, which ACP does not have), a non-object, an `id` that is
not a string or a number, or an `error` that is not an object: one bad line and the agent's
session, with the conversation it knows, is gone. Here such a line is answered with the
JSON-RPC error for it (`Invalid Request` for each request in it, with its id) and the
connection goes on. The SDK takes a message transport in place of byte streams
(`connect_to_agent(client, transport)`), so nothing of it is patched.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or type(value) is int


def problem(message: Any) -> str | None:
    """Why `message` is not one JSON-RPC message the SDK can take, or None when it is."""
    if not isinstance(message, dict):
        kind = "an array (a batch)" if isinstance(message, list) else "not an object"
        return f"a message must be one JSON object, not {kind}"
    if "id" in message and not _valid_id(message["id"]):
        return "its id must be a string, a number or null"
    if "method" in message and not isinstance(message["method"], str):
        return "its method must be a string"
    if "error" in message and not isinstance(message["error"], dict):
        return "its error must be an object"
    if "params" in message and not isinstance(message["params"], dict | list | None):
        return "its params must be an object"
    return None


def _requests_in(message: Any) -> list[Any]:
    """The ids of the requests a bad line holds, each owed an answer (None: the line's own)."""
    items = message if isinstance(message, list) else [message]
    ids = [
        m["id"]
        for m in items
        if isinstance(m, dict) and "method" in m and "id" in m and _valid_id(m["id"])
    ]
    return ids or ([None] if not isinstance(message, list) or not message else [])


class CheckedTransport:
    """A message transport (the SDK's `Transport` protocol) over the agent's stdio."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = (await self._read_line()).strip()
            if not line:
                if self._reader.at_eof():
                    return None
                continue
            try:
                message = json.loads(line)
            except ValueError:
                log.warning("agent sent a line that is not JSON (%d bytes)", len(line))
                await self._fail(None, PARSE_ERROR, "Parse error: the line is not JSON")
                continue
            why = problem(message)
            if why is None:
                return dict(message)
            log.warning("agent sent a malformed message: %s", why)
            for request_id in _requests_in(message):
                await self._fail(request_id, INVALID_REQUEST, f"Invalid Request: {why}")

    async def close(self) -> None:
        self._writer.close()

    async def _fail(self, request_id: Any, code: int, text: str) -> None:
        try:
            error = {"code": code, "message": text}
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
        except (ConnectionError, RuntimeError) as err:
            log.info("could not answer a malformed message: %s", err)

    async def _read_line(self) -> bytes:
        # As the SDK reads: a line longer than the reader's limit is taken in pieces.
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    line = await self._reader.readuntil(b"\n")
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
                else:
                    chunks.append(line)
                    return b"".join(chunks)
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)
