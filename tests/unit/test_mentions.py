"""Parsing @ext:<name> and @<path> mentions; cleaning text for display."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.domain.mentions import (
    escape_path,
    extension_mentions,
    file_mentions,
    mention_at_end,
    parse_mentions,
    strip_mentions,
    unescape_path,
)
from sightline.domain.text import clean_display_text


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("@ext:foo explain this", ["foo"]),
        ("use @ext:foo and @ext:bar.baz", ["foo", "bar.baz"]),
        ("see @ext:foo.", ["foo"]),
        ("see @ext:foo... and", ["foo"]),
        ("(@ext:foo), [@ext:bar]", ["foo", "bar"]),
        ('"@ext:foo" `@ext:bar`', ["foo", "bar"]),
        ("@ext:foo,@ext:bar", ["foo"]),  # the second is glued to a comma, i.e. inside a word
        ("line one\n@ext:k8s-tools_2", ["k8s-tools_2"]),
        ("@ext:foo's rules", ["foo"]),
    ],
)
def test_extension_mentions(text: str, names: list[str]) -> None:
    assert extension_mentions(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "foo@ext:x",  # inside a word
        "mail a@b.com",  # an e-mail address
        "user@ext:foo.com",  # an address whose domain starts like a mention
        "@ext:Foo",  # not a valid name
        "@ext:",  # nothing after it
        "@ext:-x",  # names start with a letter or digit
        "@ext:foo@bar",  # glued to something else
        "@ext:foo/bar",
    ],
)
def test_not_extension_mentions(text: str) -> None:
    assert extension_mentions(text) == []


def test_repeats_are_dropped_keeping_first_seen_order() -> None:
    text = "@ext:b then @ext:a, again @ext:b and @ext:a."
    assert extension_mentions(text) == ["b", "a"]


def test_mentions_across_text_parts_keep_part_order() -> None:
    found = parse_mentions(["@src/a.py @ext:one", "@ext:two @ext:one @src/a.py @b.txt"])
    assert [(m.kind, m.value, m.part) for m in found] == [
        ("file", "src/a.py", 0),
        ("extension", "one", 0),
        ("extension", "two", 1),
        ("file", "b.txt", 1),
    ]


def test_mention_records_token_and_offset() -> None:
    [m] = parse_mentions("hi @ext:foo.")
    assert (m.token, m.start) == ("@ext:foo", 3)
    [f] = parse_mentions("x @my\\ file.txt!")
    assert (f.kind, f.value, f.token, f.start) == ("file", "my file.txt", "@my\\ file.txt", 2)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("look at @src/main.py please", ["src/main.py"]),
        ("@README.md.", ["README.md"]),
        ("(see @docs/a.md)", ["docs/a.md"]),
        ("@my\\ notes/file\\ 1.txt and @b", ["my notes/file 1.txt", "b"]),
        ("@a.py @./a.py @a.py", ["a.py", "./a.py"]),
        ("@/abs/path.txt", ["/abs/path.txt"]),
        ("trailing backslash @dir\\", ["dir"]),
        ("escaped dot kept @name\\.", ["name."]),
    ],
)
def test_file_mentions(text: str, paths: list[str]) -> None:
    assert file_mentions(text) == paths


@pytest.mark.parametrize("text", ["a@b.com", "x@y", "@ext:foo", "@ext:Bad", "@ alone", "@", "@."])
def test_not_file_mentions(text: str) -> None:
    assert file_mentions(text) == []


@pytest.mark.parametrize("path", ["plain.txt", "a b/c  d.txt", "back\\slash", "tab\there", ""])
def test_escape_round_trip(path: str) -> None:
    escaped = escape_path(path)
    assert escaped.replace("\\ ", "").count(" ") == 0  # every space is escaped
    assert unescape_path(escaped) == path
    if path:
        assert file_mentions(f"see @{escaped} now") == [path]


def test_strip_mentions_removes_only_extension_tokens() -> None:
    assert strip_mentions("  @ext:foo  explain   @src/a.py @ext:bar. ") == "explain @src/a.py"
    assert strip_mentions("mail a@b.com") == "mail a@b.com"


def test_clean_display_text() -> None:
    assert clean_display_text(None) == ""
    assert clean_display_text("  two\n lines\t here ") == "two lines here"
    assert clean_display_text("\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok\x00\x7f") == "red ok"
    assert clean_display_text("abcdefghij", 6) == "abcde…"
    assert clean_display_text("abc", 6) == "abc"


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ("@", (0, "")),
        ("see @bro", (4, "bro")),
        ("(@ext:k", (1, "ext:k")),
        ("@my\\ no", (0, "my\\ no")),  # an escaped space stays in the token
        ("@my\\", (0, "my\\")),  # a lone backslash: an escape being typed
        ("@node_modules/@ty", (0, "node_modules/@ty")),  # an @ inside a path
        ("@a @b", (3, "b")),
        ("@a b", None),  # the cursor left the mention
        ("mail a@b", None),
        ("x@", None),
        ("plain text", None),
        ("", None),
    ],
)
def test_mention_at_end(before: str, expected: tuple[int, str] | None) -> None:
    assert mention_at_end(before) == expected


def test_a_send_parses_its_text_once(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Core.send parses the message once; the file's part, the chip names and the MCP
    resources' parts all read that parse (they each parsed the text again)."""
    from sightline.core import Core
    from sightline.domain import mentions
    from tests.conftest import wait_for
    from tests.effective_config import effective
    from tests.fake_editor import FakeEditor

    (isolated_env / "a.py").write_text("A = 1\n")
    core = Core(FakeEditor())
    core.configure(effective())
    core.set_workspace(str(isolated_env))
    scanned: list[str] = []
    scan = mentions._mentions_in

    def counted(text: str, part: int) -> list[mentions.Mention]:
        scanned.append(text)
        return scan(text, part)

    monkeypatch.setattr(mentions, "_mentions_in", counted)
    text = "look at @a.py\nand @mcp:srv:file:///x.txt"
    core.send({"text": text})
    wait_for(lambda: core.session.turn is None, what="the echo turn ends")
    assert scanned.count(text) == 1
    assert core.session.conversation is not None
    [user] = [r for r in core.session.conversation.records if r.get("role") == "user"]
    sent = [b["text"] for b in user["content"]]
    assert sent[0] == text and any(p.startswith('<file path="a.py">') for p in sent)
    assert any("= @a.py" in p for p in sent)  # the chip's id, named for the model


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("read @url:https://docs.python.org/3/ please", ["https://docs.python.org/3/"]),
        ("see @url:http://x.org/a.", ["http://x.org/a"]),
        ("(@url:https://x.org/a?b=1&c=2)", ["https://x.org/a?b=1&c=2"]),
        ("@URL:https://x.org/", ["https://x.org/"]),
        ("@url:ftp://x.org/ @url:file:///etc/passwd @url:https:// mail@url:https://x.org/", []),
    ],
)
def test_url_mentions(text: str, urls: list[str]) -> None:
    found = parse_mentions(text)
    assert [m.value for m in found if m.kind == "url"] == urls
    # `@url:…` is never a file, whether or not it is a URL fetched.
    assert not any(m.kind == "file" and m.value.lower().startswith("url:") for m in found)


@given(st.text(alphabet="abc:/.?&=%-_()[]'\"`,;!", max_size=30), st.sampled_from(["http", "https"]))
def test_a_url_mention_is_the_url_up_to_whitespace_without_closing_punctuation(
    rest: str, scheme: str
) -> None:
    token = f"@url:{scheme}://h{rest}"
    (found,) = [m for m in parse_mentions(f"see {token} now") if m.kind == "url"]
    assert token.startswith(found.token) and found.value == found.token[len("@url:") :]
    assert not found.value.endswith(tuple(".,;!?)]}\"'`"))
