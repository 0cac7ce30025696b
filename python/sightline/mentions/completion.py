"""Candidates for `@` completion in the composer: the index of the workspace's files (listed
by domain/workspace.py, the model's tree) and their ranking.

The Lua side sends the token typed after `@` and hands the items it gets
back to Neovim's `complete()`; all filtering and ranking happen here:

* `@` alone: active extensions, then files;
* `@bro`: both filtered (extensions first), ranked like a fuzzy file finder;
* `@ext:` / `@ext:br`: extensions only.

Files are ranked in tiers, and within a tier shorter paths come first:
the file name starts with the query; a folder or a word in the path starts
with it; it occurs anywhere; its characters occur in order.  Matching
ignores case (smart case is optional).

Speed: a workspace may list 100 000 files and a keystroke must answer in a
few milliseconds, while Python spends ~0.1 µs on the simplest per-path step.
So the list is sorted (shorter first) and lower-cased once, per index, off
the typing path; a `CompletionSession` keeps one *level* per prefix of the
query, and each keystroke starts from the previous one: the fuzzy matches
are checked lazily, only as many as the list needs, and a longer query checks
only what its prefix matched or left unchecked; the contiguous tiers are found
with `str.find` and regexes over joined strings, stopping once 100 are found,
and a longer query filters the lines its prefix found and scans on from where
it stopped (or, once the query is rare, only its candidates).  So a word typed
key by key looks at each path about once, and no keystroke walks them all
unless the query turned rare at it.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from sightline.domain.mentions import escape_path, unescape_path
from sightline.domain.text import clean_display_text
from sightline.domain.workspace import iter_files

log = logging.getLogger(__name__)

MAX_ITEMS = 100
EXT_PREFIX = "ext:"
# The matcher looks at this many characters of a query at most: a keystroke's work grows
# with the query (one narrowing step and a regex of its length), and a pasted 50 kB token
# must not freeze Neovim.  Longer than any path anyone types after `@`.
MAX_QUERY_CHARS = 256
_BOUNDARY = "\n/_-. "  # characters after which a match starts a word
_index_ids = itertools.count(1)
Lines = tuple[str, ...]  # paths in the index's order

ItemKind = Literal[
    "extension",
    "file",
    "editor",
    "mcp",
    "mcp_starting",
    # `/` commands (slash/catalog.py)
    "command",
    "prompt",
    "skill",
    "agent_command",
    "mcp_prompt",
]


@dataclass(frozen=True)
class KindStyle:
    """How an item's kind shows: the menu's kind column (`label`), the LSP
    CompletionItemKind the engines draw (`lsp`), and whether the item only says
    something is on its way (`pending`: the menu asks again a moment later)."""

    label: str
    lsp: int
    pending: bool = False


# The one rule from kind to what the menus show (Lua and the engines apply it).
KIND_STYLES: dict[ItemKind, KindStyle] = {
    "extension": KindStyle("ext", 9),  # Module
    "file": KindStyle("file", 17),  # File
    "editor": KindStyle("editor", 6),  # Variable
    "mcp": KindStyle("mcp", 18),  # Reference
    "mcp_starting": KindStyle("mcp", 1, pending=True),  # Text
    "command": KindStyle("built-in", 3),  # Function
    "prompt": KindStyle("prompt", 15),  # Snippet
    "skill": KindStyle("skill", 9),  # Module
    "agent_command": KindStyle("agent", 23),  # Event
    "mcp_prompt": KindStyle("mcp", 15),  # Snippet
}


class ExtensionLike(Protocol):
    """What completion needs of an extension (Extension and ExtensionStatus fit)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str | None: ...


ExtensionSource = ExtensionLike | tuple[str, str | None]


@dataclass(frozen=True)
class CompletionItem:
    kind: ItemKind
    word: str  # inserted text: "@ext:<name>" or "@<escaped path>"
    abbr: str
    menu: str
    info: str

    @property
    def style(self) -> KindStyle:
        return KIND_STYLES[self.kind]

    def to_vim(self) -> dict[str, Any]:
        """A `complete-items` dict.  equal=1: Neovim must not filter our fuzzy
        matches by prefix; dup=1: skip its quadratic de-duplication."""
        return {
            "word": self.word,
            "abbr": self.abbr,
            "menu": self.menu,
            "info": self.info,
            "kind": self.style.label,
            "dup": 1,
            "equal": 1,
            "user_data": {"sightline": self.kind},
        }


