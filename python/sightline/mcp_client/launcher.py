"""Runs a stdio MCP server so that it dies with the core, even when the core is SIGKILLed.

The SDK starts a stdio server in a new session (process group) and offers no hook to run code
in the child, so the core starts this script instead, as a plain file (it imports nothing of
sightline): `python launcher.py CORE_PID COMMAND ARGS...`. It asks Linux for SIGTERM when its
parent dies (PR_SET_PDEATHSIG; elsewhere it polls the parent every second), starts the server
in its own process group (stdin/stdout are passed through untouched), and on SIGTERM kills the
whole group, itself included — what the SDK's own stop (SIGTERM to the group) also triggers.
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def _kill_group(*_: object) -> None:
    with contextlib.suppress(OSError):
        os.killpg(0, signal.SIGKILL)
    os._exit(137)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    _kill_group()


def main() -> int:
    if len(sys.argv) < 3:
        sys.stderr.write("usage: launcher.py CORE_PID COMMAND [ARGS...]\n")
        return 2
    parent, command = int(sys.argv[1]), sys.argv[2:]
    signal.signal(signal.SIGTERM, _kill_group)
    watched = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            watched = libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    if not watched:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the core died before the request took effect
        _kill_group()
    try:
        child = subprocess.Popen(command)
    except OSError as err:
        sys.stderr.write(f"cannot start {command[0]}: {err.strerror or err}\n")
        return 127
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
