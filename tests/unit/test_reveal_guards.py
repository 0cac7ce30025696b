"""What reveal and go_to_position refuse, and the deadline on the core's calls into Neovim:
FIFOs, /dev, /proc and /sys (issue 10 §3, §4), buffers holding the API key (§4), and a call
that waited past its deadline (§7)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.editor.port import EditorError, NvimEditor
from sightline.tools import view


class BusyNvim:
    """pynvim's surface NvimEditor uses, with a loop that is busy until released."""

    def __init__(self) -> None:
        self.queued: list[Callable[[], None]] = []
        self.sent: list[Any] = []

    def async_call(self, fn: Callable[[], None]) -> None:
        self.queued.append(fn)

    def exec_lua(self, code: str, *args: Any) -> Any:
        self.sent.append(args)
        return "done"

    def run_queued(self) -> None:
        for fn in self.queued:
            fn()


def test_a_core_call_that_timed_out_is_never_sent() -> None:
    fake = BusyNvim()
    ed = NvimEditor(fake, timeout_s=0.2)
    errors: list[str] = []

    def worker() -> None:
        try:
            ed.read_text("/nowhere", 10)
        except EditorError as err:
            errors.append(str(err))

    t = threading.Thread(target=worker)
    t0 = time.monotonic()
    t.start()
    t.join(5)
    assert time.monotonic() - t0 < 1
    assert errors == [
        "Neovim did not answer within 0.2 s (is it busy or waiting for input?); "
        "the call was dropped and will not run later"
    ]
    fake.run_queued()  # the loop gets to it late
    assert fake.sent == []


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["file_path", "start_line", "end_line", "member_key", "duration_ms", "x"]),
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    )
)
def test_check_args_accepts_only_declared_types(args: dict[str, Any]) -> None:
    """Rule: what check_args passes on has only declared names, each of its declared type."""
    checked, err = view.check_args(view.REVEAL_DEF, args)
    props = view.REVEAL_DEF["inputSchema"]["properties"]
    if checked is None:
        assert err
        return
    for key, value in checked.items():
        want = props[key]["type"]
        assert {"string": str, "integer": int}[want] is type(value)