# --- the file index -------------------------------------------------------------


class FileIndex:
    """An immutable snapshot of the workspace's files, ready for ranking.

    Construction only keeps the list: the first `@` list needs just the
    shortest paths (`first`).  Sorting, lower-casing and the tables ranking
    uses are built on first use or by `prepare()`, which the refresh thread
    calls right after the swap, so the first keystroke finds them done.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._raw = list(paths)
        self.id = next(_index_ids)
        self._lock = threading.RLock()
        # Tuples, not lists: a tuple of strings leaves the garbage collector's view
        # after its first pass, and these hold about two million references, which every
        # collection would otherwise walk (~20 ms, at any keystroke).
        self._paths: Lines | None = None
        self._lower: Lines | None = None
        self._originals: dict[str, str] = {}
        self._clashes: dict[str, list[str]] = {}
        self._by_initial: dict[str, Lines] | None = None
        self._by_char: dict[str, Lines] | None = None
        self._lower_blob: str | None = None
        self._blob: str | None = None
        self._longest: dict[bool, int] = {}

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def paths(self) -> Lines:
        """Unique paths, shorter first, then alphabetical.

        Every filtered subset keeps this order, so within a ranking tier the
        first N hits already are the best N.
        """
        if self._paths is None:
            with self._lock:
                if self._paths is None:
                    self._paths = _ordered(self._raw)
        return self._paths

    def first(self, n: int) -> list[str]:
        """The first n of `paths`, without ordering them all when that is not done yet."""
        raw = self._raw  # read first: prepare() drops it once `paths` is set
        if self._paths is not None or not raw or n <= 0:
            return list(self.paths[:n])
        # The 2n-th shortest length bounds the candidates; only those are sorted.
        lengths = heapq.nsmallest(2 * n, map(len, raw))
        longest = lengths[-1]
        best = sorted((p for p in raw if len(p) <= longest), key=_order_key)
        unique = [p for p in dict.fromkeys(best) if p and "\n" not in p]
        return unique[:n] if len(unique) >= n or len(lengths) < 2 * n else list(self.paths[:n])

    def prepare(self) -> FileIndex:
        """Build everything ranking needs now (the refresh thread calls this)."""
        _ = self.paths
        self._raw = []  # ordered now: the unordered copy is not needed any more
        self.by_initial()
        self.build_char_table()
        self.lower_blob()
        self.longest(False)
        return self

    def longest(self, case_sensitive: bool) -> int:
        """The length of the longest path (lower-cased unless case_sensitive): no longer
        query can match, not even in order (every tier needs all its characters)."""
        known = self._longest.get(case_sensitive)
        if known is None:
            lines = self.paths if case_sensitive else self.lower
            known = self._longest[case_sensitive] = max(map(len, lines), default=0)
        return known

    def lower_blob(self) -> str:
        """All lower-cased paths joined, one per line (shared by every session)."""
        if self._lower_blob is None:
            self._lower_blob = "\n" + "\n".join(self.lower) + "\n"
        return self._lower_blob

    def blob(self, case_sensitive: bool) -> str:
        """The paths (lower-cased unless case_sensitive) joined, with a newline on both
        ends: what the contiguous tiers are scanned in."""
        if not case_sensitive:
            return self.lower_blob()
        if self._blob is None:
            self._blob = "\n" + "\n".join(self.paths) + "\n"
        return self._blob

    @property
    def lower(self) -> Lines:
        """The paths lower-cased, in the same order (what case-insensitive ranking scans)."""
        if self._lower is None:
            with self._lock:
                if self._lower is None:
                    self._build_lower()
        assert self._lower is not None
        return self._lower

    def _build_lower(self) -> None:
        lower = tuple(p.lower() for p in self.paths)
        originals = dict(zip(lower, self.paths, strict=True))
        if len(originals) < len(lower):  # "README" and "readme" side by side
            for low, path in zip(lower, self.paths, strict=True):
                self._clashes.setdefault(low, []).append(path)
        self._originals = originals
        self._lower = lower

    def originals(self, key: str, case_sensitive: bool) -> list[str]:
        """The path(s) a ranking key stands for."""
        if case_sensitive:
            return [key]
        return self._clashes.get(key) or [self._originals[key]]

    def build_char_table(self) -> None:
        """Lower-cased paths grouped by every character they contain, in index order.

        A one-character query's matches are its list, and a longer query checks the
        list of its last character when that is shorter than its prefix's candidates;
        built off the typing path, by prepare(), at the cost of one reference per
        distinct character of each path.
        """
        if self._by_char is None:
            table: dict[str, list[str]] = {}
            for s in self.lower:
                for c in set(s):
                    table.setdefault(c, []).append(s)
            self._by_char = {c: tuple(lines) for c, lines in table.items()}

    def char_table(self) -> dict[str, Lines] | None:
        """The table once prepare() built it; None before (never built on the typing path)."""
        return self._by_char

    def by_initial(self) -> dict[str, Lines]:
        """Lower-cased paths grouped by the first character of their file name.

        The first keystroke after `@` ranks file names starting with that
        character first; this table answers it without scanning every path.
        """
        if self._by_initial is None:
            lower = self.lower
            with self._lock:
                if self._by_initial is None:
                    table: dict[str, list[str]] = {}
                    for s in lower:
                        i = s.rfind("/") + 1
                        table.setdefault(s[i : i + 1], []).append(s)
                    self._by_initial = {c: tuple(lines) for c, lines in table.items()}
        return self._by_initial


@dataclass
class _Hits:
    """Lines containing a query, found by scanning `blob` (lines joined, with a newline
    on both ends): `lines` holds, in order, every one of them in blob[:off].

    A longer query's lines are among these, so the next keystroke filters `lines` and
    scans on from `off`; once a scan reached the end (`complete`), it scans nothing.
    """

    blob: str
    size: int  # lines in the blob
    off: int = 0
    lines: list[str] = field(default_factory=list)

    @staticmethod
    def of(lines: list[str]) -> _Hits:
        return _Hits("\n" + "\n".join(lines) + "\n" if lines else "", len(lines))

    @property
    def complete(self) -> bool:
        return self.off >= len(self.blob)

    def lines_left(self) -> float:
        """About how many of the blob's lines are not scanned yet."""
        return self.size * (len(self.blob) - self.off) / len(self.blob) if self.blob else 0

    def narrowed(self, q: str) -> _Hits:
        return _Hits(self.blob, self.size, self.off, [s for s in self.lines if q in s])

    def extend(self, q: str, budget: int) -> None:
        """Scan on until `budget` lines are known or the blob ends."""
        blob, lines = self.blob, self.lines
        at = blob.find(q, self.off) if len(lines) < budget else 0
        while at >= 0 and len(lines) < budget:
            end = blob.find("\n", at + len(q))
            lines.append(blob[blob.rfind("\n", 0, at) + 1 : end])
            self.off = end
            at = blob.find(q, end)
        if at < 0:
            self.off = len(blob)


