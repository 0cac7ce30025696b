"""The key never reaches the model, a command, the transcript or the history (issue 10 §4).

Rules: every Request is redacted when it is built (one choke point for every byte sent);
every transcript line is redacted on its way to Lua; the core holds the key only in memory,
not in its environment (os.environ, the C environ, /proc/<core>/environ)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import secrets
from sightline.providers.base import Request
from sightline.ui.transcript import Transcript
from tests.conftest import ROOT
from tests.fakeapi import fake_api

__all__ = ["fake_api"]

KEY = "sk-unit-secret-7777"

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


def _plant(value: Any, where: int) -> Any:
    """`value` with the key put into its `where`-th string (or beside it when it has none)."""
    strings: list[tuple[Any, Any]] = []

    def walk(v: Any, parent: Any, key: Any) -> None:
        if isinstance(v, str):
            strings.append((parent, key))
        elif isinstance(v, dict):
            for k in v:
                walk(v[k], v, k)
        elif isinstance(v, list):
            for i, item in enumerate(v):
                walk(item, v, i)

    box = [value]
    walk(value, box, 0)
    if not strings:
        return [value, f"x{KEY}y"]
    parent, key = strings[where % len(strings)]
    parent[key] = parent[key] + KEY + parent[key]
    return box[0]


@settings(max_examples=60)
@given(system=st.text(max_size=20), body=JSON, where=st.integers(0, 50))
def test_no_request_can_hold_a_registered_key(system: str, body: Any, where: int) -> None:
    secrets.register(KEY)
    planted = _plant(body, where)
    request = Request(
        system=system + KEY,
        messages=[{"role": "user", "content": planted}],
        tools=[{"name": "t", "description": KEY, "input_schema": {"type": "object"}}],
    )
    sent = json.dumps([request.system, request.messages, request.tools])
    assert KEY not in sent and secrets.REDACTED in sent


def test_a_request_without_secrets_is_not_copied() -> None:
    secrets.register(KEY)
    messages = [{"role": "user", "content": [{"type": "text", "text": "plain"}]}]
    assert Request(system="s", messages=messages, tools=[]).messages is messages


def test_transcript_lines_are_redacted_on_their_way_to_lua() -> None:
    secrets.register(KEY)
    t = Transcript()
    t.add_user("hi")
    t.append_text(f"the key is {KEY[:5]}")
    t.append_text(f"{KEY[5:]}, see src/app.py")  # streamed in two pieces
    delta = t.take_delta()
    assert delta is not None
    assert KEY not in json.dumps(delta) and f"the key is {secrets.REDACTED}" in delta["lines"][-1]
    assert KEY not in json.dumps(t.full())


CAPTURE = """
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from sightline.domain import secrets
secrets.capture_env()
print(secrets.env_secret("ANTHROPIC_API_KEY"))
print("ANTHROPIC_API_KEY" in os.environ)
print(sys.argv[2].encode() in open("/proc/self/environ", "rb").read())
sys.stdout.flush()
subprocess.run(["sh", "-c", "cat /proc/$PPID/environ | base64 -w0; echo; env | base64 -w0"])
"""


def test_capture_env_leaves_the_key_nowhere_a_child_can_read() -> None:
    env = {
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_AUTH_TOKEN": KEY + "-token",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-c", CAPTURE, str(ROOT / "python"), KEY[3:]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.splitlines()
    assert out[:3] == [KEY, "False", "False"]
    parent_environ, child_env = (base64.b64decode(line) for line in out[3:5])
    assert KEY.encode() not in parent_environ and KEY.encode() not in child_env
    assert b"PATH=/usr/bin:/bin" in parent_environ  # the rest of the block is intact
