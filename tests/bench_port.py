"""Issue 11's benchmarks: what crosses the editor port.

* RPC round trips and bytes per accepted `propose_edit` and per `replace_selection` in a 10 MB
  buffer, counted by wrapping NvimEditor's one call path (the core's real tool code, a real
  child Neovim, autoaccept). Target: ≤ 2 round trips and bytes O(size of the change).
* A reveal of a Python member from an external RPC client (the MCP server's path: pyresolve
  in the client, then the port's reveal): no core process started; median ratio to one
  nvim_buf_set_extmark round trip ≤ 3.

Run alone: python -m tests.bench_port (or through `make bench`)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402

from sightline.agent.session import Session, Turn  # noqa: E402
from sightline.domain.scope import Selection  # noqa: E402
from sightline.editor import port as editor  # noqa: E402
from sightline.tools import (  # noqa: E402
    selection,
    view,
    write,
)
from tests.bench_reveal import _medians_us  # noqa: E402
from tests.benchutil import child, descendants  # noqa: E402
from tests.effective_config import core_config  # noqa: E402

LINES = 200_000  # × ~55 bytes ≈ 10 MB
MAX_TRIPS = 2
MAX_BYTES = 4096  # a few lines of context around a one-line change, with framing


class Counting(editor.NvimEditor):
    """NvimEditor whose every RPC round trip is counted, with the bytes it moves."""

    trips = 0
    bytes = 0

    def notify_ui(self, build: Any, applied: Any = None) -> None:
        """The pane's pushes are not the tool's round trips, and here no plugin host's loop
        runs to send them from (they would be requests from another greenlet)."""
        if applied is not None:
            applied()

    def _exec(self, args: tuple[Any, ...]) -> Any:
        result = super()._exec(args)
        self.trips += 1
        sent = msgpack.packb([editor.PORT_CALL, list(args)], unicode_errors="surrogateescape")
        got = msgpack.packb(result, unicode_errors="surrogateescape")
        self.bytes += len(sent) + len(got)
        return result


def _row(bench: str, trips: int, size: int, name: str) -> dict[str, Any]:
    return {
        "bench": bench,
        "value": f"{trips} round trips, {size} bytes",
        "target": f"≤ {MAX_TRIPS} round trips, ≤ {MAX_BYTES} bytes (O(change), 10 MB buffer)",
        "met": trips <= MAX_TRIPS and size <= MAX_BYTES,
        "name": name,
        "trips": trips,
        "bytes": size,
    }


def bench_edits() -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        big = ws / "big.txt"
        big.write_text(
            "".join(f"line {i:06d}: some text to make it ten megabytes\n" for i in range(LINES))
        )
        nv = child(tmp, {"provider": {"name": "echo"}}, "--cmd", f"cd {ws}")
        try:
            nv.command("edit big.txt")
            ed = Counting(nv)
            session = Session(ed, core_config(autoaccept=True), str(ws), [], Path(tmp, "history"))
            turn = Turn(1, session)
            args = {"path": "big.txt", "old_string": "line 150000:", "new_string": "LINE 150000:"}
            res = write.propose_edit(turn, args)
            assert not res.is_error, res.content
            rows.append(
                _row("accepted propose_edit, 10 MB buffer", ed.trips, ed.bytes, "port_propose_edit")
            )
            buf = nv.current.buffer.handle
            text = nv.api.buf_get_lines(buf, 160_000, 160_001, True)[0]
            sel = Selection(buf, 160_000, 0, 160_000, len(text.encode()), text, "big.txt")
            turn = Turn(2, session, scope=sel)
            ed.trips = ed.bytes = 0
            res = selection.REPLACE_SELECTION.handler(turn, {"text": "replaced"})
            assert not res.is_error, res.content
            rows.append(
                _row(
                    "accepted replace_selection, 10 MB buffer",
                    ed.trips,
                    ed.bytes,
                    "port_replace_selection",
                )
            )
        finally:
            nv.close()
    return rows


PY_SRC = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200)) + (
    "class Parser:\n    def parse(self):\n        return 1\n"
)


def bench_python_reveal() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "a.py").write_text(PY_SRC)
        nv = child(tmp, {"provider": {"name": "echo"}}, "--cmd", f"cd {ws}")
        try:
            nv.command("edit a.py")
            pid = nv.eval("getpid()")
            buf = nv.current.buffer.handle
            ns = nv.api.create_namespace("bench.floor")

            def floor(i: int) -> Any:
                return nv.api.buf_set_extmark(buf, ns, i % 100, 0, {})

            port = editor.NvimEditor.direct(nv)

            def reveal(i: int) -> Any:
                args = {"file_path": "a.py", "member_key": "Parser.parse", "duration_ms": 60000}
                res = view.call(port, "reveal", args)
                assert res == "OK", res
                return res

            floor_us, med = _medians_us(floor, reveal, runs=200)
            ratio = med / floor_us
            no_core = descendants(pid) == []
        finally:
            nv.close()
    return [
        {
            "bench": "reveal of a Python member from an RPC client (pyresolve, then the port)",
            "value": f"{med:.0f} µs vs set_extmark {floor_us:.0f} µs = {ratio:.2f}×; "
            + ("no core started" if no_core else "a core was started"),
            "target": "median ratio ≤ 3, no core process",
            "met": ratio <= 3 and no_core,
            "name": "port_python_reveal",
            "ratio": ratio,
        }
    ]


def bench() -> list[dict[str, Any]]:
    return bench_edits() + bench_python_reveal()


def main() -> None:
    for row in bench():
        mark = "✔" if row["met"] else "✘"
        sys.stdout.write(f"{row['bench']}: {row['value']}  ({row['target']}) {mark}\n")


if __name__ == "__main__":
    main()