@dataclass
class _Level:
    """The paths matching `query` in order (fuzzy), found lazily.

    `known` holds, in index order, the matches among the candidates checked so far;
    `unchecked` the rest of the candidates, as (list, start, end) slices that all come
    after those in index order.  The candidates of a longer query are this level's
    `known` and `unchecked`: each path is checked once by a level it fails, so a word
    typed key by key checks the workspace's paths about once, however it narrows.
    `exact` once nothing is unchecked.  `hits` finds the contiguous tiers.
    """

    query: str
    known: Sequence[str]  # the index's own tuple only where nothing is unchecked
    unchecked: list[tuple[Sequence[str], int, int]]
    hits: _Hits

    @property
    def exact(self) -> bool:
        return not self.unchecked

    def candidates(self) -> int:
        return len(self.known) + sum(end - start for _, start, end in self.unchecked)

    def first(self, n: int) -> list[str]:
        """The first n matches (fewer when there are not that many)."""
        self._check(n)
        return list(self.known[:n])

    def check_all(self) -> None:
        self._check(sys.maxsize)

    def hits_to_scan(self) -> _Hits:
        """`hits`, or, when far fewer candidates than lines left in its blob are left,
        the candidates joined: every line containing the query is among them, so
        a query that turned rare scans those, not the rest of the workspace."""
        hits = self.hits
        if not hits.complete and self.candidates() * 3 < hits.lines_left():
            unchecked = itertools.chain.from_iterable(lines[a:b] for lines, a, b in self.unchecked)
            self.hits = hits = _Hits.of([*self.known, *unchecked])
        return hits

    def _check(self, n: int) -> None:
        if len(self.known) < n and self.unchecked:
            assert isinstance(self.known, list)  # (a level with unchecked paths owns it)
            match = _fuzzy(self.query)
            step = max(CHECK_CHUNK, 2 * min(n - len(self.known), CHECK_CHUNK))
            while len(self.known) < n and self.unchecked:
                lines, start, end = self.unchecked[0]
                stop = min(end, start + step)
                self.known.extend(filter(match, lines[start:stop]))
                if stop >= end:
                    del self.unchecked[0]
                else:
                    self.unchecked[0] = (lines, stop, end)
                step *= 2  # matches are sparse here: fewer, larger steps


