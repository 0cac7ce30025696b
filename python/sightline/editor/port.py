"""The editor port: the one interface the core uses to touch Neovim.

`Editor` mirrors lua/sightline/port.lua method for method (tests/unit/test_port.py checks
the two lists); `NvimEditor` implements each method as one call of the port function by name.
What crosses is data and short codes (`missing`, `stale`, `ambiguous`, …) that the core words,
except where port.lua's header says Lua words it: the view methods' answers ('OK…' or what is
wrong, the public `reveal()` contract), a range check's `error`, and a `detail` or an apply's
`error` (why the buffer or Neovim refused), shown after the core's own words. This module holds
the only Lua source text in the core.

pynvim's API may only be used on its event-loop thread. Worker threads go through
async_call and wait for the result, so a turn can read and change buffers safely.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal, NotRequired, Protocol, TypedDict, cast

from sightline.editor import msgtext


class EditorError(Exception):
    """Neovim refused or failed a call; the message is safe to show."""


# Every read or write through a loaded buffer first brings it up to date with its file
# (lua/sightline/port/buffers.lua): an unmodified buffer is reloaded; one that could not be
# says why, and the core words it (domain/disk.py): 'conflict' = the file changed on disk while
# the buffer has unsaved changes, 'deleted' = the file is gone and the buffer is the only copy.
Disk = Literal["conflict", "deleted"]


class FlatRange(TypedDict):
    """A range of a buffer: 0-based rows, byte columns, the end exclusive."""

    buffer: int
    start_row: int
    start_col: int
    end_row: int
    end_col: int


class RangeInfo(TypedDict, total=False):
    """describe_range: a checked range, its text and names; or `error`."""

    range: FlatRange
    text: str
    name: str
    title: str
    path: str
    filetype: str
    buftype: str
    error: str


class Found(TypedDict, total=False):
    """find_unique: {missing} | {error, detail?} | {count} | {count=1, buffer, first_line,
    lines, …}."""

    missing: bool
    error: str  # 'load_failed' | 'unchangeable' | 'empty_needle'
    detail: str
    count: int
    buffer: int  # the buffer searched (where an edit's hunks are drawn)
    first_line: int  # 0-based row of lines[0]
    lines: list[str]
    modified: bool
    disk: Disk  # with a count too: the file changed on disk and the buffer was kept


class Loaded(TypedDict, total=False):
    """load_lines: {buffer, lines, modified} | {missing} | {error, detail}."""

    missing: bool
    error: str  # 'load_failed' | 'unchangeable'
    detail: str
    buffer: int
    lines: list[str]
    modified: bool
    disk: Disk


class Diagnostic(TypedDict, total=False):
    """One of vim.diagnostic's, as port.diagnostics hands it over (0-based rows)."""

    path: str
    lnum: int
    col: int
    end_lnum: int
    severity: int  # 1 error … 4 hint
    message: str
    source: str
    code: str


class Diagnostics(TypedDict):
    """diagnostics: whether a matching buffer is loaded, its items, whether they were cut."""

    loaded: bool
    items: list[Diagnostic]
    truncated: bool


class DiagnosticsQuery(TypedDict, total=False):
    root: str  # every loaded normal buffer under it
    path: str  # or only the buffer of this path


class EditorBuffer(TypedDict):
    """editor_buffer: the editor window's buffer, unsaved changes included."""

    name: str  # absolute, symlinks resolved; "" for an unnamed buffer
    text: str
    filetype: str
    modified: bool
    disk: NotRequired[Disk]


class HunkSpec(TypedDict):
    """show_hunks: a waiting edit's hunks, in lines of its buffer (sightline.HunkSpec)."""

    id: int
    buffer: int
    path: str
    hunks: list[dict[str, object]]  # diff.Hunk.as_data()
    pane: NotRequired[int]  # the pane of the conversation that made it (its keys decide there)


class Reanchored(TypedDict, total=False):
    """reanchor_range: the selection's range now and its surroundings; or `error`."""

    range: FlatRange
    first_line: int
    lines: list[str]
    path: str
    error: str  # 'gone' | 'missing' | 'ambiguous'


class Applied(TypedDict, total=False):
    """What an apply or create did (lua/sightline/port/apply.lua's sightline.Applied)."""

    ok: bool
    saved: bool
    why: str  # 'nofile' | 'modified' | 'changed_on_disk' | 'write_failed'
    error: str
    stale: bool
    count: int


class Replaced(TypedDict, total=False):
    """replace_range: the new text's range and how the save went; or `error` (+ `detail`)."""

    range: FlatRange
    applied: Applied
    error: str  # 'gone' | 'missing' | 'ambiguous' | 'unchangeable'
    detail: str


class Lines(TypedDict):
    total: int
    lines: list[str]
    modified: bool
    disk: NotRequired[Disk]


