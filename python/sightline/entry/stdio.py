"""`python -m sightline.entry.stdio`: the core, speaking msgpack-RPC on stdio to its Neovim.

Nothing may write to stdout before pynvim owns it: stdout is the RPC channel.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any


def setup_logging() -> None:
    from sightline.domain import paths, secrets

    directory = paths.log_dir()
    directory.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(directory / "core.log", encoding="utf-8")
    handler.addFilter(secrets.RedactingFilter())
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if "--debug" in sys.argv else logging.INFO)


def main() -> None:
    import pynvim

    from sightline.core import Core
    from sightline.domain import secrets
    from sightline.editor.port import NvimEditor
    from sightline.entry import rpc

    setup_logging()
    # Before anything can start a process: what the agent runs must not find the key in
    # the core's environment (/proc/<core>/environ included).
    secrets.capture_env()
    nvim = pynvim.attach("stdio")
    core = Core(NvimEditor(nvim))

    def on_request(name: str, args: list[Any]) -> Any:
        return rpc.dispatch(core, name, args)

    def on_notification(name: str, args: list[Any]) -> None:
        rpc.dispatch(core, name, args)

    try:
        nvim.run_loop(on_request, on_notification)
    finally:
        # Neovim quit (the channel closed, or SIGTERM): exit now. A turn's worker waiting on a
        # command or the model must not keep the core alive; records are already on disk,
        # and the commands' watchdogs see the core gone and kill their process groups.
        # All but a message whose turn had not reached the model yet: kept, never lost.
        try:
            core.keep_unsent()
        except Exception:
            logging.getLogger(__name__).exception("keeping the unsent message failed")
        logging.shutdown()
        os._exit(0)


if __name__ == "__main__":
    main()