# A level whose candidates are at most this many is checked at once (~0.15 µs a path),
# so the next keystrokes start from its matches and scan their own small blob.
VERIFY_MAX = 8_000
# Paths checked at a time when a level looks for more matches (then twice as many).
CHECK_CHUNK = 512


def _fuzzy(q: str) -> Callable[[str], object]:
    """Matcher for q's characters in order (anchored, possessive: one pass per path)."""
    return re.compile("".join("[^" + re.escape(c) + "]*+" + re.escape(c) for c in q)).match


class _Contiguous:
    """Regexes for the contiguous tiers of one query.

    `scan` finds lines containing the query (one hit per line, starting with
    the query as a literal so the engine skips ahead fast); `is_name` and
    `is_word` classify such a line.  `name_scan`/`word_scan` find the two
    better tiers directly, for when the query is too common to classify
    every hit.
    """

    def __init__(self, q: str) -> None:
        e = re.escape(q)
        boundary = "[" + re.escape(_BOUNDARY) + "]"
        self.scan = re.compile(e + r"[^\n]*+")
        # the file name starts with it (or it starts a folder and runs into the name)
        self.is_name = re.compile(r"(?:^|/)" + e + r"[^/]*\Z").search
        # a folder name or a word (after _ - . or space) starts with it
        self.is_word = re.compile(r"(?:^|" + boundary + ")" + e).search
        self.name_scan = re.compile(e + r"(?<=[\n/]" + e + r")[^\n/]*+(?=\n)")
        self.word_scan = re.compile(e + r"(?<=" + boundary + e + r")[^\n]*+")


# Hits classified one by one before a query counts as common (see _scan_tiers).
CLASSIFY_MAX = 300


def _line_at(blob: str, start: int, end: int) -> str:
    return blob[blob.rfind("\n", 0, start) + 1 : blob.find("\n", end)]


def _order_key(path: str) -> tuple[int, str]:
    return len(path), path


def _ordered(paths: list[str]) -> Lines:
    unique = list(dict.fromkeys(paths))
    if "" in unique or "\n" in "\0".join(unique):
        # A newline would split a path in the joined strings ranking scans.
        unique = [p for p in unique if p and "\n" not in p]
    unique.sort()  # git lists paths sorted already, which makes this nearly free
    unique.sort(key=len)
    return tuple(unique)


# --- ranking --------------------------------------------------------------------


