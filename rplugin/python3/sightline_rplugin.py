"""Classic remote-plugin adapter: the same requests as `python -m sightline.host`.

For people who register remote plugins with :UpdateRemotePlugins. It only translates:
`SightlineRequest(method, params)` → rpc.dispatch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pynvim

# The core package lives beside this adapter in the plugin's python/ folder.
_PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)


@pynvim.plugin
class SightlinePlugin:
    def __init__(self, nvim: Any):
        self._nvim = nvim
        self._core: Any = None

    def _get_core(self) -> Any:
        if self._core is None:
            from sightline.core import Core
            from sightline.editor.port import NvimEditor

            self._core = Core(NvimEditor(self._nvim))
        return self._core

    @pynvim.function("SightlineRequest", sync=True)
    def request(self, args: list[Any]) -> Any:
        from sightline.entry import rpc

        name = args[0] if args else ""
        params = args[1:2] if len(args) > 1 else []
        return rpc.dispatch(self._get_core(), str(name), params)
