"""What `sightline extensions …` and `:Sightline extension …` say: one wording for both.

The operations themselves are sightline.domain.extensions'; this module turns their
results into the listing and the one-line confirmations, naming the command
the user is in (`sightline extensions` or `:Sightline extension`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sightline.domain import extensions as ext
from sightline.domain.text import clean_display_text

CLI = "sightline extensions"
EX = ":Sightline extension"

# A listing row's highlight in Neovim, by its kind (see status_rows).
ROW_GROUPS = {
    "header": "Title",
    "disabled": "Comment",
    "error": "SightlineError",
    "hint": "Comment",
}


def state_of(status: ext.ExtensionStatus) -> str:
    return "active" if status.active else "error" if status.error else "disabled"


def status_rows(
    statuses: Sequence[ext.ExtensionStatus], command: str = CLI
) -> list[tuple[str, str]]:
    """The listing as (line, kind) pairs; kind is "header", a state, "hint" or "empty"."""
    if not statuses:
        return [(f"No extensions. Install one with: {command} install PATH", "empty")]
    cells = [("NAME", "VERSION", "STATE", "SOURCE", "DESCRIPTION")]
    for s in statuses:
        text = f"error: {s.error}" if s.error else s.description or ""
        cells.append(
            (
                clean_display_text(s.name),
                clean_display_text(s.version) or "-",
                state_of(s),
                s.source,
                clean_display_text(text),
            )
        )
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    kinds = ["header", *(state_of(s) for s in statuses)]
    rows = []
    for row, kind in zip(cells, kinds, strict=True):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True))
        rows.append(((line + "  " + row[4]).rstrip(), kind))
    if any(s.source == "workspace" and not s.enabled and not s.error for s in statuses):
        rows.append(("", "hint"))
        rows.append(
            ("Extensions carried by a workspace stay disabled until you enable them there:", "hint")
        )
        rows.append((f"  {command} enable NAME --workspace", "hint"))
    return rows


def status_chunks(statuses: Sequence[ext.ExtensionStatus]) -> list[list[str]]:
    """The listing for `:Sightline extensions`: [line, highlight group] per row."""
    return [[line, ROW_GROUPS.get(kind, "")] for line, kind in status_rows(statuses, EX)]


def format_status_table(statuses: Sequence[ext.ExtensionStatus], command: str = CLI) -> str:
    """The human listing as text, one row per extension."""
    return "".join(line + "\n" for line, _ in status_rows(statuses, command))


def installed(extension: ext.Extension) -> str:
    return f"Installed {extension.name} {extension.version} in {extension.path}"


def uninstalled(name: str, removed: Path) -> str:
    return f"Uninstalled {name} ({removed})"


def switched(extension: ext.Extension, enabled: bool, workspace: Path, scoped: bool) -> str:
    verb = "Enabled" if enabled else "Disabled"
    where = f"for workspace {workspace}" if scoped else "for you (all workspaces)"
    line = f"{verb} {extension.name} {where}"
    reason = extension.inactive_reason()
    if enabled and reason is not None:
        line += f"; it is still not active here: {reason}"
    return line
