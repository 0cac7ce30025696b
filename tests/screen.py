"""What the user sees: a UI attached to a child Neovim (`ext_linegrid`), its cells read back.

The UI is a second RPC connection on the child's server address, with its own thread and
event loop, so the test's own session stays free to type (`nvim.input`) and to query.
Only the default grid is modelled: floats and splits are composed by Neovim onto it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Cell:
    text: str = " "
    hl: int = 0


@dataclass
class Screen:
    width: int
    height: int
    rows: list[list[Cell]] = field(default_factory=list)
    attrs: dict[int, dict[str, Any]] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)
    mode: str = ""
    flushes: int = 0
    channel: int = 0  # the UI connection's channel in the child
    _marked: int = 0  # the last mark the child sent (see `read_with_frame`)
    _frame_at_mark: list[str] = field(default_factory=list)  # the first frame after it
    _drawn_since_mark: bool = False
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _session: Any = None
    _thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------

    @classmethod
    def attach(cls, nvim: Any, width: int = 100, height: int = 30) -> Screen:
        import pynvim

        screen = cls(width, height)
        screen._clear()
        address = nvim.eval("v:servername")
        session = pynvim.attach("socket", path=address)
        screen._session = session
        ready = threading.Event()

        def run() -> None:
            screen.channel = session.request("nvim_get_api_info")[0]
            session.ui_attach(width, height, rgb=True, ext_linegrid=True, ext_hlstate=True)
            ready.set()
            with contextlib.suppress(Exception):
                session.run_loop(None, screen._on_notification)

        screen._thread = threading.Thread(target=run, name="screen-ui", daemon=True)
        screen._thread.start()
        ready.wait(10)
        screen.wait_for(lambda s: s.flushes > 0, what="the first frame")
        return screen

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.async_call(self._session.stop_loop)
            with contextlib.suppress(Exception):
                self._session.close()
            self._session = None

    def resize(self, width: int, height: int) -> None:
        """Resize the terminal, as a user dragging the window does."""
        assert self._session is not None
        self._session.async_call(lambda: self._session.ui_try_resize(width, height))
        self.wait_for(lambda s: (s.width, s.height) == (width, height), what="the resize")

    # -- redraw events ------------------------------------------------------------------

    def _clear(self) -> None:
        self.rows = [[Cell() for _ in range(self.width)] for _ in range(self.height)]

    def _on_notification(self, name: str, args: list[Any]) -> None:
        if name == "screen_mark":
            with self._lock:
                self._marked, self._drawn_since_mark = args[0], False
                self._lock.notify_all()
            return
        if name != "redraw":
            return
        with self._lock:
            for event in args:
                kind, *calls = event
                handler = getattr(self, f"_ev_{kind}", None)
                if handler is not None:
                    for call in calls:
                        handler(*call)
            self._lock.notify_all()

    def _ev_grid_resize(self, grid: int, width: int, height: int) -> None:
        if grid == 1:
            self.width, self.height = width, height
            self._clear()

    def _ev_grid_clear(self, grid: int) -> None:
        if grid == 1:
            self._clear()

    def _ev_grid_line(self, grid: int, row: int, col: int, cells: list[Any], *_: Any) -> None:
        if grid != 1 or row >= self.height:
            return
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            repeat = cell[2] if len(cell) > 2 else 1
            for _n in range(repeat):
                if col < self.width:
                    self.rows[row][col] = Cell(text, hl)
                col += 1

    def _ev_grid_scroll(
        self, grid: int, top: int, bot: int, left: int, right: int, rows: int, _cols: int
    ) -> None:
        if grid != 1:
            return
        span = range(top, bot - rows) if rows > 0 else range(bot - 1, top - rows - 1, -1)
        for row in span:
            self.rows[row][left:right] = self.rows[row + rows][left:right]

    def _ev_hl_attr_define(self, hl_id: int, rgb: dict[str, Any], _cterm: Any, info: Any) -> None:
        self.attrs[hl_id] = dict(rgb)
        found = (i.get("hi_name") or i.get("ui_name") for i in info or [] if isinstance(i, dict))
        names = [str(n) for n in found if n]
        if names:
            self.groups[hl_id] = names[-1]

    def _ev_mode_change(self, mode: str, _idx: int) -> None:
        self.mode = mode

    def _ev_flush(self) -> None:
        self.flushes += 1
        if not self._drawn_since_mark:
            self._frame_at_mark = ["".join(c.text for c in row) for row in self.rows]
        self._drawn_since_mark = True

    # -- reading --------------------------------------------------------------------------

    def lines(self) -> list[str]:
        with self._lock:
            return ["".join(c.text for c in row) for row in self.rows]

    def text(self) -> str:
        return "\n".join(self.lines())

    def row(self, index: int) -> str:
        return self.lines()[index]

    def find(self, needle: str) -> tuple[int, int] | None:
        """(row, column in cells) of the first occurrence of `needle` on screen."""
        with self._lock:
            for r, row in enumerate(self.rows):
                texts = [c.text for c in row]
                joined = "".join(texts)
                at = joined.find(needle)
                if at >= 0:
                    # Convert the string index to a cell index (wide chars take two cells).
                    count, col = 0, 0
                    while count < at:
                        count += len(texts[col])
                        col += 1
                    return r, col
        return None

    def hl_at(self, row: int, col: int) -> dict[str, Any]:
        """The RGB attributes of a cell (`foreground`, `background`, `bold`, …)."""
        with self._lock:
            return dict(self.attrs.get(self.rows[row][col].hl, {}))

    def group_at(self, row: int, col: int) -> str:
        """The highlight group that coloured a cell (from `ext_hlstate`), or ''."""
        with self._lock:
            return self.groups.get(self.rows[row][col].hl, "")

    def wait_for(
        self, predicate: Callable[[Screen], Any], timeout: float = 10.0, what: str = ""
    ) -> Any:
        """Wait until predicate(screen) is truthy after a redraw; fail with the screen shown."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = predicate(self)
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    shown = "\n".join("".join(c.text for c in row) for row in self.rows)
                    raise AssertionError(
                        f"timed out waiting for {what or predicate!r}; the screen:\n{shown}"
                    )
                self._lock.wait(min(left, 0.1))

    def read_with_frame(self, nvim: Any, lua: str) -> tuple[Any, list[str]]:
        """Evaluate the Lua chunk `lua` in the child; return its value and the rows of the frame
        Neovim drew right after it, in the same call: what that frame shows is what the value
        saw, whatever the child does meanwhile. (A value read in one call and the screen in
        another can disagree: the child may have changed between them, or not drawn yet.)"""
        with self._lock:
            mark = self._marked + 1
        value = nvim.exec_lua(
            "local chan, mark, chunk = ... "
            "local value = assert(loadstring(chunk))() "
            "vim.rpcnotify(chan, 'screen_mark', mark) "
            # `redraw!`: a plain `:redraw` sends no frame when nothing changed.
            "vim.cmd('redraw!') "
            "return value",
            self.channel,
            mark,
            lua,
        )
        self.wait_for(
            lambda s: s._marked == mark and s._drawn_since_mark, what="the frame after the read"
        )
        with self._lock:
            return value, list(self._frame_at_mark)

    def wait_text(self, needle: str, timeout: float = 10.0) -> tuple[int, int]:
        return self.wait_for(lambda s: s.find(needle), timeout, f"{needle!r} on screen")  # type: ignore[no-any-return]
