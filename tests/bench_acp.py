"""ACP stream overhead, two rows:

* per streamed agent message chunk, the client's cost from the JSON notification to the
  transcript (the SDK's pydantic validation + sightline's handler + the transcript append),
  median and p95 over a 5 000-chunk reply. The push to Neovim (ui/push.py, paced by Neovim)
  is outside the per-chunk path and is built here with each flush;
* Neovim's keystroke latency while a 5 000-chunk reply streams end to end (the scripted
  agent tests/acp_agent.py → the SDK → the core → the pane) into a transcript of 10 000
  lines, UI attached, typed in an editor buffer in Insert mode: measured as the built-in
  provider's row in bench_pane.py (tests/benchutil.py keystroke_latency), same bound. The
  agent sends a chunk every millisecond, ten times a fast model's rate.

Run alone: python -m tests.bench_acp (or through `make bench`)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from acp.schema import SessionNotification  # noqa: E402

from sightline.providers.acp.client import SightlineClient, TurnContext  # noqa: E402
from sightline.ui.push import Ui  # noqa: E402
from sightline.ui.transcript import Transcript  # noqa: E402
from tests.benchutil import child, close, keystroke_latency, latency_row, wait  # noqa: E402

CHUNKS = 5000
TARGET_P95_US = 200.0


class _Editor:
    """The one port method the stream uses (the pane's updates)."""

    def notify_ui(
        self, build: Callable[[], dict[str, Any]], applied: Callable[[], None] | None = None
    ) -> None:
        build()
        if applied is not None:
            applied()


class _Session:
    def __init__(self) -> None:
        self.transcript = Transcript()
        self.ui = Ui(_Editor(), self.transcript, lambda: {})  # type: ignore[arg-type]

    def record(self, record: dict[str, Any]) -> None:
        pass


class _Turn:
    def __init__(self) -> None:
        self.session = _Session()
        self.lock = threading.Lock()
        self.partial = ""

    def cancelled(self) -> bool:
        return False


def _measure() -> list[float]:
    client = SightlineClient()
    turn = _Turn()
    client.ctx = TurnContext(turn, True)  # type: ignore[arg-type]
    raw = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "a few words of a reply "},
        },
    }

    async def run() -> list[float]:
        out = []
        for i in range(CHUNKS + 200):
            t0 = time.perf_counter()
            note = SessionNotification.model_validate(raw)
            await client.session_update(note.session_id, note.update)
            t1 = time.perf_counter()
            if i >= 200:  # warm-up
                out.append((t1 - t0) * 1e6)
        return out

    samples = asyncio.run(run())
    turn.session.ui.flush()
    return samples


KEYS = 300
PREFILL_LINES = 10_000


def _state(nv: Any) -> str:
    return str(nv.exec_lua("return require('sightline').status().state"))


def bench_typing(keys: int = KEYS, chunks: int = CHUNKS) -> list[dict[str, Any]]:
    import json
    import tempfile

    from tests.screen import Screen

    with tempfile.TemporaryDirectory() as tmp:
        script, log = Path(tmp, "script.json"), Path(tmp, "agent.log")
        fill = "".join(f"line {i} of an earlier reply\n" for i in range(PREFILL_LINES))
        stream = {"stream": chunks, "size": 6, "prose": True, "pause_ms": 1}
        script.write_text(json.dumps({"turns": [[{"say": fill}], [stream]]}))
        agent = [sys.executable, str(ROOT / "tests" / "acp_agent.py")]
        cmd = [*agent, "--script", str(script), "--log", str(log)]
        nv = child(tmp, {"provider": {"name": "acp", "agent": {"cmd": cmd, "client_writes": True}}})
        screen = None
        try:
            screen = Screen.attach(nv, 120, 40)
            nv.exec_lua("require('sightline.ui.pane').show()")
            nv.exec_lua("require('sightline').send('fill')")
            wait(lambda: _state(nv) == "idle" and log.exists() and "prompt" in log.read_text())
            lines = (
                "return vim.api.nvim_buf_line_count("
                "require('sightline.ui.pane').buffers().transcript)"
            )
            wait(lambda: nv.exec_lua(lines) >= PREFILL_LINES)
            nv.exec_lua("require('sightline').send('stream')")
            first = nv.exec_lua(lines)
            wait(lambda: nv.exec_lua(lines) > first + 2)  # the reply streams
            samples = keystroke_latency(nv, screen, keys)
            streaming = _state(nv) == "working"
        finally:
            if screen is not None:
                screen.close()
            close(nv)
    bench = f"acp: keystroke → screen in a buffer, {chunks}-chunk reply streaming into 10k lines"
    return [latency_row(f"{bench} ({keys} keys)", samples, streaming)]


def bench_chunk() -> list[dict[str, Any]]:
    samples = sorted(_measure())
    med = statistics.median(samples)
    p95 = samples[int(len(samples) * 0.95)]
    return [
        {
            "bench": f"acp: agent chunk → transcript ({CHUNKS} chunks)",
            "value": f"median {med:.0f} µs, p95 {p95:.0f} µs",
            "target": f"p95 ≤ {TARGET_P95_US:g} µs",
            "met": p95 <= TARGET_P95_US,
            "name": "acp_chunk",
            "median": med,
            "p95": p95,
        }
    ]


def bench() -> list[dict[str, Any]]:
    return bench_chunk() + bench_typing()


def main() -> None:
    import logging

    logging.getLogger("asyncio").setLevel(logging.ERROR)
    for row in bench():
        mark = "✔" if row["met"] else "✘"
        sys.stdout.write(f"{row['bench']}: {row['value']}  ({row['target']}) {mark}\n")


if __name__ == "__main__":
    main()