class BufferText(TypedDict):
    """read_text: whole lines of a loaded buffer."""

    text: str
    disk: NotRequired[Disk]


class FileState(TypedDict, total=False):
    """file_state: whether the file has a loaded buffer (brought up to date with its file
    first) and, when that holds unsaved changes, its text (else the file's bytes on disk are
    its state)."""

    loaded: bool
    modified: bool
    text: str
    disk: Disk


class KeptBuffer(TypedDict):
    """sync_files: a buffer left as it was although its file changed, and why."""

    path: str
    disk: Disk


class EditSpec(TypedDict):
    path: str
    anchor: str  # must occur exactly once in the buffer
    rel_start: int  # byte offsets into the anchor
    rel_end: int
    text: str


class CreateSpec(TypedDict):
    path: str
    text: str


class PythonSource(TypedDict):
    text: str
    version: str  # a buffer's changedtick or the file's mtime and size


class PythonResolution(TypedDict):
    """A Python member resolved by the caller (reveal's `python`)."""

    start_line: NotRequired[int]
    end_line: NotRequired[int]
    error: NotRequired[str]
    partial: NotRequired[dict[str, int]]
    version: NotRequired[str]  # of the source it was made from (python_source's)


class Editor(Protocol):
    """Everything the core can do to Neovim (lua/sightline/port.lua)."""

    def apply_edit(self, spec: EditSpec) -> Applied:
        """Apply an accepted edit: its anchor must occur exactly once (else `stale` and the
        count); one ranged edit after an undo break, then the save rule."""
        ...

    def clear_hunks(self, proposal_id: int) -> None:
        """Remove the inline drawing of a proposal (decided, stopped, turn over)."""
        ...

    def close_compare(self, proposal_id: int) -> None:
        """Close the compare view of a proposal (rejected)."""
        ...

    def create_file(self, spec: CreateSpec) -> Applied:
        """Create a new file's buffer with the text and write it (refused if it exists by
        now)."""
        ...

    def describe_range(self, flat: dict[str, Any]) -> RangeInfo:
        """Check a flat range against its buffer: the range, its text, name and title; or
        `error`."""
        ...

    def diagnostics(self, query: DiagnosticsQuery) -> Diagnostics:
        """vim.diagnostic's items of the loaded buffers under `root` (or of `path` alone),
        bounded."""
        ...

    def drop_buffer(self, path: str) -> bool:
        """Wipe the loaded buffer of `path` before the core deletes the file (a rewind);
        False when it holds unsaved changes (then it stays, and so must the file)."""
        ...

    def editor_buffer(self, max_bytes: int) -> EditorBuffer | None:
        """The editor window's buffer: name, whole lines up to `max_bytes` (then one cut
        line), filetype; None when no window shows the user's editing."""
        ...

    def file_state(self, path: str, max_bytes: int) -> FileState:
        """Whether `path` has a loaded buffer and, when it holds unsaved changes, its whole
        lines up to `max_bytes` (a checkpoint's view of the file)."""
        ...

    def find_unique(self, path: str, needle: str, context: int) -> Found:
        """How often `needle` occurs in the buffer of `path` (loaded if needed); when once,
        the lines it spans with `context` lines around."""
        ...

    def go_to_position(self, args: dict[str, Any], keys: list[str]) -> str:
        """Move the cursor (and select) in the editor window: 'OK…' or what is wrong."""
        ...

    def load_lines(self, path: str) -> Loaded:
        """The whole buffer of `path`, loaded hidden if needed; or why there is none."""
        ...

    def python_source(self, file_path: str, max_bytes: int) -> PythonSource | None:
        """The text a reveal of `file_path` would look at, and its version, when it is
        Python."""
        ...

    def read_lines(self, target: str | int, first: int, last: int, max_lines: int) -> Lines | None:
        """Lines [first, last) of the loaded buffer of a path (or buffer number), or None."""
        ...

    def read_text(self, path: str, max_bytes: int) -> BufferText | None:
        """Whole lines, up to `max_bytes`, of the loaded buffer of `path`, or None."""
        ...

    def reanchor_range(self, flat: FlatRange, text: str, context: int) -> Reanchored:
        """Re-anchor a selection; its range now and `context` lines around it, or an error
        code."""
        ...

    def replace_range(self, flat: FlatRange, old_text: str, new_text: str) -> Replaced:
        """Re-anchor and replace a selection as one undo step, then the save rule."""
        ...

    def reveal(self, args: dict[str, Any], keys: list[str], python: PythonResolution | None) -> str:
        """Reveal a range (`python`: the caller's resolution of a Python member): 'OK…' or
        what is wrong."""
        ...

    def reveal_attachment(self, args: dict[str, Any], keys: list[str]) -> str:
        """Reveal a transcript chip by id, as a click on it does."""
        ...

    def servername(self) -> str:
        """This Neovim's RPC address (v:servername)."""
        ...

    def show_hunks(self, spec: HunkSpec) -> bool:
        """Draw a waiting edit's hunks in its buffer; False when nothing was drawn."""
        ...

    def sync_files(self, paths: list[str]) -> list[KeptBuffer]:
        """Files seen changed on disk by their content: their loaded buffers brought up to
        date even where the stat hides the change; those kept (unsaved changes) and why."""
        ...

    def take_after(self, proposal_id: int) -> list[str] | None:
        """The compare view's after side (closing the view), or None when it is not open."""
        ...

    def notify_ui(
        self, build: Callable[[], dict[str, Any]], applied: Callable[[], None] | None = None
    ) -> None:
        """Queue a UI update for the pane; `build` runs on Neovim's side of the queue, so
        what it reads (status, transcript) is current when the update is sent. `applied`
        is called once Neovim has applied it, or could not (never on the caller's stack
        unless the editor applies it there)."""
        ...