class CompletionSession:
    """`@` completion for one composer; keeps the narrowing cache between keystrokes.

    `files` is a FileListCache (its current snapshot is used; a refresh
    resets the cache), a FileIndex, or None for extensions only.

    Files are ranked in tiers, each in the index order (shorter paths first):
    the file name starts with the query; a folder or word starts with it; it
    occurs anywhere; its characters occur in order (fuzzy).
    """

    def __init__(
        self,
        files: FileListCache | FileIndex | None = None,
        *,
        max_items: int = MAX_ITEMS,
        smart_case: bool = False,
    ) -> None:
        self._files = files
        self.max_items = max_items
        self.smart_case = smart_case
        self._chain: list[_Level] = []  # root .. longest query, each a prefix of the next
        self._chain_key: tuple[int, bool] | None = None

    def complete(
        self, token: str, extensions: Sequence[ExtensionSource] = (), *, wait: float = 0.0
    ) -> list[CompletionItem]:
        """Items for the text typed after `@` (escapes like `\\ ` allowed).

        `wait`: with a FileListCache that has no list yet, wait up to that
        many seconds for the first one (else files are simply not offered yet).
        """
        query = matched_query(token)
        if query.startswith(EXT_PREFIX):
            return rank_extensions(extensions, query[len(EXT_PREFIX) :])[: self.max_items]
        items = rank_extensions(extensions, query)[: self.max_items]
        room = self.max_items - len(items)
        index = self._index(wait)
        if room > 0 and index is not None:
            items.extend(_file_item(p) for p in self.rank_files(index, query, room))
        return items

    def rank_files(self, index: FileIndex, query: str, limit: int) -> list[str]:
        """The best `limit` paths for query (all paths' order when it is empty)."""
        if not query:
            return index.first(limit)
        if "\n" in query:
            return []  # no path holds one (the index drops them)
        case_sensitive = self.smart_case and query != query.lower()
        q = query if case_sensitive else query.lower()
        if len(q) > index.longest(case_sensitive):
            return []  # (a long paste after `@` ends here, before any per-path work)
        level = self._level(index, q, case_sensitive)
        taken: dict[str, None] = {}  # an ordered set of keys
        if len(q) == 1 and not case_sensitive:
            # One character: file names starting with it go first (those are
            # precomputed), then the whole level, which all contains it.
            taken.update(dict.fromkeys(index.by_initial().get(q, [])[:limit]))
        else:
            self._scan_tiers(level, q, limit, taken, words=len(q) > 1)
        if len(taken) < limit:
            self._add_fuzzy(level, q, limit, taken)
        out: list[str] = []
        for key in taken:
            out.extend(index.originals(key, case_sensitive))
        return out[:limit]

    @staticmethod
    def _scan_tiers(
        level: _Level, q: str, limit: int, taken: dict[str, None], *, words: bool = True
    ) -> None:
        """Add the contiguous tiers: file name starts with q, a word does, q anywhere.

        Without `words` (one character) the middle tier is left out, as the
        precomputed one-character ranking does.
        """
        hits = level.hits_to_scan()
        hits.extend(q, CLASSIFY_MAX)
        rx = _Contiguous(q)
        name: dict[str, None] = {}
        word: dict[str, None] = {}
        anywhere: dict[str, None] = {}
        for line in hits.lines:
            if rx.is_name(line):
                name[line] = None
            elif words and rx.is_word(line):
                word[line] = None
            else:
                anywhere[line] = None
        blob, resume = hits.blob, None if hits.complete or len(name) >= limit else hits.off
        if resume is not None:
            # A common query: the rest of the blob is searched for the better
            # tiers only, each stopping as soon as it has enough.
            scans = [(rx.name_scan, name, {}), (rx.word_scan, word, name)][: 2 if words else 1]
            for pattern, bucket, better in scans:
                for m in pattern.finditer(blob, resume):
                    if len(better) + len(bucket) >= limit:
                        break
                    line = _line_at(blob, m.start(), m.end())
                    if line not in better:
                        bucket[line] = None
            # Both ran to the end and still too few: more of "anywhere" is needed.
            for m in rx.scan.finditer(blob, resume):
                if len(name) + len(word) + len(anywhere) >= limit:
                    break
                line = _line_at(blob, m.start(), m.end())
                if line not in name and line not in word:
                    anywhere[line] = None
        for bucket in (name, word, anywhere):
            for line in bucket:
                if len(taken) >= limit:
                    return
                taken.setdefault(line)

    @staticmethod
    def _add_fuzzy(level: _Level, q: str, limit: int, taken: dict[str, None]) -> None:
        need = limit - len(taken)
        # Enough fuzzy matches even if all those already taken come first.
        found = level.first(need + len(taken))
        rest = (s for s in found if s not in taken)
        taken.update(dict.fromkeys(itertools.islice(rest, need)))

    def reset(self) -> None:
        """Forget the narrowing cache (e.g. when the composer closes)."""
        self._chain, self._chain_key = [], None

    def _index(self, wait: float = 0.0) -> FileIndex | None:
        if isinstance(self._files, FileListCache):
            return self._files.index(wait)
        return self._files

    def _level(self, index: FileIndex, q: str, case_sensitive: bool) -> _Level:
        key = (index.id, case_sensitive)
        if self._chain_key != key or not self._chain:
            root = index.paths if case_sensitive else index.lower
            self._chain = [_Level("", root, [], _Hits(index.blob(case_sensitive), len(root)))]
            self._chain_key = key
        # Backspace or a different word: go back to the longest cached prefix.
        while not q.startswith(self._chain[-1].query):
            self._chain.pop()
        level = self._chain[-1]
        by_char = None if case_sensitive else index.char_table()
        for i in range(len(level.query), len(q)):
            # Several keys at once (a paste, coalesced typing): only the last level
            # may be checked at once; the ones between leave all their candidates unchecked.
            level = _narrow(level, q[: i + 1], verify=i == len(q) - 1, by_char=by_char)
            self._chain.append(level)
        return level


