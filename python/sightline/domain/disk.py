"""What the model is told when a file's buffer was kept although the file changed on disk.

Every read or write through a loaded buffer first brings it up to date with its file
(lua/sightline/port/buffers.lua): an unmodified buffer is reloaded, silently. A buffer that
could not be reloaded comes back with a code, worded here for every tool that reads or
writes through the editor, so the model is never handed the buffer as if it were the file.
"""

from __future__ import annotations


def note(rel: str, code: str | None) -> str | None:
    """The sentence for port code `code` about the file `rel`, or None when there is none."""
    if code == "conflict":
        return (
            f"{rel} has unsaved changes in the editor and the file also changed on disk since "
            "it was loaded: this is the editor's text (the user's unsaved changes), not the "
            "file on disk; edits go to the editor's text and are not saved over the file. "
            "Tell the user: they decide which version stays."
        )
    if code == "deleted":
        return (
            f"{rel} was deleted on disk; this is the text still held in the editor's buffer "
            "(edits to it are not saved)"
        )
    return None


def refused_read(rel: str, code: str) -> str:
    """Why a read that can carry no note (an ACP agent's fs/read_text_file) is refused."""
    if code == "deleted":
        return f"{rel} was deleted on disk; only the editor's buffer still holds its text"
    return (
        f"{rel} has unsaved changes in the editor and the file also changed on disk since it "
        "was loaded, so neither text is surely the one to work on: the user must save or "
        "reload it first. Tell the user."
    )
