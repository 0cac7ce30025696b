"""Every sentence the transcript says of its own: tool calls and their outcome, refusals,
asks and answers, retries, stops, limits, compaction, the turn's footer and the bar's usage.

One module words them, so one event reads the same wherever it comes from: the built-in
loop (agent/), an ACP agent (providers/acp), the MCP client (mcp_client) or a tool (tools/,
gate/). Those call sites pass facts and write what this returns into the transcript
(tests/unit/test_narrator.py holds that no other module words a note). What the model is
told stays in the tool result, worded where the tool is.

A note is a `Note` (its text and its highlight group), for `Transcript.add_note(*note)`;
a block is a list of `Line`s, for `Transcript.add_lines`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sightline.domain import pricing

NOTE = "SightlineNote"
WARNING = "SightlineWarning"
ERROR = "SightlineError"
HEADING = "SightlineAssistant"

Line = tuple[str, str | None]


class Note(NamedTuple):
    text: str
    group: str = NOTE


# -- steering: branches, forks and queued messages -----------------------------------------------


def branched(why: str | None) -> Note:
    """A branch starts here (an edited message, a regenerated reply)."""
    if why == "regenerate":
        return Note("regenerated — the earlier answer is kept, :Sightline history shows it")
    return Note("edited — the earlier version is kept, :Sightline history shows it")


def forked(title: str) -> Note:
    """The first line of a conversation forked from another."""
    return Note(f"forked from “{title}” — both can be continued, :Sightline history shows it")


def fork_without_checkpoints() -> Note:
    """A fork whose checkpoints could not be copied (the disk refused)."""
    return Note(
        "✗ the fork's checkpoints could not be kept: its earlier turns cannot be rewound here "
        "(they still can in the conversation it was forked from)",
        WARNING,
    )


def steered() -> Note:
    """A queued message delivered after the tool results, in the same turn."""
    return Note("↳ steered: sent with the tool results, the agent reads it before it goes on")


# -- the model's reply and the turn ------------------------------------------------------------

REDACTED_THINKING = "(redacted by the API)"  # a thinking block the API sent encrypted


def error(message: str) -> Note:
    """The turn failed (the provider's words, or a recorded error reopened)."""
    return Note("✗ " + message, ERROR)


def prompt_skipped(why: str) -> Note:
    """A prompt file or skill left out of `/` (its file, line and reason)."""
    return Note("✗ " + why, WARNING)


def internal_error(err: BaseException) -> Note:
    return Note(f"✗ internal error: {type(err).__name__}: {err} (details in the log)", ERROR)


def notice(text: str) -> Note:
    """A provider's warning about the request (worded by the provider: it knows why)."""
    return Note(text, WARNING)


def retrying(reason: str, delay_s: float, attempt: int, of: int) -> Note:
    """One line, rewritten by each retry (`↻ … · retry 1/2 in 0.5 s`)."""
    return Note(f"↻ {reason} · retry {attempt}/{of} in {delay_s:g} s", WARNING)


def token_limit(max_tokens: int | None) -> Note:
    """The reply stopped at its token limit: the configured one, or an ACP agent's own."""
    if max_tokens is None:
        return Note("The agent stopped at its token limit.", WARNING)
    return Note(f"The reply stopped at provider.max_tokens ({max_tokens} tokens).", WARNING)


def agent_refused() -> Note:
    return Note("The agent refused to continue.", WARNING)


def iteration_limit(rounds: int) -> Note:
    return Note(f"Stopped after {rounds} tool rounds (tools.max_iterations).", WARNING)


def stopped() -> Note:
    return Note("■ Stopped.", WARNING)


def interrupted() -> Note:
    """A turn reopened from history that never got its reply (Neovim quit or the core ended
    while it streamed)."""
    return Note("✗ interrupted: the session ended before the reply", ERROR)


def rules(
    paths: Sequence[str], cut: Sequence[str], cut_kib: int, left_out: Sequence[str] = ()
) -> Note:
    """The rules files the turn uses; `@path` makes each a chip. `left_out`: the files not
    used, each with why ("CLAUDE.md (a binary file; not shown)")."""
    text = "rules: " + (", ".join(f"@{p}" for p in paths) or "none")
    if cut:
        text += f" (cut to the first {cut_kib} KiB: {', '.join(cut)})"
    if left_out:
        text += f"; left out: {', '.join(left_out)}"
    return Note(text)


def about(title: str) -> str:
    """The muted line under a scoped message: what it is about (a chip to the selection)."""
    return f"about {title}"


def new_conversation(workspace: str) -> Note:
    return Note(f"New conversation for {workspace}")


def damaged(skipped: Sequence[str]) -> Note:
    """Records of a reopened conversation that were skipped (their first one named)."""
    n = len(skipped)
    return Note(
        f"⚠ {n} damaged record{'s' if n > 1 else ''} of this conversation "
        f"{'were' if n > 1 else 'was'} skipped ({skipped[0]}{', …' if n > 1 else ''})",
        WARNING,
    )


# -- tool calls --------------------------------------------------------------------------------


def tool_call(label: str) -> Note:
    """A call's line while it runs; `tool_failed` rewrites it when it fails."""
    return Note(f"• {label}")


def tool_failed(label: str, told: str) -> Note:
    """A failed call's line: its reason, the first line of what the model was told."""
    reason = next((line for line in told.splitlines() if line.strip()), "failed")
    if len(reason) > 160:
        reason = reason[:159] + "…"
    return Note(f"✗ {label} — {reason}", ERROR)


def abandoned() -> Note:
    return Note("✗ not completed: the session ended before this call finished", ERROR)


def refused(what: str, why: str) -> Note:
    """sightline refused what the model or an agent asked (`tool grep`, `write to a.py`,
    `permission: Run make`), and why."""
    return Note(f"✗ refused {what} ({why})", ERROR)


def refused_tool(name: str, why: str) -> Note:
    return refused(f"tool {name}", why)


def rejected(reason: str = "") -> Note:
    """The user answered an ask (an edit, a command, an MCP tool, an agent's permission) no."""
    return Note("✗ rejected by the user" + (f": {reason}" if reason else ""), WARNING)


def asked_permission(title: str) -> Note:
    return Note(f"? permission: {title} (accept or reject)", WARNING)


def allowed(title: str) -> Note:
    return Note(f"✔ allowed {title}")


def proposal_header(summary: str) -> Line:
    """The first line of a proposal's diff block."""
    return (f"✎ {summary}", WARNING)


def proposal_outcome(done: str, failed: bool, auto: bool = False) -> Note:
    """An accepted proposal's line: what was done, or why it could not be."""
    if failed:
        return Note("✗ " + done, ERROR)
    return Note("✔ " + done + (" (autoaccept)" if auto else ""))


def _numbers(numbers: Sequence[int]) -> str:
    """`2`, `1 and 3`, `1, 2 and 4`."""
    shown = [str(n) for n in numbers]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _hunks_rejected(rejected: Sequence[tuple[int, str]]) -> str:
    """`2`, `2: why`, `2 and 4 (2: why)`: the hunks the user rejected and their notes."""
    names = _numbers([n for n, _ in rejected])
    notes = [(n, note) for n, note in rejected if note]
    if not notes:
        return names
    if len(rejected) == 1:
        return f"{names}: {notes[0][1]}"
    return names + " (" + "; ".join(f"{n}: {note}" for n, note in notes) + ")"


def hunks_applied(
    applied: Sequence[int], rejected: Sequence[tuple[int, str]], total: int, done: str
) -> Note:
    """An edit decided hunk by hunk, partly accepted: which hunks (numbered from 1) were
    applied, which rejected and the user's notes, then what became of the file."""
    s = "s" if len(applied) > 1 else ""
    return Note(
        f"✔ Applied hunk{s} {_numbers(applied)} of {total}; "
        f"rejected {_hunks_rejected(rejected)}. {done}"
    )


def hunks_rejected(rejected: Sequence[tuple[int, str]], total: int) -> Note:
    """An edit whose every hunk the user rejected, one by one."""
    reason = hunks_rejected_reason(rejected, total)
    return Note("✗ " + reason[:1].upper() + reason[1:], WARNING)


def hunks_rejected_reason(rejected: Sequence[tuple[int, str]], total: int) -> str:
    """`hunks_rejected` as the reason on the call's line (`tool_failed`)."""
    notes = [(n, note) for n, note in rejected if note]
    text = f"rejected all {total} hunks" if total > 1 else "rejected the hunk"
    if notes:
        text += ": " + "; ".join(f"{n}: {note}" for n, note in notes)
    return text


def command_shown(command: str) -> list[Line]:
    """A command as the user decides on it: verbatim, every line."""
    return [("$ " + line, WARNING) for line in command.split("\n")]


SCOPE_WORDS = {"always": "always in this workspace", "conversation": "for this conversation"}


def keeps(shown: Sequence[str], why: str) -> Line:
    """Under an ask: what allowing it always (or for the conversation) would keep, or why
    nothing of it can be kept."""
    if why:
        return (f"  (asked each time: {why})", None)
    return ("  allowing it keeps: " + " · ".join(f"`{s}`" for s in shown), None)


def how_it_runs(described: str) -> Line:
    """Under a command's ask: in the sandbox and its rules, or unsandboxed and why."""
    return (f"  ({described})", WARNING if described.startswith("runs unsandboxed") else None)


def sandbox_refused(rules: Sequence[str]) -> Note:
    """A sandboxed command failed, and its output points at these rules of the sandbox."""
    return Note("⚠ the sandbox may have refused it: " + "; ".join(rules), WARNING)


def kept_rule_decided(effect: str, shown: str) -> Note:
    """A kept approval decided without asking."""
    if effect == "allow":
        return Note(f"✔ allowed by your kept approval {shown}")
    return Note(f"✗ denied by your kept rule {shown} (:Sightline approvals)", WARNING)


def kept(effect: str, scope: str, shown: Sequence[str]) -> Note:
    """A decision the user chose to keep."""
    what = ", ".join(f"`{s}`" for s in shown)
    return Note(f"⊕ kept: {effect} {what} {SCOPE_WORDS.get(scope, scope)}")


def command_ran(status: str, seconds: float, lines: int) -> Note:
    return Note(f"⏵ {status} · {seconds:.1f} s · {lines} lines of output")


def size(n: int) -> str:
    """`512 B`, `12.3 kB`, `4.0 MB`: a size as the transcript shows it."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1_000_000:.1f} MB"


def fetched(url: str, status: int, reason: str, nbytes: int, cut: bool) -> Note:
    """fetch_url or `@url:` got a page: where from, its status and size (its excerpt is
    folded below)."""
    said = f"{status} {reason}".rstrip()
    tail = " (cut at tools.network.max_bytes)" if cut else ""
    return Note(f"⇣ {url} · {said} · {size(nbytes)}{tail}", WARNING if status >= 400 else NOTE)


def image_attached(name: str, width: int, height: int, nbytes: int, scaled_from: Any) -> Note:
    """An image the message carries (`@image:`, a paste, a dropped path), as its chip:
    name, pixel size, bytes, and the size it had when it was scaled down to be sent."""
    scaled = ""
    if isinstance(scaled_from, list | tuple) and len(scaled_from) == 2:
        scaled = f" (scaled from {scaled_from[0]}×{scaled_from[1]})"
    return Note(f"▣ {name} · {width}×{height}{scaled} · {size(nbytes)}")


def url_not_fetched(url: str, why: str) -> Note:
    """An `@url:` the message mentions could not be fetched (the model is told too)."""
    return Note(f"✗ @url:{url} not fetched — {why}", ERROR)


def searched(backend: str, query: str, results: int) -> Note:
    """web_search answered (its results are folded below)."""
    return Note(f"⌕ {backend}: {query} · {results} result{'' if results == 1 else 's'}")


def moved_to(where: str) -> Note:
    """go_to_position moved the cursor (the focus stayed in the pane)."""
    return Note("↳ " + where)


def checklist(steps: list[dict[str, Any]]) -> list[Line]:
    """A plan (update_plan, an ACP agent's plan): a Markdown task list, done steps muted."""
    done = sum(1 for s in steps if s.get("done"))
    lines: list[Line] = [(f"▍Plan ({done}/{len(steps)} done)", HEADING)]
    for step in steps:
        text = " ".join(str(step.get("text", "")).split())
        if step.get("done"):
            lines.append((f"- [x] {text}", NOTE))
        else:
            lines.append((f"- [ ] {text}", None))
    return lines


# -- MCP servers -------------------------------------------------------------------------------


def mcp_ask(summary: str, args: Sequence[str], hints: str, trusted_by: str | None) -> list[Line]:
    """An MCP exec tool's ask: what runs, its arguments (already clipped), the server's hints."""
    shown: list[Line] = [
        (f"⚙ {summary} (MCP tool: runs on the server after you allow it)", WARNING)
    ]
    shown += [("  " + line, WARNING) for line in args]
    if hints:
        trusted = f" (trusted: {trusted_by})" if trusted_by else ""
        shown.append((f"  server's annotations: {hints}{trusted}", None))
    return shown


def mcp_unsandboxed(server: str, why: str) -> Note:
    """A server that asked for the sandbox starts without one (tools.sandbox 'auto')."""
    return Note(f"⚠ MCP server {server} runs unsandboxed: {why}", WARNING)


def mcp_timed_out(server: str, tool: str, timeout_s: float) -> Note:
    return Note(f"✗ {server}/{tool} timed out after {timeout_s:g} s (mcp.call_timeout_ms)", WARNING)


def mcp_tool_not_offered(server: str, tool: str, why: str) -> Note:
    return Note(f"⚠ MCP server {server}: tool {tool} not offered ({why})", WARNING)


def mcp_definition_changed(server: str, why: str) -> Note:
    """A .mcp.json server the user enabled whose definition changed since: it stays off."""
    return Note(f"⚠ MCP server {server} of .mcp.json: {why}", WARNING)


def mcp_server_failed(server: str, source: str, why: str) -> Note:
    """A server did not start or stopped: one line naming it and where it was configured
    (`source` "user": setup()'s `mcp.servers`; "workspace": the workspace's .mcp.json)."""
    origin = f"mcp.servers.{server}" if source == "user" else ".mcp.json"
    return Note(f"✗ MCP server {server} ({origin}) {why}; its tools are left out", ERROR)


# -- an ACP agent ------------------------------------------------------------------------------

_STATUS: Mapping[str, tuple[str, str, str]] = {
    "pending": ("•", "pending", NOTE),
    "in_progress": ("…", "in progress", NOTE),
    "completed": ("✔", "done", NOTE),
    "failed": ("✗", "failed", ERROR),
}
CALL_STATUSES = frozenset(_STATUS)


def call_status(title: str, status: str) -> Line:
    """An ACP tool call's status line, rewritten in place as the status changes."""
    icon, word, group = _STATUS[status]
    return (f"{icon} {title} ({word})", group)


def call_location(path: str, line: int) -> Line:
    """A location of an ACP tool call: `path:line`, a chip the user may follow."""
    return (f"  ↳ {path}:{line}", NOTE)


def call_diff_header(path: str) -> Line:
    return (f"  diff {path}", NOTE)


def bypassed(paths: Sequence[str]) -> list[Line]:
    """Files an ACP agent changed on disk without the review gate."""
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return [(f"⚠ changed on disk by the agent, not through the review gate: {shown}", WARNING)]


def bypassed_kept(paths: Sequence[str]) -> list[Line]:
    """Files an ACP agent wrote itself whose buffers hold unsaved changes: not reloaded."""
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return [
        (
            f"⚠ open with unsaved changes, so the agent's version on disk was not loaded: "
            f"{shown} (your text stays in the buffer; :edit! loads the file)",
            WARNING,
        )
    ]


def bypass_unchecked() -> Note:
    """The workspace walk for ACP self-writes was cut short (too many files, or too slow)."""
    return Note(
        "⚠ the workspace has too many files to check them all in time: a file the agent "
        "wrote itself may not be named here",
        WARNING,
    )


def agent_unasked(title: str) -> list[Line]:
    """An ACP agent's write or command started with no permission request."""
    return [
        (
            f"⚠ the agent ran {title!r} without asking: no permission request reached sightline",
            WARNING,
        )
    ]


def agent_switched_mode(mode: str) -> Note:
    return Note(
        f"⚠ the agent switched itself to its mode {mode!r}, which does not ask before it "
        "writes or runs commands; sightline sets its asking mode again before the next turn",
        WARNING,
    )


def agent_resumed(session_id: str) -> Note:
    return Note(f"Resumed the agent's session {session_id}.")


def agent_new_session() -> Note:
    return Note("The agent starts a new session: it does not know the conversation above.", WARNING)


def agent_without_mcp(agent: str, gemini: bool) -> Note:
    why = (
        " (Gemini CLI starts MCP servers only in a folder you trust: trust this one in Gemini CLI)"
        if gemini
        else ""
    )
    return Note(
        f"The agent {agent!r} did not start sightline's MCP server, so it cannot "
        f"reveal code in this Neovim{why}.",
        WARNING,
    )


# -- compaction --------------------------------------------------------------------------------


def compacting() -> Note:
    return Note("⟲ Compacting the conversation…")


def compacted(replaced: int) -> Note:
    s = "" if replaced == 1 else "s"
    return Note(
        f"⟲ Conversation compacted: {replaced} earlier message{s} summarised into one "
        "(the history keeps them all)."
    )


def not_compacted(message: str) -> Note:
    """`:Sightline compact` failed."""
    return Note("✗ The conversation was not compacted: " + message, ERROR)


def compaction_skipped(message: str) -> Note:
    """An automatic compaction failed; the turn goes on."""
    return Note(
        f"⚠ The conversation could not be compacted ({message}); it goes on in full.", WARNING
    )


# -- cost and usage ----------------------------------------------------------------------------


def format_cost(dollars: float) -> str:
    """`$0.012`, `$1.23`: enough digits to see a cheap turn move."""
    return f"${dollars:.2f}" if dollars >= 1 else f"${dollars:.4f}".rstrip("0").rstrip(".")


def _count(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def usage_parts(tokens: pricing.Tokens, dollars: float | None) -> dict[str, Any]:
    """The pane bar's usage: `tokens`, the counts (`12.3k in`, `456 out`, `2000 cached`), and
    `cost` (`$0.012`, None when the price is unknown); the bar shows each whole or not at all."""
    if tokens == pricing.Tokens():
        return {"tokens": [], "cost": None}
    counts = [f"{_count(tokens.input + tokens.cache_write)} in", f"{_count(tokens.output)} out"]
    if tokens.cache_read:
        counts.append(f"{_count(tokens.cache_read)} cached")
    return {"tokens": counts, "cost": None if dollars is None else format_cost(dollars)}


def turn_footer(seconds: float, used: pricing.Tokens, dollars: float | None) -> Note:
    """The line that ends a turn: how long it took, its tokens and what it cost."""
    out = f"─ {seconds:.1f} s"
    if used.input or used.output or used.cache_read or used.cache_write:
        out += f" · {used.input} in · {used.output} out"
        if used.cache_read:
            out += f" · {used.cache_read} from cache"
        if used.cache_write:
            out += f" · {used.cache_write} to cache"
        if dollars is not None:
            out += f" · {format_cost(dollars)}"
    return Note(out)


# -- checkpoints and rewinds -------------------------------------------------------------------


def checkpoints_dropped(count: int, cap_mb: int) -> Note:
    """The checkpoint store passed its cap (checkpoints.max_mb): the oldest were dropped."""
    what = "checkpoint was" if count == 1 else f"{count} checkpoints were"
    return Note(
        f"the oldest {what} dropped to keep the checkpoint store under {cap_mb} MB "
        "(checkpoints.max_mb): those turns can no longer be rewound",
        WARNING,
    )


def rewind_started(seq: int, label: str) -> Note:
    return Note(f"⟲ rewinding to before #{seq} ({label}): the files it and later turns changed")


def rewind_conflict(rel: str) -> Note:
    """A file the user changed after the undone turns: its way back is proposed hunk by hunk."""
    return Note(
        f"{rel} changed since (your edits): take the hunks that go back to the checkpoint; "
        "those you reject keep your text",
        WARNING,
    )


def rewind_delete_question(names: Sequence[str]) -> str:
    """The gate's question before a rewind deletes the files the undone turns created."""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return f"delete {shown} (created by the undone turns)?"


def rewind_label(seq: int, label: str) -> str:
    return f"rewind to before #{seq} ({label})"


def rewound(
    restored: Sequence[str], kept: Sequence[str], deleted: Sequence[str], left: Sequence[str]
) -> list[Line]:
    """What a rewind did, file by file."""

    def names(paths: Sequence[str]) -> str:
        return ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")

    lines: list[Line] = []
    if restored:
        lines.append((f"⟲ restored: {names(restored)}", NOTE))
    if deleted:
        lines.append((f"⟲ deleted: {names(deleted)}", NOTE))
    if kept:
        lines.append((f"⟲ kept as you left them: {names(kept)}", WARNING))
    if left:
        lines.append((f"⟲ not restored (their earlier text was not kept): {names(left)}", WARNING))
    if not lines:
        lines.append(("⟲ nothing to rewind: every file already holds that checkpoint", NOTE))
    return lines


# -- the change review -------------------------------------------------------------------------


def review_hunk(index: int, count: int, added: int, removed: int, edited: bool) -> str:
    """A quickfix entry of :Sightline review: one hunk, as the revert would change it."""
    mark = " — edited by you since" if edited else ""
    return f"hunk {index + 1}/{count}: revert +{added} −{removed}{mark}"


def review_summary(rel: str, hunks: int) -> str:
    return f"review {rel} ({hunks} hunk{'' if hunks == 1 else 's'}: accept reverts, reject keeps)"


def review_edited(hunks: Sequence[int]) -> Note:
    names = ", ".join(str(h) for h in hunks)
    return Note(
        f"hunk{'' if len(hunks) == 1 else 's'} {names} hold your edits since the agent's: "
        "reverting asks again",
        WARNING,
    )


def review_confirm(rel: str, hunks: Sequence[int]) -> str:
    names = ", ".join(str(h) for h in hunks)
    return f"revert hunk{'' if len(hunks) == 1 else 's'} {names} of {rel} over your own edits?"


def review_kept(rel: str) -> Note:
    return Note(f"kept: {rel} as it is")


def review_reverted(rel: str, hunks: Sequence[int], done: str, failed: bool) -> Note:
    names = ", ".join(str(h) for h in hunks)
    if failed:
        return Note(f"✗ not reverted: {rel}: {done}", ERROR)
    return Note(f"⟲ reverted in {rel}: hunk{'' if len(hunks) == 1 else 's'} {names}")