# The methods of the port, as port.lua names them (the Protocol's own methods).
PORT_METHODS = tuple(
    sorted(n for n, v in vars(Editor).items() if callable(v) and not n.startswith("_"))
)

# The one chunk: port.call checks the deadline (seconds since the epoch) before it runs the
# named function. `pcall(require)` turns a Neovim without the plugin into a clear code
# instead of a Lua error (the MCP server attaches to any Neovim).
PORT_CALL = (
    "local ok, port = pcall(require, 'sightline.port') "
    "if not ok then return 'sightline:not-installed: ' .. tostring(port):match('^[^\\n]*') end "
    "return port.call(...)"
)
EXPIRED = "sightline:expired-call"
NOT_INSTALLED = "sightline:not-installed"
NO_SUCH = "sightline:no-such-port-function"


def port_args(deadline: float | None, name: str, *args: Any) -> tuple[Any, ...]:
    """PORT_CALL's arguments for port function `name`."""
    return (deadline, name, *args)


def deadline_after(timeout_s: float) -> float:
    """The one deadline rule: a call may act until `timeout_s` from now, in seconds since the
    epoch as port.call reads it (both clocks are the machine's; over TCP to another machine
    their skew counts against the timeout)."""
    return time.time() + timeout_s


def late(timeout_s: float) -> str:
    """What a caller is told when Neovim did not answer in time (the core's worker threads and
    the MCP server alike): the call carried its deadline, so it never acts later."""
    return (
        f"Neovim did not answer within {timeout_s:g} s (is it busy or waiting for input?); "
        "the call was dropped and will not run later"
    )


def _text(result: Any) -> str:
    """A view call's answer ('OK…' or what is wrong, the `reveal()` contract)."""
    if not isinstance(result, str):
        raise EditorError(f"unexpected answer from Neovim: {result!r}")
    return result