def _narrow(
    parent: _Level,
    q: str,
    *,
    verify: bool = True,
    by_char: dict[str, Lines] | None = None,
) -> _Level:
    """The level for q from the level of q minus its last character.

    Its candidates are the parent's (its matches, then what it left unchecked), or the
    paths holding q's last character when the index's character table has fewer (for
    one character, exactly its matches).  With `verify`, few candidates are checked at
    once.  Nothing here is per path unless it is checked.
    """
    c = q[-1]
    hits = parent.hits.narrowed(q)
    with_c = by_char.get(c, ()) if by_char is not None else None
    if with_c is not None and len(q) == 1:
        return _Level(q, with_c, [], hits)
    unchecked = [(parent.known, 0, len(parent.known))] if parent.known else []
    level = _Level(q, [], unchecked + parent.unchecked, hits)
    if with_c is not None and len(with_c) < level.candidates():
        level.unchecked = [(with_c, 0, len(with_c))] if with_c else []
    if verify and level.candidates() <= VERIFY_MAX:
        level.check_all()
    return level


def matched_query(token: str) -> str:
    """What the matcher looks at for the raw token after `@`: unescaped, and at most
    MAX_QUERY_CHARS characters of it.  Linear in the token, and only its start is read:
    each character of the query takes at most two of the token (`\\x`)."""
    return unescape_path(token[: 2 * MAX_QUERY_CHARS])[:MAX_QUERY_CHARS]


def rank_extensions(extensions: Sequence[ExtensionSource], query: str) -> list[CompletionItem]:
    """Extensions matching `query` (all when empty), best first, as items."""
    q = query.lower()
    scored: list[tuple[int, int, str, str | None]] = []
    for ext in extensions:
        name, description = ext if isinstance(ext, tuple) else (ext.name, ext.description)
        tier = _tier(name.lower(), q)
        if tier is not None:
            # Nothing typed: alphabetical; else best tier, then shorter names.
            scored.append((tier, len(name) if q else 0, name, description))
    scored.sort()
    return [_extension_item(name, desc) for _, _, name, desc in scored]


def _tier(key: str, q: str) -> int | None:
    """0 prefix, 1 word start, 2 substring, 3 subsequence, None no match (like the files)."""
    if key.startswith(q):
        return 0
    at = key.find(q)
    if at > 0:
        while at > 0:
            if key[at - 1] in _BOUNDARY:
                return 1
            at = key.find(q, at + 1)
        return 2
    it = iter(key)
    return 3 if all(c in it for c in q) else None


def _extension_item(name: str, description: str | None) -> CompletionItem:
    return CompletionItem(
        kind="extension",
        word=f"@ext:{name}",
        abbr=f"@ext:{name}",
        menu=clean_display_text(description, 60) or "extension",
        info=clean_display_text(description),
    )


# `@buffer` and `@diagnostics`: the editor's state, resolved when the message is sent.
EDITOR_ITEMS = {
    "buffer": "the editor window's buffer, unsaved text included",
    "diagnostics": "diagnostics of the workspace's loaded buffers",
}


