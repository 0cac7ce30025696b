"""The domain parsers never raise anything but their declared error (issue 10 §6).

Manifests (ManifestError), mentions (nothing), CoreConfig.from_dict (ConfigError), Python
resolution (a text), params (Invalid): fuzzed with hypothesis.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import extensions, mentions, pyresolve
from sightline.domain.config import ConfigError, CoreConfig
from sightline.domain.text import clean_display_text
from sightline.entry.params import Invalid, check_params
from sightline.entry.rpc import SCHEMAS
from tests.strategies import anything, config_values, nested, odd_text

FUZZ = settings(
    max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


def manifest_values() -> st.SearchStrategy[Any]:
    fields = st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["ok", "Bad", "a" * 300, ""]) | anything,
            "version": st.sampled_from(["1", " ", "v" * 200]) | anything,
            "description": odd_text | anything,
            "contextFileName": st.sampled_from(["SIGHTLINE.md", "../x", "/etc/passwd", "a\0b"])
            | st.lists(odd_text, max_size=3)
            | anything,
        },
    )
    return fields | anything


@FUZZ
@given(data=manifest_values())
def test_parse_manifest_raises_only_manifest_error(tmp_path_factory: Any, data: Any) -> None:
    folder = tmp_path_factory.getbasetemp() / "ok"
    try:
        manifest = extensions.parse_manifest(data, folder)
    except extensions.ManifestError as err:
        assert str(err) and "\n" not in str(err) and len(str(err)) < 400
    else:
        assert manifest.name == data["name"]


def dump(value: Any) -> bytes:
    """JSON for a generated value; the deep ones as raw brackets (json.dumps recurses)."""
    try:
        return json.dumps(value, default=repr).encode("utf-8", "surrogatepass")
    except RecursionError:
        return b"[" * 50_000 + b"]" * 50_000


@FUZZ
@given(
    raw=st.one_of(
        st.binary(max_size=64),
        manifest_values().map(dump),
        st.sampled_from([10, 5000, 50_000]).map(lambda n: b"[" * n + b"]" * n),
        st.sampled_from([10, 30, 33, 900]).map(lambda n: dump(nested(n))),
        st.just(b'{"name": "ok", "version": "1", "x": ' + b"[" * 40 + b"]" * 40 + b"}"),
    )
)
def test_load_manifest_raises_only_manifest_error(tmp_path_factory: Any, raw: bytes) -> None:
    folder = tmp_path_factory.getbasetemp() / "ok"
    folder.mkdir(exist_ok=True)
    (folder / extensions.MANIFEST_FILE).write_bytes(raw)
    try:
        extensions.load_manifest(folder)
    except extensions.ManifestError as err:
        assert str(err) and "\n" not in str(err)


def test_a_deep_manifest_is_reported_and_the_others_still_work(
    isolated_env: Path, tmp_path: Path
) -> None:
    from sightline.core import Core
    from tests.effective_config import effective
    from tests.extensions_util import make_extension
    from tests.fake_editor import FakeEditor

    user = tmp_path / "xdg" / "data" / "sightline" / "extensions"
    make_extension(user, "good", "good things")
    deep = make_extension(user, "deep", "deep things")
    (deep / extensions.MANIFEST_FILE).write_text("[" * 50_000 + "]" * 50_000)
    too_deep = "sightline-extension.json is nested deeper than 32 levels"
    dirs = extensions.ExtensionDirs.default()
    for enabled in (True, False):
        extensions.save_state(dirs.state_file, extensions.EnableState({"deep": enabled}, {}))
        listed = {s.name: s for s in extensions.status(isolated_env)}
        assert listed["deep"].error == too_deep and not listed["deep"].active
        assert listed["good"].active
        core = Core(FakeEditor())
        core.configure(effective())  # as the Lua side's core.init does first
        core.set_workspace(str(isolated_env))
        parts = core.mention_parts("@ext:good and @ext:deep please")
        assert any("good knows things." in p for p in parts), parts
        assert not any("deep knows" in p for p in parts)


@FUZZ
@given(texts=st.one_of(odd_text, st.lists(odd_text, max_size=3)), before=odd_text)
def test_mention_parsing_never_raises(texts: Any, before: str) -> None:
    for m in mentions.parse_mentions(texts):
        assert m.token.startswith("@")
    mentions.extension_mentions(texts)
    mentions.file_mentions(texts)
    found = mentions.mention_at_end(before)
    assert found is None or before[found[0]] == "@"
    assert mentions.unescape_path(mentions.escape_path(before)) == before
    assert "\n" not in clean_display_text(before, 50)
    mentions.strip_mentions(before)


@FUZZ
@given(raw=config_values())
def test_config_from_dict_raises_only_config_error(raw: Any) -> None:
    try:
        cfg = CoreConfig.from_dict(raw)
    except ConfigError as err:
        assert str(err) and "\n" not in str(err) and "expected" in str(err)
    else:
        assert cfg.provider.max_tokens >= 1 and 0 <= cfg.provider.retries <= 10
        assert 1 <= cfg.command_timeout_ms <= 2**31 - 1


@FUZZ
@given(
    text=st.one_of(
        odd_text,
        st.sampled_from(["def f():\n    if x:\n        pass\n", "class A:\n  b = 1\n"]),
    ),
    member_key=st.none() | st.sampled_from(["f", "A.b", ":", "."]) | odd_text,
    scope=st.none() | anything,
    near_line=st.none() | st.integers(),
)
def test_resolve_answers_lines_or_a_text(
    text: str, member_key: str | None, scope: Any, near_line: int | None
) -> None:
    result = pyresolve.resolve(text, member_key, scope, near_line)
    if isinstance(result, str):
        assert result and "\n" not in result and len(result) < 400
    else:
        start, end = result
        assert 1 <= start <= end


@FUZZ
@given(
    name=st.sampled_from(sorted(SCHEMAS)), params=st.dictionaries(st.text(max_size=12), anything)
)
def test_check_params_raises_only_invalid(name: str, params: dict[str, Any]) -> None:
    try:
        checked = check_params(SCHEMAS[name], params)
    except Invalid as err:
        assert str(err).split(": ", 1)[0] in SCHEMAS[name]
    else:
        assert set(checked) <= set(SCHEMAS[name])