class NvimEditor:
    """The port over pynvim. Made on the loop thread (the core), a call from a worker thread
    is queued to the loop and carries the deadline `timeout_s` from now; `direct()` makes
    one for a thread that owns its connection (the MCP server's worker, a test)."""

    def __init__(self, nvim: Any, timeout_s: float = 30.0):
        self._nvim = nvim
        self._loop_thread: threading.Thread | None = threading.current_thread()
        self._timeout_s = timeout_s
        self._deadline: float | None = None

    @classmethod
    def direct(
        cls, nvim: Any, deadline: float | None = None, timeout_s: float = 30.0
    ) -> NvimEditor:
        """Calls straight from the calling thread, each carrying `deadline` (one for the whole
        of one tool call; `timeout_s` is what the late message names)."""
        ed = cls(nvim, timeout_s)
        ed._loop_thread, ed._deadline = None, deadline
        return ed

    # -- the port's methods: one call each --------------------------------------------------

    def apply_edit(self, spec: EditSpec) -> Applied:
        return cast(Applied, self._call("apply_edit", spec))

    def clear_hunks(self, proposal_id: int) -> None:
        self._call("clear_hunks", proposal_id)

    def close_compare(self, proposal_id: int) -> None:
        self._call("close_compare", proposal_id)

    def create_file(self, spec: CreateSpec) -> Applied:
        return cast(Applied, self._call("create_file", spec))

    def describe_range(self, flat: dict[str, Any]) -> RangeInfo:
        return cast(RangeInfo, self._call("describe_range", flat))

    def diagnostics(self, query: DiagnosticsQuery) -> Diagnostics:
        return cast(Diagnostics, self._call("diagnostics", query))

    def drop_buffer(self, path: str) -> bool:
        return bool(self._call("drop_buffer", path))

    def editor_buffer(self, max_bytes: int) -> EditorBuffer | None:
        return cast("EditorBuffer | None", self._call("editor_buffer", max_bytes))

    def file_state(self, path: str, max_bytes: int) -> FileState:
        return cast(FileState, self._call("file_state", path, max_bytes) or {})

    def find_unique(self, path: str, needle: str, context: int) -> Found:
        return cast(Found, self._call("find_unique", path, needle, context))

    def go_to_position(self, args: dict[str, Any], keys: list[str]) -> str:
        return _text(self._call("go_to_position", args, keys))

    def load_lines(self, path: str) -> Loaded:
        return cast(Loaded, self._call("load_lines", path))

    def python_source(self, file_path: str, max_bytes: int) -> PythonSource | None:
        return cast("PythonSource | None", self._call("python_source", file_path, max_bytes))

    def read_lines(self, target: str | int, first: int, last: int, max_lines: int) -> Lines | None:
        return cast("Lines | None", self._call("read_lines", target, first, last, max_lines))

    def read_text(self, path: str, max_bytes: int) -> BufferText | None:
        return cast("BufferText | None", self._call("read_text", path, max_bytes))

    def reanchor_range(self, flat: FlatRange, text: str, context: int) -> Reanchored:
        return cast(Reanchored, self._call("reanchor_range", flat, text, context))

    def replace_range(self, flat: FlatRange, old_text: str, new_text: str) -> Replaced:
        return cast(Replaced, self._call("replace_range", flat, old_text, new_text))

    def reveal(self, args: dict[str, Any], keys: list[str], python: PythonResolution | None) -> str:
        return _text(self._call("reveal", args, keys, python))

    def reveal_attachment(self, args: dict[str, Any], keys: list[str]) -> str:
        return _text(self._call("reveal_attachment", args, keys))

    def servername(self) -> str:
        return str(self._call("servername") or "")

    def show_hunks(self, spec: HunkSpec) -> bool:
        return bool(self._call("show_hunks", spec))

    def sync_files(self, paths: list[str]) -> list[KeptBuffer]:
        return list(self._call("sync_files", paths) or [])

    def take_after(self, proposal_id: int) -> list[str] | None:
        lines = self._call("take_after", proposal_id)
        return None if lines is None else list(lines)

    def notify_ui(
        self, build: Callable[[], dict[str, Any]], applied: Callable[[], None] | None = None
    ) -> None:
        # Always queued, even from the loop thread: the payload is built when its turn in the
        # loop comes, after every request answered before it, so status is never stale.
        # A request, not a notification, when the caller paces by it: its answer says Neovim
        # applied the update. The loop waits for it in a greenlet of its own, so requests
        # from Neovim are served meanwhile.
        def send() -> None:
            try:
                payload = msgtext.safe(build())
                self._nvim.exec_lua(PORT_CALL, None, "notify_ui", payload, async_=applied is None)
            finally:  # (an error is pynvim's to log, as any callback's)
                if applied is not None:
                    applied()

        self._nvim.async_call(send)

    # -- the machinery ----------------------------------------------------------------------

    def _on_loop(self) -> bool:
        return threading.current_thread() is self._loop_thread

    def _call(self, name: str, *args: Any) -> Any:
        if self._loop_thread is None:
            return self._run(self._deadline, name, args)
        if self._on_loop():
            # A handler Neovim waits on: it answers at once, no deadline needed.
            return self._run(None, name, args)
        deadline = deadline_after(self._timeout_s)
        future: Future[Any] = Future()

        def run() -> None:
            if time.time() > deadline or not future.set_running_or_notify_cancel():
                return  # queued past the deadline (or given up): never sent
            try:
                future.set_result(self._run(deadline, name, args))
            except BaseException as err:
                future.set_exception(err)

        self._nvim.async_call(run)
        try:
            return future.result(timeout=self._timeout_s)
        except FutureTimeout:
            future.cancel()
            raise EditorError(late(self._timeout_s)) from None

    def _run(self, deadline: float | None, name: str, args: tuple[Any, ...]) -> Any:
        """One port call, its codes for "not served" turned into the one message each."""
        result = self._exec(port_args(deadline, name, *args))
        if not isinstance(result, str):
            return result
        if result == EXPIRED:
            raise EditorError(late(self._timeout_s))
        if result.startswith(NOT_INSTALLED):
            detail = result[len(NOT_INSTALLED) :].lstrip(": ")
            raise EditorError(f"sightline is not installed in this Neovim: {detail}")
        if result == NO_SUCH:
            raise EditorError(f"this Neovim has an older sightline without {name}: update it")
        return result

    def _exec(self, args: tuple[Any, ...]) -> Any:
        import pynvim

        try:
            return self._nvim.exec_lua(PORT_CALL, *args)
        except pynvim.NvimError as err:
            raise EditorError(str(err)) from None
