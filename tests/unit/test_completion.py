"""`@` completion: modes, items, ranking, the narrowing cache and the file index's cache (the
listing itself is domain/workspace.py's: tests/unit/test_workspace.py)."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain.mentions import escape_path, unescape_path
from sightline.mentions import completion as comp
from sightline.mentions.completion import (
    CompletionSession,
    FileIndex,
    FileListCache,
    complete,
)

EXTS = [
    ("browser-tools", "Drive a \x1b[1mbrowser\x1b[0m\nfrom tests"),
    ("docs", None),
    ("alpha", "A"),
]
FILES = [
    "src/app/main.py",
    "README.md",
    "docs/browser.md",
    "lib/my_browser.py",
    "tests/test_bro.py",
    "abrowse.txt",
    "b/r/o.txt",
    "src/brokers/x.go",
    "notes/my file.txt",
    "web/Brochure.PDF",
]


def words(items: list[comp.CompletionItem]) -> list[str]:
    return [i.word for i in items]


# --- modes and items -------------------------------------------------------------------


def test_at_alone_lists_extensions_then_files() -> None:
    items = complete("", EXTS, FILES)
    assert words(items)[:3] == ["@ext:alpha", "@ext:browser-tools", "@ext:docs"]
    # then files, shorter paths first
    assert words(items)[3:6] == ["@README.md", "@b/r/o.txt", "@abrowse.txt"]
    assert len(items) == 3 + len(FILES)


def test_typed_text_filters_both_extensions_first() -> None:
    items = complete("bro", EXTS, FILES)
    assert words(items) == [
        "@ext:browser-tools",
        # the file name starts with it (shorter paths first)
        "@docs/browser.md",
        "@web/Brochure.PDF",
        # a folder or a word starts with it
        "@src/brokers/x.go",
        "@lib/my_browser.py",
        "@tests/test_bro.py",
        # it occurs anywhere
        "@abrowse.txt",
        # its letters occur in order
        "@b/r/o.txt",
    ]


def test_ext_prefix_lists_extensions_only() -> None:
    assert words(complete("ext:", EXTS, FILES)) == ["@ext:alpha", "@ext:browser-tools", "@ext:docs"]
    assert words(complete("ext:br", EXTS, FILES)) == ["@ext:browser-tools"]
    assert words(complete("ext:zz", EXTS, FILES)) == []


def test_items_for_neovim() -> None:
    ext_item, *_ = complete("browser", EXTS, FILES)
    assert ext_item.to_vim() == {
        "word": "@ext:browser-tools",
        "abbr": "@ext:browser-tools",
        "menu": "Drive a browser from tests",
        "info": "Drive a browser from tests",
        "kind": "ext",
        "dup": 1,
        "equal": 1,
        "user_data": {"sightline": "extension"},
    }
    [docs] = complete("ext:docs", EXTS, FILES)
    assert docs.menu == "extension"
    [spaced] = complete("my file", [], FILES)
    assert spaced.to_vim()["word"] == "@notes/my\\ file.txt"
    assert spaced.abbr == "notes/my file.txt"
    assert spaced.to_vim()["kind"] == "file"


def test_escaped_space_in_the_typed_token() -> None:
    assert words(complete("my\\ f", [], FILES)) == ["@notes/my\\ file.txt"]


def test_extension_objects_are_accepted(isolated_env: Path) -> None:
    from sightline.domain.extensions import ExtensionStatus

    status = ExtensionStatus("k8s", "1", "user", True, True, None, isolated_env, "Kube")
    assert words(complete("k8", [status], [])) == ["@ext:k8s"]


def test_at_most_100_items() -> None:
    many = [f"dir/file{i:04}.txt" for i in range(500)]
    exts = [(f"ext{i:03}", None) for i in range(150)]
    assert len(complete("", [], many)) == 100
    assert len(complete("file", exts, many)) == 100
    items = complete("", exts, many)
    assert len(items) == 100 and all(i.kind == "extension" for i in items)
    assert len(complete("ext:", exts, many)) == 100


def test_case_insensitive_and_optional_smart_case() -> None:
    files = ["Makefile", "src/makefile.inc", "MAKE.md"]
    assert words(complete("MAKE", [], files)) == ["@MAKE.md", "@Makefile", "@src/makefile.inc"]
    assert words(complete("Make", [], files, smart_case=True)) == ["@Makefile"]
    assert words(complete("make", [], files, smart_case=True)) == [
        "@MAKE.md",
        "@Makefile",
        "@src/makefile.inc",
    ]


def test_paths_differing_only_in_case_are_both_offered() -> None:
    assert words(complete("readme", [], ["README", "readme", "x"])) == ["@README", "@readme"]


def test_index_drops_duplicates_empty_and_newline_paths() -> None:
    raw = ["b", "a", "b", "", "bad\nname", "aa"]
    assert FileIndex(raw).first(2) == ["a", "b"]  # before ordering them all
    index = FileIndex(raw)
    assert list(index.paths) == ["a", "b", "aa"]
    assert len(index) == 3
    assert index.first(2) == ["a", "b"]


@pytest.mark.parametrize("n", [1, 5, 50, 400])
def test_first_paths_without_full_ordering_agree_with_it(n: int) -> None:
    raw = synthetic(300, 5) * 2  # every path twice, as a conflicted git index lists them
    random.Random(1).shuffle(raw)
    assert FileIndex(raw).first(n) == list(FileIndex(raw).paths[:n])
    prepared = FileIndex(raw).prepare()
    assert prepared.first(n) == list(prepared.paths[:n])


def test_no_files_yet_gives_extensions_only() -> None:
    assert words(CompletionSession(None).complete("", EXTS)) == [
        "@ext:alpha",
        "@ext:browser-tools",
        "@ext:docs",
    ]


# --- ranking against a slow, obviously right reference --------------------------------------


def reference(
    paths: list[str], query: str, limit: int = 100, smart_case: bool = False
) -> list[str]:
    """The documented ranking, computed the slow way over every path."""
    case_sensitive = smart_case and query != query.lower()
    q = query if case_sensitive else query.lower()
    e = re.escape(q)
    order = sorted(dict.fromkeys(p for p in paths if p), key=lambda p: (len(p), p))

    def fuzzy(s: str) -> bool:  # q's characters in order (linear, unlike a `.*?` regex)
        rest = iter(s)
        return all(c in rest for c in q)

    def tier(p: str) -> int | None:
        s = p if case_sensitive else p.lower()
        base = s.rsplit("/", 1)[-1]
        if len(q) == 1:
            return 0 if base.startswith(q) else 3 if q in s else None
        if re.search(r"(?:^|/)" + e + r"[^/]*$", s):
            return 0
        if re.search(r"(?:^|[/_\-. ])" + e, s):
            return 1
        if q in s:
            return 2
        return 3 if fuzzy(s) else None

    ranked = [(t, i) for i, p in enumerate(order) if (t := tier(p)) is not None]
    return [order[i] for _, i in sorted(ranked)][:limit]


def synthetic(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    parts = [*("src", "test", "tests", "lib", "util", "api", "core", "ui", "app", "web", "docs")]
    parts += ["str", "set", "sea", "ab", "ba", "a", "b", "x_y", "z-q"]
    out: set[str] = set()
    while len(out) < n:
        depth = rng.randint(0, 4)
        segs = [rng.choice(parts) for _ in range(depth)]
        name = rng.choice(parts) + rng.choice(["", "_", "-", ".", ""]) + rng.choice(parts)
        out.add("/".join([*segs, name + rng.choice([".py", ".md", "", ".Ts"])]))
    return sorted(out)


@pytest.mark.parametrize("seed", range(8))
def test_narrowing_cache_matches_reference_while_typing_and_deleting(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small thresholds so that partly checked levels, scans resumed where the parent
    # stopped and the "common query" scans all happen with a couple of thousand paths.
    monkeypatch.setattr(comp, "VERIFY_MAX", [0, 50, 400][seed % 3])
    monkeypatch.setattr(comp, "CLASSIFY_MAX", [5, 40, 300][seed % 3])
    monkeypatch.setattr(comp, "CHECK_CHUNK", [1, 7, 512][seed % 3])
    smart_case = seed % 2 == 1
    paths = synthetic(2000, seed)
    index = FileIndex(paths)
    if seed >= 4:  # prepared: the first two levels come from the character table
        index.prepare()
    session = CompletionSession(index, smart_case=smart_case)
    rng = random.Random(seed)
    alphabet = "stabexz_/.-qST"
    query = ""
    for _ in range(80):
        if query and rng.random() < 0.3:
            query = query[: -rng.randint(1, len(query))]
        else:
            query += rng.choice(alphabet)
        got = session.rank_files(index, query, 100)
        assert got == reference(paths, query, smart_case=smart_case), f"query {query!r}"


@pytest.mark.parametrize("query", ["s", "st", "str", "a/b", "x_y", "sea.", "zz", "tests/s"])
def test_fresh_session_matches_reference(query: str) -> None:
    paths = synthetic(2000, 99)
    for index in (FileIndex(paths), FileIndex(paths).prepare()):
        assert CompletionSession(index).rank_files(index, query, 100) == reference(paths, query)


HYPO_PATHS = synthetic(600, 5)
HYPO_INDEX = FileIndex(HYPO_PATHS).prepare()


@settings(max_examples=150, deadline=None)
@given(
    edits=st.lists(
        st.one_of(st.text(alphabet="stabe_/.xS", min_size=1, max_size=4), st.integers(1, 6)),
        max_size=25,
    ),
    verify=st.sampled_from([0, 3, 60, 8000]),
    classify=st.sampled_from([1, 4, 300]),
    chunk=st.sampled_from([1, 2, 512]),
    smart_case=st.booleans(),
)
def test_any_typing_and_deleting_ranks_as_ranking_from_scratch(
    edits: list[str | int], verify: int, classify: int, chunk: int, smart_case: bool
) -> None:
    # Keys typed or pasted (a string) and deleted (a count) in any order: each answer is
    # the one a fresh look at every path gives, whatever the levels left half checked.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(comp, "VERIFY_MAX", verify)
        mp.setattr(comp, "CLASSIFY_MAX", classify)
        mp.setattr(comp, "CHECK_CHUNK", chunk)
        session = CompletionSession(HYPO_INDEX, smart_case=smart_case)
        query = ""
        for edit in edits:
            query = query + edit if isinstance(edit, str) else query[:-edit]
            got = session.rank_files(HYPO_INDEX, query, 30)
            assert got == reference(HYPO_PATHS, query, smart_case=smart_case)[:30], query


def test_new_index_resets_the_cache() -> None:
    session = CompletionSession()
    first = FileIndex(["abc.txt"])
    assert session.rank_files(first, "ab", 10) == ["abc.txt"]
    second = FileIndex(["abd.txt"])
    assert session.rank_files(second, "ab", 10) == ["abd.txt"]


# --- the background cache --------------------------------------------------------------------


def test_cache_refreshes_in_the_background_without_blocking(tmp_path: Path) -> None:
    release = threading.Event()
    listed = threading.Event()

    def slow_lister(ws: Path) -> Iterator[list[str]]:
        yield ["first.txt"]
        listed.set()
        release.wait(5)
        yield ["first.txt", "second.txt"]

    cache = FileListCache(tmp_path, lister=slow_lister)
    session = CompletionSession(cache)
    assert cache.index() is None
    assert words(session.complete("", [])) == []  # nothing yet, and no waiting
    cache.refresh_async()
    assert listed.wait(5)
    assert words(session.complete("", [])) == ["@first.txt"]  # the early list is in use
    cache.refresh_async()  # coalesced: one more refresh after this one
    release.set()
    assert cache.wait_idle(5)
    index = cache.index()
    assert index is not None and list(index.paths) == ["first.txt", "second.txt"]
    assert cache.loaded_at is not None


def test_cache_keeps_the_previous_list_when_listing_fails(tmp_path: Path) -> None:
    calls = []

    def lister(ws: Path) -> list[list[str]]:
        calls.append(ws)
        if len(calls) > 1:
            raise OSError("disk gone")
        return [["keep.txt"]]

    cache = FileListCache(tmp_path, lister=lister)
    cache.refresh()
    cache.refresh_async()
    assert cache.wait_idle(5)
    index = cache.index()
    assert index is not None and list(index.paths) == ["keep.txt"]


def test_completion_can_wait_briefly_for_the_first_list(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("")
    cache = FileListCache(tmp_path)
    cache.refresh_async()
    assert words(CompletionSession(cache).complete("", [], wait=5)) == ["@x.txt"]
    cache.wait_idle(5)


def test_a_later_refresh_swaps_in_only_a_complete_changed_list(tmp_path: Path) -> None:
    listings = [[["a.txt"], ["a.txt", "b.txt"]]]
    seen: list[list[str]] = []

    def lister(ws: Path) -> Iterator[list[str]]:
        for paths in listings[-1]:
            index = cache.index()
            seen.append(list(index.paths) if index is not None else [])
            yield paths

    cache = FileListCache(tmp_path, lister=lister)
    first = cache.refresh()
    assert first is not None and list(first.paths) == ["a.txt", "b.txt"]
    # the same listing again: the prepared index (and the typing cache) stays
    assert cache.refresh() is first
    # a partial list never replaces a known complete one
    listings.append([["a.txt"], ["a.txt", "c.txt"]])
    seen.clear()
    changed = cache.refresh()
    assert seen == [["a.txt", "b.txt"], ["a.txt", "b.txt"]]
    assert changed is not None and list(changed.paths) == ["a.txt", "c.txt"]


# --- long tokens: the matcher's work is bounded by MAX_QUERY_CHARS ------------------------

# Paths longer than the cap, so that capped queries still have something to match.
LONG_PATHS = ["src/" + "ab/" * 120 + "x.py", "deep/" * 1000 + "y.md", "a_b-c." * 60 + "txt"]
LONG_INDEX_PATHS = synthetic(1500, 5) + LONG_PATHS


def long_token() -> st.SearchStrategy[str]:
    """Raw tokens up to 200 kB: a repeated unit (escapes, `@`, case), or the start of a
    long path followed by more text."""
    unit = st.text(alphabet="ab/._-\\ @:xSé", min_size=1, max_size=30)
    repeated = st.builds(lambda u, n: (u * (n // len(u) + 1))[:n], unit, st.integers(0, 200_000))
    pathy = st.builds(
        lambda p, cut, tail, n: escape_path(p[:cut]) + tail * n,
        st.sampled_from(LONG_PATHS),
        st.integers(0, 6000),
        st.text(alphabet="ab/x\\ ", min_size=1, max_size=5),
        st.integers(0, 40_000),
    )
    return repeated | pathy


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token=long_token(), keys=st.text(alphabet="ab/x", max_size=3))
def test_long_tokens_are_matched_by_their_capped_start_in_bounded_work(
    token: str, keys: str
) -> None:
    # Counted steps, not only time: each keystroke narrows at most MAX_QUERY_CHARS levels
    # and compiles its regexes for at most that many characters, whatever the token's size.
    index = LONG_INDEX_PATHS_INDEX
    session = CompletionSession(index)
    steps: list[int] = []
    compiled: list[int] = []
    narrow, fuzzy, contiguous = comp._narrow, comp._fuzzy, comp._Contiguous

    def counting_narrow(parent: Any, q: str, **kw: Any) -> Any:
        steps[-1] += 1
        return narrow(parent, q, **kw)

    def counting_fuzzy(q: str) -> Any:
        compiled.append(len(q))
        return fuzzy(q)

    def counting_contiguous(q: str) -> Any:
        compiled.append(len(q))
        return contiguous(q)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(comp, "_narrow", counting_narrow)
        mp.setattr(comp, "_fuzzy", counting_fuzzy)
        mp.setattr(comp, "_Contiguous", counting_contiguous)
        # pasted, then typed on one key at a time
        for typed in [token] + [token + keys[: i + 1] for i in range(len(keys))]:
            steps.append(0)
            started = time.thread_time()
            got = session.complete(typed, EXTS)
            cpu = time.thread_time() - started
            assert steps[-1] <= comp.MAX_QUERY_CHARS
            assert cpu < 2.0, f"{cpu:.2f} s of CPU for a {len(typed)}-character token"
            query = comp.matched_query(typed)
            assert len(query) <= comp.MAX_QUERY_CHARS
            assert query == unescape_path(typed)[: comp.MAX_QUERY_CHARS]
            # exactly what the capped start gives, computed the slow, obvious way
            exts = [i.word for i in complete(query, EXTS, None)] if "\n" not in query else []
            if query.startswith("ext:"):
                assert [i.word for i in got] == exts
            else:
                files = [i.abbr for i in got if i.kind == "file"]
                assert files == reference(LONG_INDEX_PATHS, query)[: 100 - len(exts)]
    assert all(n <= comp.MAX_QUERY_CHARS for n in compiled)


LONG_INDEX_PATHS_INDEX = FileIndex(LONG_INDEX_PATHS).prepare()


def test_a_query_longer_than_every_path_matches_nothing_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = FileIndex(["src/app.py", "docs/a.md"]).prepare()
    session = CompletionSession(index)
    assert [i.word for i in session.complete("src/app.py")] == ["@src/app.py"]
    steps: list[str] = []
    narrow = comp._narrow

    def counted(parent: Any, q: str, **kw: Any) -> Any:
        steps.append(q)
        return narrow(parent, q, **kw)

    monkeypatch.setattr(comp, "_narrow", counted)
    assert session.complete("src/app.pyx") == []  # one character longer than any path
    assert session.complete("x" * 100_000) == []
    assert steps == []  # no per-path work at all


def test_a_listed_index_leaves_nothing_for_the_garbage_collector_to_walk() -> None:
    # Every collection walks the tracked containers: tables holding each path would cost a
    # keystroke ~20 ms at 100 000 files whenever one ran.
    import gc

    cache = FileListCache(Path("."), lister=lambda ws: iter([synthetic(500, 3)]))
    index = cache.refresh()
    assert index is not None
    tables = [index.paths, index.lower, *index.by_initial().values()]
    tables += (index.char_table() or {}).values()
    assert tables and not any(gc.is_tracked(t) for t in tables)
