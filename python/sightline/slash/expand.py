"""Filling a prompt file's placeholders (pure: the core gathers the values first).

Each format has its own placeholders; sightline's own prompt files take all of them:

* Claude Code's: `$ARGUMENTS` (everything typed after the command) and `$1`…`$9` (its
  words, quotes group them);
* GitHub Copilot's: `${input:name}` / `${input:name:placeholder}` (typed as `name=value`
  after the command, else asked for), `${selection}` (the selection with its file and
  lines, as Change with Agent sends it), `${selectedText}` (its text alone), `${file}`,
  `${fileBasename}`, `${fileDirname}`, `${fileBasenameNoExtension}`, `${workspaceFolder}`,
  `${workspaceFolderBasename}`.

One pass over the body: a value put in is never expanded again.  Arguments typed for a
prompt without an argument placeholder follow its text.  `@` mentions in the result are
resolved when it is sent, as if typed.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from sightline.slash.prompt_files import Format, PromptFile

_FILE_KEYS = (
    "file",
    "fileBasename",
    "fileDirname",
    "fileBasenameNoExtension",
)
_COPILOT = (
    r"\$\{(?P<var>input:[^}\n]*|selection|selectedText|"
    + "|".join(_FILE_KEYS)
    + r"|workspaceFolder|workspaceFolderBasename)\}"
)
_CLAUDE = r"(?P<all>\$ARGUMENTS)\b|\$(?P<pos>[1-9])(?![0-9])"
PATTERNS: dict[Format, re.Pattern[str]] = {
    "claude": re.compile(_CLAUDE),
    "copilot": re.compile(_COPILOT),
    "sightline": re.compile(f"{_COPILOT}|{_CLAUDE}"),
}
_INPUT_NAME = re.compile(r"^[A-Za-z_][\w-]*$")


@dataclass(frozen=True)
class Needs:
    selection: bool = False
    file: bool = False
    inputs: tuple[str, ...] = ()  # `${input:…}` names, in order of first use
    arguments: bool = False  # has `$ARGUMENTS` or `$N`
    prompts: dict[str, str] = field(default_factory=dict)  # input name -> its placeholder


def needs(prompt: PromptFile) -> Needs:
    """What the prompt's placeholders need filled."""
    selection = file = arguments = False
    inputs: dict[str, str] = {}
    for m in PATTERNS[prompt.format].finditer(prompt.body):
        var = m.group("var") if "var" in m.re.groupindex else None
        if var is None:
            arguments = True
        elif var.startswith("input:"):
            name, _, hint = var[len("input:") :].partition(":")
            name = name.strip()
            if _INPUT_NAME.match(name):
                inputs.setdefault(name, hint.strip())
        elif var in ("selection", "selectedText"):
            selection = True
        elif var in _FILE_KEYS:
            file = True
    return Needs(selection, file, tuple(inputs), arguments, inputs)


@dataclass(frozen=True)
class Values:
    arguments: str = ""
    inputs: dict[str, str] = field(default_factory=dict)
    selection: str | None = None  # the block: file, lines, fenced text
    selected_text: str | None = None
    file: str | None = None  # the editor's file, relative to the workspace when inside
    workspace: str = ""


def split_inputs(arguments: str, names: tuple[str, ...]) -> tuple[dict[str, str], str]:
    """`name=value` words of `arguments` for the prompt's inputs, and the rest."""
    if not names:
        return {}, arguments
    found: dict[str, str] = {}
    rest: list[str] = []
    for word in words(arguments):
        key, eq, value = word.partition("=")
        if eq and key in names and key not in found:
            found[key] = value
        else:
            rest.append(word)
    return found, " ".join(rest)


def words(arguments: str) -> list[str]:
    """The arguments' words as a shell splits them; unbalanced quotes split on spaces."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand(prompt: PromptFile, values: Values) -> str:
    """The prompt's text with its placeholders filled."""
    positional = words(values.arguments)
    took_arguments = False

    def fill(m: re.Match[str]) -> str:
        nonlocal took_arguments
        groups = m.groupdict()
        if groups.get("all"):
            took_arguments = True
            return values.arguments
        if groups.get("pos"):
            took_arguments = True
            i = int(groups["pos"]) - 1
            return positional[i] if i < len(positional) else ""
        var = groups.get("var") or ""
        if var.startswith("input:"):
            name = var[len("input:") :].partition(":")[0].strip()
            return values.inputs.get(name, "")
        if var == "selection":
            return values.selection or ""
        if var == "selectedText":
            return values.selected_text or ""
        if var == "workspaceFolder":
            return values.workspace
        if var == "workspaceFolderBasename":
            return os.path.basename(values.workspace.rstrip("/"))
        return _file_part(var, values.file or "")

    text = PATTERNS[prompt.format].sub(fill, prompt.body).strip("\n")
    if values.arguments.strip() and not took_arguments:
        text = f"{text}\n\n{values.arguments.strip()}" if text else values.arguments.strip()
    return text


def _file_part(var: str, path: str) -> str:
    if var == "fileBasename":
        return os.path.basename(path)
    if var == "fileDirname":
        return os.path.dirname(path)
    if var == "fileBasenameNoExtension":
        return os.path.splitext(os.path.basename(path))[0]
    return path