def editor_items(query: str) -> list[CompletionItem]:
    """The fixed `@buffer` / `@diagnostics` items whose name starts with `query`."""
    q = query.lower()
    return [
        CompletionItem(kind="editor", word=f"@{name}", abbr=f"@{name}", menu=menu, info=menu)
        for name, menu in EDITOR_ITEMS.items()
        if name.startswith(q)
    ]


def _file_item(path: str) -> CompletionItem:
    return CompletionItem(kind="file", word="@" + escape_path(path), abbr=path, menu="", info="")


def complete(
    token: str,
    extensions: Sequence[ExtensionSource],
    files: FileIndex | Sequence[str] | None,
    *,
    max_items: int = MAX_ITEMS,
    smart_case: bool = False,
) -> list[CompletionItem]:
    """One-shot completion (no narrowing cache); sessions are faster while typing."""
    index = files if isinstance(files, FileIndex) or files is None else FileIndex(files)
    return CompletionSession(index, max_items=max_items, smart_case=smart_case).complete(
        token, extensions
    )


# --- the workspace's files, indexed ------------------------------------------------

# Lists of workspace-relative paths, each more complete than the one before;
# the cache swaps each in as it comes, so a slow listing shows early results.
# The default is the workspace's one listing (domain/workspace.py iter_files), the tree the
# model's list_files and grep see.
Lister = Callable[[Path], Iterable[list[str]]]


class FileListCache:
    """The workspace's file index, refreshed in a background thread.

    `index()` never blocks typing (unless asked to wait briefly for the very
    first listing); a refresh swaps in each FileIndex as it is built.
    """

    def __init__(self, workspace: Path | str, *, lister: Lister | None = None) -> None:
        self.workspace = Path(workspace)
        self._lister: Lister = lister or iter_files
        self._index: FileIndex | None = None
        self._listed: Lines | None = None  # the listing behind _index (a tuple: see FileIndex)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._again = False
        self._loaded = threading.Event()
        self.loaded_at: float | None = None  # time.monotonic() of the last complete listing

    def index(self, wait: float = 0.0) -> FileIndex | None:
        """The current snapshot; with wait > 0, wait up to that long for a first one."""
        if self._index is None and wait > 0:
            self._loaded.wait(wait)
        return self._index

    def refresh(self) -> FileIndex | None:
        """List and index now, in the calling thread; returns the final snapshot.

        The first listing swaps in each partial list as it comes.  A later one
        swaps in only its complete list, and only when it differs: a refresh
        must not shrink the list for a while, nor redo the ranking tables (and
        reset the typing cache) for nothing.
        """
        known = self._index is not None
        final: list[str] | None = None
        for paths in self._lister(self.workspace):
            if known:
                final = paths
            else:
                self._swap(paths)
        if final is not None and tuple(final) != self._listed:
            self._swap(final)
        # Now, off the typing path: the first collection of each generation the index's
        # new tuples reached walks their two million references to untrack them (~30 ms).
        gc.collect()
        self.loaded_at = time.monotonic()
        return self._index

    def _swap(self, paths: list[str]) -> None:
        index = FileIndex(paths)
        self._index, self._listed = index, tuple(paths)
        self._loaded.set()
        index.prepare()  # after the swap: the first `@` list does not wait for it

    def refresh_async(self) -> None:
        """Refresh in a daemon thread; calls during a refresh coalesce into one more."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._again = True
                return
            self._thread = threading.Thread(
                target=self._run, name="sightline-file-list", daemon=True
            )
            self._thread.start()

    @property
    def busy(self) -> bool:
        """A refresh is running (its results will arrive without another one)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def refresh_if_stale(self, max_age: float) -> None:
        """Refresh unless a listing runs or finished less than max_age seconds ago."""
        if self.busy:
            return
        loaded = self.loaded_at
        if loaded is None or time.monotonic() - loaded > max_age:
            self.refresh_async()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """For tests and shutdown: wait until no refresh is running."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _run(self) -> None:
        while True:
            try:
                self.refresh()
            except Exception:  # a failed listing keeps the previous snapshot
                log.exception("listing files of %s failed", self.workspace)
            with self._lock:
                if not self._again:
                    return
                self._again = False
