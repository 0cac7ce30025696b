"""The built-in `/` commands: each runs its `:Sightline` subcommand, the same code path.

One entry per command, as data: the composer asks the core what `/word` is, and for a
built-in the Lua side runs `:Sightline {subcommand} {arguments}` (commands.lua's `run`), so
a refusal, a confirmation or a picker is exactly the Ex command's.  A new command that has
a `:Sightline` subcommand is one more entry here.

A prompt file of a built-in's name wins over it (the user made it on purpose, say their own
`.claude/commands/review.md`): the menu marks the prompt as hiding the built-in, which stays
reachable as its `:Sightline` subcommand (service.py, catalog.Command.shadows).  One that is
skipped (broken front matter, over the bounds) hides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Builtin:
    name: str  # typed as `/name`
    subcommand: str  # the `:Sightline` subcommand it runs
    description: str
    argument_hint: str = ""  # what may follow, shown in the menu


BUILTINS: tuple[Builtin, ...] = (
    Builtin("compact", "compact", "summarise the conversation so far to free context"),
    Builtin("fork", "fork", "continue in a new conversation (this one is kept)"),
    Builtin("history", "history", "open an earlier conversation of this workspace"),
    Builtin("model", "model", "show or switch the model", "[name]"),
    Builtin("plan", "plan", "switch plan mode (read and plan, no edits)", "[on|off|toggle]"),
    Builtin("regenerate", "regenerate", "ask for the last reply again (the earlier one is kept)"),
    Builtin("reset", "reset", "start a new conversation"),
    Builtin("review", "review", "review this conversation's changes, hunk by hunk", "[git-ref]"),
    Builtin(
        "rewind",
        "rewind",
        "put the files back as they were before a turn (fork: the conversation too)",
        "[fork] [N]",
    ),
)

BY_NAME: dict[str, Builtin] = {b.name: b for b in BUILTINS}
