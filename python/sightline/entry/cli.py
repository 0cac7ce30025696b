"""The `sightline` command line (also `python -m sightline`).

    sightline extensions                      same as `extensions list`
    sightline extensions list [--json] [--workspace DIR]
    sightline extensions install PATH [--force]
    sightline extensions uninstall NAME
    sightline extensions enable NAME [--workspace [DIR]]
    sightline extensions disable NAME [--workspace [DIR]]
    sightline ask [--provider anthropic|echo] [--model M] TEXT...

The workspace is the current directory unless `--workspace DIR` names one.
For enable/disable, `--workspace` also says the change is for that workspace
only.  Exit status: 0 done, 1 the request could not be done (one line on
stderr says why).  The same functions back `:Sightline extension …`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from sightline.domain import extensions as ext
from sightline.entry import extension_admin as admin
from sightline.entry.extension_admin import format_status_table

Handler = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """Bad command-line usage; reported like any other user error."""


class _Parser(argparse.ArgumentParser):
    # argparse exits with status 2 and a usage dump; we keep to 0/1 and one line.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {self.prog} --help)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stdout)
            return 0
        return handler(args)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    except (UsageError, ext.ExtensionError) as e:
        return _fail(str(e))
    except OSError as e:  # e.g. a folder we may not write: a message, not a traceback
        where = f": {e.filename}" if e.filename else ""
        return _fail(f"{e.strerror or e}{where}")
    except KeyboardInterrupt:
        return 130


def _fail(message: str) -> int:
    sys.stderr.write(f"sightline: {message}\n")
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sightline", description="sightline: an AI agent for Neovim.")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    _add_extensions(commands)
    _add_ask(commands)
    return parser


def _add_ask(commands: argparse._SubParsersAction[_Parser]) -> None:
    p = commands.add_parser(
        "ask",
        help="ask one question; @ext:NAME and @PATH mentions attach context",
        description="Run one turn in the current directory and print the reply as it streams.",
    )
    p.add_argument("text", nargs="+", metavar="TEXT", help="the message ('-' reads stdin)")
    p.add_argument(
        "--provider",
        choices=("anthropic", "echo"),
        help="default: anthropic when $ANTHROPIC_API_KEY is set, else echo",
    )
    p.add_argument("--model", help="the model to ask (default: the plugin's)")
    p.set_defaults(handler=_cmd_ask)


def _cmd_ask(args: argparse.Namespace) -> int:
    from sightline.entry import ask

    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    if not text.strip():
        raise UsageError("nothing to ask: the message is empty")
    provider = args.provider or ask.default_provider()
    return ask.ask(text, provider=provider, model=args.model, out=sys.stdout, err=sys.stderr)


def _add_extensions(commands: argparse._SubParsersAction[_Parser]) -> None:
    p = commands.add_parser(
        "extensions",
        aliases=["extension"],
        help="list, install, uninstall, enable and disable extensions",
        description="Manage extensions (with no subcommand: list them).",
    )
    # `extensions --workspace DIR` (no subcommand) lists that workspace.
    p.add_argument("--workspace", dest="list_workspace", metavar="DIR", help="workspace to report")
    p.set_defaults(handler=_cmd_list, json=False, workspace=None)
    sub = p.add_subparsers(title="subcommands", metavar="SUBCOMMAND", parser_class=_Parser)

    lst = sub.add_parser("list", help="show extensions, their state and any manifest error")
    lst.add_argument("--json", action="store_true", help="print the status as JSON")
    lst.add_argument("--workspace", metavar="DIR", help="workspace to report (default: cwd)")
    lst.set_defaults(handler=_cmd_list)

    ins = sub.add_parser("install", help="copy an extension folder into the user's extensions")
    ins.add_argument("path", metavar="PATH", help="folder holding sightline-extension.json")
    ins.add_argument("--force", action="store_true", help="replace an installed extension")
    ins.set_defaults(handler=_cmd_install)

    uni = sub.add_parser("uninstall", help="remove an installed extension")
    uni.add_argument("name", metavar="NAME")
    uni.set_defaults(handler=_cmd_uninstall)

    for verb, enabled in (("enable", True), ("disable", False)):
        sp = sub.add_parser(verb, help=f"{verb} an extension for you, or for one workspace")
        sp.add_argument("name", metavar="NAME")
        sp.add_argument(
            "--workspace",
            nargs="?",
            const=".",
            metavar="DIR",
            help=f"{verb} it for this workspace only (default: the current directory)",
        )
        sp.set_defaults(handler=_cmd_switch, enabled=enabled)


def _workspace(args: argparse.Namespace) -> Path:
    chosen = args.workspace or getattr(args, "list_workspace", None) or os.getcwd()
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise UsageError(f"workspace {chosen}: not a folder")
    return path.resolve()


# --- subcommands ---------------------------------------------------------------


def _cmd_list(args: argparse.Namespace) -> int:
    statuses = ext.status(_workspace(args))
    if args.json:
        sys.stdout.write(json.dumps([s.to_dict() for s in statuses], indent=2) + "\n")
        return 0
    sys.stdout.write(format_status_table(statuses))
    return 0


def _cmd_install(args: argparse.Namespace) -> int:
    sys.stdout.write(admin.installed(ext.install(args.path, force=args.force)) + "\n")
    return 0


def _cmd_uninstall(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    removed = ext.uninstall(args.name, workspace=workspace)
    sys.stdout.write(admin.uninstalled(args.name, removed) + "\n")
    return 0


def _cmd_switch(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    scoped = args.workspace is not None
    result = ext.set_enabled(args.name, args.enabled, workspace=workspace, workspace_scope=scoped)
    sys.stdout.write(admin.switched(result, args.enabled, workspace, scoped) + "\n")
    return 0
