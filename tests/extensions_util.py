"""Extension folders as a user installs them (a manifest and a SIGHTLINE.md)."""

from __future__ import annotations

import json
from pathlib import Path


def make_extension(root: Path, name: str, description: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    manifest = {"name": name, "version": "1.0.0"}
    if description:
        manifest["description"] = description
    (folder / "sightline-extension.json").write_text(json.dumps(manifest))
    (folder / "SIGHTLINE.md").write_text(f"{name} knows things.\n")
    return folder
