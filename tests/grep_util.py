"""Patterns for the grep bounds tests."""

from __future__ import annotations

# Nested quantifiers: backtracking is exponential in the length of a line of `=` without a `y`.
CATASTROPHIC = "(=+)+y"
