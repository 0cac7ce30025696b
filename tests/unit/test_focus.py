"""The agent never redirects the user's keystrokes (issue 9 item 4): go_to_position while the
user types in the composer, is on the command line or has the focus in the pane keeps the
window and mode, moves only the editor window's cursor and sets '< '> for `gv`.

Every test types what the user types with a UI attached and asserts what must not change."""

from __future__ import annotations

import socket
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sightline.tools.registry import call_label, default_registry
from tests.fakeapi import fake_api
from tests.mcp_util import listening

__all__ = ["fake_api", "listening"]


def _sdk_error(cause: BaseException, url: str = "https://api.example.test/v1/messages") -> Any:
    import anthropic
    import httpx2

    err = anthropic.APIConnectionError(request=httpx2.Request("POST", url))
    err.__cause__ = cause
    return err


@given(
    st.sampled_from([t.name for t in default_registry()] + ["no_such_tool"]),
    st.dictionaries(
        st.sampled_from(["path", "file_path", "command", "pattern", "glob", "text", "query"]),
        st.text(min_size=1, max_size=20),
    ),
)
def test_a_call_is_labelled_only_by_an_argument_its_tool_declares(
    name: str, args: dict[str, str]
) -> None:
    label = call_label(name, args)
    assert label == name or label.startswith(name + " ")
    if label != name:
        tool = next(t for t in default_registry() if t.name == name)
        declared = tool.input_schema["properties"]
        shown = label[len(name) + 1 :]
        assert any(
            k in declared and shown.rstrip("…") in v.splitlines()[0] + v for k, v in args.items()
        )


def test_a_connection_never_made_is_told_apart_from_one_lost() -> None:
    import httpx2

    from sightline.providers.anthropic_api import classify

    def message(cause: BaseException, url: str = "https://api.example.test/v1/messages") -> str:
        return classify(_sdk_error(cause, url), 60).message

    refused = httpx2.ConnectError("[Errno 111] Connection refused")
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert message(refused, "http://127.0.0.1:9/v1/messages").startswith(
        "Could not connect to 127.0.0.1:9: connection refused"
    )
    assert message(socket.gaierror(-2, "Name or service not known")).startswith(
        "Could not connect to api.example.test:443: the host name could not be resolved"
    )
    assert message(httpx2.ConnectTimeout("timed out")).startswith(
        "Could not connect to api.example.test:443: timed out"
    )
    unreachable = httpx2.ConnectError("unreachable")
    unreachable.__cause__ = OSError(101, "Network is unreachable")
    assert message(unreachable).startswith(
        "Could not connect to api.example.test:443: network is unreachable"
    )
    # Once connected, a broken stream is still what it was.
    assert "lost mid-reply" in message(httpx2.RemoteProtocolError("peer closed"))
    assert "lost mid-reply" in message(httpx2.ReadError("reset"))
