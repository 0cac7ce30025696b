"""The pure Python resolver (stdlib ast): members, scopes, nearest match, errors."""

from __future__ import annotations

from typing import Any

import pytest

from sightline.domain.pyresolve import ResolveError, check_syntax_scope, resolve, resolve_request

SRC = """\
import os

LIMIT: int = 3
NAMES = ["a"]


def top(xs):
    for x in xs:
        if x:
            print(x)
        elif x is None:
            for y in x:
                pass
        else:
            while x:
                x -= 1
    for z in xs:
        try:
            pass
        except ValueError:
            if z:
                pass
    with open(os.devnull) as f:
        f.read()
    match xs:
        case []:
            pass


class Box:
    size = 1

    @property
    @staticmethod
    def area(self):
        def helper():
            return 1

        async def later():
            async for item in self:
                pass

        return helper()

    class Inner:
        def area(self):
            return 2


if os.name:
    def conditional():
        pass
"""


def step(kind: str, index: int) -> dict[str, Any]:
    return {"kind": kind, "index_in_parent": index}


@pytest.mark.parametrize(
    ("key", "scope", "near", "expected"),
    [
        ("top", None, None, (7, 27)),
        ("LIMIT", None, None, (3, 3)),
        ("NAMES", None, None, (4, 4)),
        ("Box", None, None, (30, 47)),
        ("Box.size", None, None, (31, 31)),
        ("Box.area", None, None, (33, 43)),  # decorators included
        ("area", None, 46, (46, 47)),  # nearest of Box.area and Box.Inner.area
        ("area", None, 1, (33, 43)),
        ("Inner.area", None, None, (46, 47)),
        ("Box.area.helper", None, None, (36, 37)),
        ("conditional", None, None, (51, 52)),  # defined under an if
        ("top", [step("for", 0)], None, (8, 16)),
        ("top", [step("for", 1)], None, (17, 22)),
        ("top", [step("for", 0), step("if", 0)], None, (9, 16)),
        # elif continues its if: the for inside it is directly inside the if
        ("top", [step("for", 0), step("if", 0), step("for", 0)], None, (12, 13)),
        ("top", [step("for", 0), step("if", 0), step("while", 0)], None, (15, 16)),
        ("top", [step("for", 1), step("try", 0), step("if", 0)], None, (21, 22)),
        ("top", [step("block", 0)], None, (23, 24)),
        ("top", [step("switch", 0)], None, (25, 27)),
        ("Box.area", [step("function", 1), step("for", 0)], None, (40, 41)),
        ("Box", [step("function", 0)], None, (33, 43)),  # methods are functions in a class
        (None, [step("function", 0), step("for", 1)], None, (17, 22)),
        (None, [step("if", 0)], None, (50, 52)),
    ],
)
def test_resolve(
    key: str | None, scope: list[dict[str, Any]] | None, near: int | None, expected: tuple[int, int]
) -> None:
    assert resolve(SRC, key, scope, near) == expected


def test_nearest_applies_to_the_final_scope() -> None:
    src = "def f():\n    for a in b:\n        pass\n\n\ndef f():\n    for c in d:\n        pass\n"
    assert resolve(src, "f", [step("for", 0)], 7) == (7, 8)
    assert resolve(src, "f", [step("for", 0)], 2) == (2, 3)


@pytest.mark.parametrize(
    ("key", "scope", "error"),
    [
        ("nope", None, "member_key 'nope' not found in the file"),
        ("Inner.size", None, "member_key 'Inner.size' not found in the file"),
        ("top", [step("for", 2)], "syntax_scope step 1 (for #2) not found in top: it has 2 such"),
        ("top", [step("for", 0), step("if", 1)], "syntax_scope step 2 (if #1) not found in top"),
        ("top", [step("loop", 0)], "syntax_scope step 1: kind must be one of for, while, if"),
        (
            "top",
            [step("for", -1)],
            "syntax_scope step 1: index_in_parent must be a whole number ≥ 0, got -1",
        ),
        (
            "top",
            [{"kind": "for"}],
            "syntax_scope step 1: index_in_parent must be a whole number ≥ 0, got None",
        ),
        ("top", "for", "syntax_scope must be a list"),
    ],
)
def test_errors_are_texts(key: str, scope: Any, error: str) -> None:
    res = resolve(SRC, key, scope, None)
    assert isinstance(res, str) and res.startswith(error), res


def test_syntax_error() -> None:
    assert resolve("def f(:\n", "f", None, None) == "cannot parse the file: invalid syntax (line 1)"


def test_non_ascii_before_elif() -> None:
    src = (
        "def f():\n    if 'é':\n        pass\n    elif 'ü':\n        for x in y:\n            ...\n"
    )
    assert resolve(src, "f", [step("if", 0), step("for", 0)], None) == (5, 6)


def test_check_scope_accepts_float_indices_from_json() -> None:
    assert check_syntax_scope([{"kind": "for", "index_in_parent": 1.0}])[0].index_in_parent == 1
    with pytest.raises(ResolveError):
        check_syntax_scope([{"kind": "for", "index_in_parent": True}])


def test_resolve_request() -> None:
    out = resolve_request({"text": SRC, "member_key": "Box.area", "near_line": 30})
    assert out == {"start_line": 33, "end_line": 43}
    with pytest.raises(ResolveError, match="not found"):
        resolve_request({"text": SRC, "member_key": "missing"})
    with pytest.raises(ResolveError, match="text must be a string"):
        resolve_request({"member_key": "x"})


def test_huge_or_deep_input_is_refused_with_a_clear_text() -> None:
    """A reveal's lookup is bounded (it was the removed `resolve.python` request's schema's
    job; resolve_request holds the same bounds for the agent's and the MCP server's reveal)."""
    big = "x = 1\n" * 1_000_000
    with pytest.raises(ResolveError, match="text is longer than 4194304 characters"):
        resolve_request({"text": big, "member_key": "x"})
    with pytest.raises(ResolveError, match="member_key is longer than 1024 characters"):
        resolve_request({"text": "a = 1\n", "member_key": "a." * 5000})
    with pytest.raises(ResolveError, match=r"too many nested parentheses \(line 1\)"):
        resolve_request({"text": "x = " + "(" * 200_000, "member_key": "x"})
    for deep in ["x = a" + ".b" * 200_000, "x = " + "-" * 100_000 + "1"]:
        with pytest.raises(ResolveError, match="it is nested too deeply"):
            resolve_request({"text": deep, "member_key": "x"})
