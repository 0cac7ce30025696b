"""The MCP client's pure parts: config (setup() and .mcp.json), tool names, kinds, schemas,
results, `@mcp:` mentions; and setup()'s validation in a child Neovim."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import mcp_config as mcfg
from sightline.domain import secrets
from sightline.domain.config import ConfigError
from sightline.domain.mentions import parse_mentions
from sightline.gate.policy import Kind, allowed_kinds
from sightline.mcp_client import tools as mtools
from sightline.tools.base import tools_for
from tests.effective_config import core_config

FUZZ = settings(
    max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
# Config values of every Lua shape, small (tests/unit/test_fuzz_rpc.py covers the huge ones).
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=8,
)


def servers(raw: Any) -> tuple[mcfg.ServerConfig, ...]:
    return core_config(mcp={"servers": raw}).mcp_servers


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"fs": {"command": 3}}, "mcp.servers.fs.command: expected a non-empty string"),
        ({"fs": {}}, "mcp.servers.fs: expected either command (stdio) or url (HTTP)"),
        ({"fs": {"command": "x", "url": "http://h"}}, "mcp.servers.fs: expected either"),
        ({"fs": {"command": "x", "args": "a b"}}, "mcp.servers.fs.args: expected a list"),
        ({"fs": {"command": "x", "env": {"A": 1}}}, "mcp.servers.fs.env.A: expected a string"),
        ({"fs": {"command": "x", "kind": "write"}}, "mcp.servers.fs.kind: expected 'read'"),
        ({"fs": {"command": "x", "tools": {"t": "rw"}}}, "mcp.servers.fs.tools.t: expected"),
        ({"fs": {"command": "x", "trust_annotations": 1}}, "trust_annotations: expected true"),
        ({"fs": {"command": "x", "type": "sse"}}, "sse is not supported"),
        (["fs"], "mcp.servers: expected a table of named servers"),
    ],
)
def test_a_bad_server_entry_is_named_by_its_path(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        servers(raw)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("fs", {"url": "ftp://h"}, ".mcp.json.fs.url: expected an http:// or https:// URL"),
        ("", {"command": "x"}, ".mcp.json: expected server names of 1 to 64 printable"),
        ("fs", {"command": ""}, ".mcp.json.fs.command: expected a non-empty string"),
    ],
)
def test_a_workspace_entry_is_checked_in_full(name: str, raw: Any, message: str) -> None:
    """setup()'s entries were checked by config.lua; a workspace's never passed through it."""
    with pytest.raises(mcfg.ServerConfigError) as err:
        mcfg.parse_server(name, raw, ".mcp.json", "workspace")
    assert message in str(err.value)


def test_a_good_server_entry() -> None:
    (fs,) = servers(
        {"fs": {"command": "x", "args": ["-y"], "kind": "read", "tools": {"w": "exec"}}}
    )
    assert fs.command == "x" and fs.args == ("-y",) and fs.transport == "stdio"
    assert fs.declared_kind("w") == "exec" and fs.declared_kind("r") == "read"
    (web,) = servers({"web": {"url": "https://h/mcp", "headers": {"A": "b"}}})
    assert web.transport == "http" and web.headers == (("A", "b"),)
    assert servers(None) == () and servers([]) == ()


@FUZZ
@given(
    raw=st.dictionaries(
        st.text(max_size=70) | st.integers() | st.sampled_from(["fs", "web"]),
        st.fixed_dictionaries(
            {},
            optional={
                k: VALUES | st.sampled_from(["x", "read", "http://h", ["a"], {"A": "b"}])
                for k in ("command", "args", "env", "url", "headers", "kind", "tools", "type")
            },
        )
        | VALUES,
        max_size=3,
    )
    | VALUES
)
def test_mcp_servers_raise_only_config_error(raw: Any) -> None:
    try:
        parsed = servers(raw)
    except ConfigError as err:
        assert str(err).startswith("mcp.servers") and "expected" in str(err)
        assert "\n" not in str(err)
    else:
        for cfg in parsed:
            assert (cfg.command is None) != (cfg.url is None)


def test_mcp_json_servers_cannot_choose_their_kind(tmp_path: Path) -> None:
    entry = {"command": "x", "kind": "read", "tools": {"t": "read"}, "trust_annotations": True}
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"repo": entry, "bad": {"command": 1}}})
    )
    carried = mcfg.read_mcp_json(tmp_path)
    repo, bad = carried.servers
    assert repo.source == "workspace" and repo.kind is None and repo.tools == ()
    assert not repo.trust_annotations
    assert bad.error is not None and "mcpServers.bad.command" in bad.error
    (tmp_path / ".mcp.json").write_text("{nope")
    assert "not valid JSON" in (mcfg.read_mcp_json(tmp_path).error or "")


def test_workspace_servers_are_off_until_enabled_for_that_workspace(
    isolated_env: Path, tmp_path: Path
) -> None:
    repo = mcfg.ServerConfig(name="repo", source="workspace", command="x")
    mine = mcfg.ServerConfig(name="mine", command="x")
    other = tmp_path / "other"
    other.mkdir()
    assert not mcfg.is_enabled(repo, isolated_env) and mcfg.is_enabled(mine, isolated_env)
    mcfg.set_enabled(repo, True, isolated_env)
    assert mcfg.is_enabled(repo, isolated_env) and not mcfg.is_enabled(repo, other)
    mcfg.set_enabled(mine, False, isolated_env)
    assert not mcfg.is_enabled(mine, other)  # a setup() server: for the user everywhere


def test_env_references_are_resolved_and_registered_as_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_UNIT_TOKEN", "tok-unit-123456")
    cfg = mcfg.ServerConfig(
        name="s",
        command="x",
        env=(("T", "${env:MCP_UNIT_TOKEN}"), ("PLAIN", "visible-value")),
        headers=(("Authorization", "Bearer hdr-secret-987"),),
    )
    assert mcfg.resolved_env(cfg) == {"T": "tok-unit-123456", "PLAIN": "visible-value"}
    mcfg.resolved_headers(cfg)
    shown = secrets.redact("tok-unit-123456 visible-value hdr-secret-987")
    assert shown == "[REDACTED] visible-value [REDACTED]"
    missing = mcfg.ServerConfig(name="s", command="x", env=(("T", "${env:MCP_UNIT_NOPE}"),))
    monkeypatch.delenv("MCP_UNIT_NOPE", raising=False)
    with pytest.raises(mcfg.ServerConfigError, match="MCP_UNIT_NOPE is not set"):
        mcfg.resolved_env(missing)


# Every provider's rule for a tool name (Anthropic and OpenAI: [a-zA-Z0-9_-]{1,64}; Gemini
# also wants a letter or `_` first).
PROVIDER_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
# Names as users and servers write them, `_` and `__` and their neighbours often.
NAME_PART = st.text(alphabet=st.sampled_from("ab_-.é/ \0"), min_size=1, max_size=70)
SERVER_NAME = st.text(
    alphabet=st.characters(exclude_categories=("C", "Z")) | st.sampled_from("ab_-"),
    min_size=1,
    max_size=64,
)


@FUZZ
@given(
    pairs=st.lists(
        st.tuples(SERVER_NAME | NAME_PART.filter(str.isprintable), NAME_PART | st.text()),
        max_size=12,
    )
)
def test_any_server_and_tool_names_give_unique_valid_names_that_map_back(
    pairs: list[tuple[str, str]],
) -> None:
    back: dict[str, tuple[str, str]] = {}
    for server, tool in pairs:
        api = mtools.tool_name(server, tool)
        assert PROVIDER_NAME.match(api), api
        assert back.setdefault(api, (server, tool)) == (server, tool), api
        assert api == mtools.tool_name(server, tool)  # stable


def test_names_that_shared_a_name_get_two() -> None:
    # The pair: both were mcp__a__b__c, and the API refused every turn.
    assert mtools.tool_name("a", "b__c") != mtools.tool_name("a__b", "c")
    assert mtools.tool_name("a", "b__c") == "mcp__a__b__c"
    assert mtools.tool_name("a_", "_b") != mtools.tool_name("a", "__b")
    assert mtools.tool_name("my.server", "a b") != mtools.tool_name("my_server", "a_b")


def test_tool_names_are_namespaced_and_cut_stably() -> None:
    assert mtools.tool_name("fs", "read_file") == "mcp__fs__read_file"
    assert mtools.tool_name("my-db", "q") == "mcp__my-db__q"
    shown = mtools.tool_name("my.server", "a b")
    assert re.fullmatch(r"mcp_[0-9a-f]{12}_my_server__a_b", shown), shown
    long = mtools.tool_name("srv", "t" * 100)
    assert len(long) == 64 and long == mtools.tool_name("srv", "t" * 100)


def test_a_tool_listed_twice_is_offered_once() -> None:
    cfg = mcfg.ServerConfig(name="s", command="x")
    twice = [fake_tool("t", {"type": "object"}), fake_tool("t", {"type": "object"})]
    listed = mtools.listed_tools(cfg, twice)
    assert [(t.api_name, t.refused) for t in listed] == [
        ("mcp__s__t", None),
        ("mcp__s__t", "the server lists it twice"),
    ]


def fake_tool(name: str, schema: Any, read_only: bool | None = None) -> Any:
    hints = None
    if read_only is not None:
        from mcp.types import ToolAnnotations

        hints = ToolAnnotations(read_only_hint=read_only)
    return SimpleNamespace(
        name=name, input_schema=schema, annotations=hints, description="d", title=None
    )


OBJECT = {"type": "object", "properties": {}}


def test_kinds_come_from_the_user_and_annotations_only_when_trusted() -> None:
    listed = [fake_tool("r", OBJECT, True), fake_tool("w", OBJECT, False), fake_tool("n", OBJECT)]
    plain = mcfg.ServerConfig(name="s", command="x")
    assert [t.kind for t in mtools.listed_tools(plain, listed)] == [Kind.EXEC] * 3
    trusting = mcfg.ServerConfig(name="s", command="x", trust_annotations=True)
    kinds = [t.kind for t in mtools.listed_tools(trusting, listed)]
    assert kinds == [Kind.READ, Kind.EXEC, Kind.EXEC]
    declared = mcfg.ServerConfig(
        name="s", command="x", kind="read", tools=(("w", "exec"),), trust_annotations=True
    )
    kinds = [t.kind for t in mtools.listed_tools(declared, listed)]
    assert kinds == [Kind.READ, Kind.EXEC, Kind.READ]


def test_mcp_tools_are_placed_by_the_ordinary_policy() -> None:
    cfg = mcfg.ServerConfig(name="s", command="x", tools=(("r", "read"),))
    listed = mtools.listed_tools(cfg, [fake_tool("r", OBJECT), fake_tool("w", OBJECT)])
    tools = [mtools.as_tool(cfg, t, lambda *a: None) for t in listed]
    for mode, scoped in (("plan", False), ("normal", True), ("plan", True)):
        assert [t.name for t in tools_for(tools, mode, scoped)] == ["mcp__s__r"]
    assert len(tools_for(tools, "normal", False)) == 2
    assert mtools.could_offer(cfg, allowed_kinds("plan", False))
    assert not mtools.could_offer(
        mcfg.ServerConfig(name="s", command="x"), allowed_kinds("plan", False)
    )


@pytest.mark.parametrize(
    "schema", [None, [], {"type": "string"}, {"properties": {}}, {"type": "array"}]
)
def test_a_tool_whose_schema_is_not_an_object_schema_is_refused(schema: Any) -> None:
    cfg = mcfg.ServerConfig(name="s", command="x")
    (listed,) = mtools.listed_tools(cfg, [fake_tool("t", schema)])
    assert listed.refused == "its input schema is not an object schema"


def test_results_are_summarised_bounded_and_redacted() -> None:
    from mcp.types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        TextContent,
        TextResourceContents,
    )

    secrets.register("result-secret-42")
    result = CallToolResult(
        content=[
            TextContent(type="text", text="has result-secret-42"),
            ImageContent(type="image", data="AAAA", mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///a.txt", text="small text"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///b.bin", blob="AAAA", mime_type="x/y"),
            ),
        ]
    )
    out = mtools.format_result(result)
    assert out.content.splitlines() == [
        "has [REDACTED]",
        "[image: image/png, 3 bytes]",
        "[resource: file:///a.txt]",
        "small text",
        "[resource: file:///b.bin, x/y, 3 bytes]",
    ]
    big = CallToolResult(content=[TextContent(type="text", text="x" * 10 + "\n" * 100_000)])
    assert len(mtools.format_result(big).content.encode()) < 40_000


def test_mcp_mentions_parse_like_ext_mentions() -> None:
    text = "see @mcp:fs:file:///a.txt, (@mcp:web:demo://x) a@mcp:no:x @mcp:fs:file:///a.txt"
    found = [(m.server, m.uri) for m in parse_mentions(text) if m.kind == "mcp"]
    assert found == [("fs", "file:///a.txt"), ("web", "demo://x")]
    # A resource mention is not also a file mention.
    assert [m.kind for m in parse_mentions(text)] == ["mcp", "mcp"]


class _Servers:
    """What mentions/mcp_resources.py asks of the manager (running servers, those starting)."""

    def __init__(self, running: dict[str, list[Any]], starting: list[str]) -> None:
        self._running, self._starting = running, starting
        self.started = 0

    def start_in_background(self, workspace: str) -> None:
        self.started += 1

    def running(self, workspace: str) -> dict[str, Any]:
        return {n: SimpleNamespace(resources=r) for n, r in self._running.items()}

    def starting(self, workspace: str) -> list[str]:
        return self._starting


def test_resources_are_labelled_mcp_and_a_starting_server_says_so() -> None:
    from sightline.mentions import mcp_resources

    notes = SimpleNamespace(uri="demo://notes", title=None, name="notes", description="Notes.")
    manager: Any = _Servers({"demo": [notes]}, ["slow", "bad name"])
    items = mcp_resources.complete(manager, "/ws", "mcp:", [])
    assert [(i.word, i.abbr, i.style.label, i.menu) for i in items] == [
        ("@mcp:demo:demo://notes", "@mcp:demo:demo://notes", "mcp", "demo · Notes."),
        ("@mcp:", "starting…", "mcp", "slow"),  # inserts what was typed: nothing new
    ]
    assert items[0].style.lsp == 18 and not items[0].style.pending  # Reference
    assert items[1].style.pending  # the composer asks again a moment later
    # Only `@mcp:` says it: the `@` menu lists files and extensions, resources after them.
    assert [i.word for i in mcp_resources.complete(manager, "/ws", "no", [])] == [
        "@mcp:demo:demo://notes"
    ]
    assert mcp_resources.complete(_Servers({}, []), "/ws", "mcp:", []) == []  # type: ignore[arg-type]


def test_a_server_named_by_a_newline_is_refused_on_one_line() -> None:
    # A hypothesis find: the name went into the error's key path as it was.
    with pytest.raises(ConfigError) as err:
        servers({"\n": None})
    assert str(err.value) == "mcp.servers.'\\n': expected a table, got nil"
