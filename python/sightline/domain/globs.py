"""Globs over `/`-separated relative paths, matched without backtracking.

A glob translated to a Python regex backtracks: `*a*a*a*a*a*a*a*a*b` against a 40-character
file name holds the GIL for seconds, freezing the core while a turn lists files. Here a glob
is a list of steps run as a set-of-states automaton, so a match costs at most
len(path) × 2·len(steps) state moves, whatever the pattern.

`*` and `?` stay inside one path segment, `**` spans segments, `[...]` is a class (`[!...]`
negates). A pattern without `/` matches the file name at any depth (`*.py`), like a
.gitignore line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from sightline.domain.errors import Refused

MAX_GLOB_CHARS = 500

# Step kinds. A class is kept as a one-character regex: matching a single character cannot
# backtrack.
# `**/` is two steps, DIRS then DIRS_IN: from DIRS the group may be skipped; once a
# character of it was consumed (DIRS_IN) it ends only with a `/`.
LITERAL, ONE, CLASS, STAR, ANYTHING, DIRS, DIRS_IN = range(7)


@dataclass(frozen=True)
class Glob:
    kinds: tuple[int, ...]
    args: tuple[str | re.Pattern[str] | None, ...]

    def match(self, path: str) -> bool:
        end = len(self.kinds)
        states = self._closure({0})
        for char in path:
            following: set[int] = set()
            for i in states:
                if i == end:
                    continue
                kind, arg = self.kinds[i], self.args[i]
                if kind == LITERAL:
                    if char == arg:
                        following.add(i + 1)
                elif kind in (ONE, CLASS):
                    if char != "/" and (kind == ONE or _in_class(arg, char)):
                        following.add(i + 1)
                elif kind == STAR:
                    if char != "/":
                        following.add(i)
                elif kind == ANYTHING:
                    following.add(i)
                elif kind == DIRS:
                    following.add(i + 1)
                    if char == "/":
                        following.add(i + 2)
                else:  # DIRS_IN
                    following.add(i)
                    if char == "/":
                        following.add(i + 1)
            if not following:
                return False
            states = self._closure(following)
        return end in states

    def _closure(self, states: set[int]) -> set[int]:
        """Add the states reached by matching nothing (a star may match the empty string)."""
        todo = list(states)
        while todo:
            i = todo.pop()
            kind = self.kinds[i] if i < len(self.kinds) else None
            skip = i + 1 if kind in (STAR, ANYTHING) else i + 2 if kind == DIRS else None
            if skip is not None and skip not in states:
                states.add(skip)
                todo.append(skip)
        return states


def _in_class(arg: str | re.Pattern[str] | None, char: str) -> bool:
    return isinstance(arg, re.Pattern) and arg.fullmatch(char) is not None


@lru_cache(maxsize=64)
def compile_glob(pattern: str) -> Glob:
    """The steps of a glob; Refused when it is too long to be a glob anyone typed."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise Refused(f"glob: longer than {MAX_GLOB_CHARS} characters")
    pattern = pattern.removeprefix("./")
    if "/" not in pattern:
        pattern = "**/" + pattern
    kinds: list[int] = []
    args: list[str | re.Pattern[str] | None] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            kinds += [DIRS, DIRS_IN]
            args += [None, None]
            i += 3
        elif pattern.startswith("**", i):
            kinds.append(ANYTHING)
            args.append(None)
            i += 2
        elif char == "*":
            kinds.append(STAR)
            args.append(None)
            i += 1
        elif char == "?":
            kinds.append(ONE)
            args.append(None)
            i += 1
        elif char == "[" and (end := pattern.find("]", i + 2)) >= 0:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            try:
                kinds.append(CLASS)
                args.append(re.compile("[" + body.replace("\\", "\\\\") + "]"))
            except re.error:
                raise Refused(f"glob: bad character class [{pattern[i + 1 : end]}]") from None
            i = end + 1
        else:
            kinds.append(LITERAL)
            args.append(char)
            i += 1
    return Glob(tuple(kinds), tuple(args))


def glob_match(pattern: str, rel_path: str) -> bool:
    return compile_glob(pattern).match(rel_path)
