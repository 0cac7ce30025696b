"""What a message the composer sends as `/name arguments…` does (the `slash.run` request).

* a built-in: answered with the `:Sightline` subcommand and its arguments, which Neovim runs
  as the Ex command runs them (no turn starts here);
* a prompt file: its placeholders filled, its inputs asked for when missing (answered with
  `ask`: Neovim asks with vim.ui.input and sends again with `inputs`), refused with nothing
  sent when it needs a selection or a file there is not, or names a `model` the provider
  does not offer; then sent (on that model, for that turn alone), the transcript showing
  what was typed with the expansion folded under it;
* an MCP prompt (`/mcp:{server}:{prompt} name=value…`): missing required arguments asked
  for (`ask`), then fetched and sent on a worker (answered with `pending` at once);
* an ACP agent's command: sent to the agent as typed, which is how the protocol runs one;
* a skill: its instructions sent, with what was typed after its name;
* an unknown `/word`: sent as typed, with a `hint` for the bar.
"""

from __future__ import annotations

import contextvars
import re
import threading
from typing import Any

from sightline.core import Core
from sightline.domain import narrator, scope
from sightline.domain.errors import Refused
from sightline.domain.skills import Skill
from sightline.slash import catalog, expand, mcp_prompts
from sightline.slash.builtins import Builtin
from sightline.slash.mcp_prompts import McpPrompt
from sightline.slash.prompt_files import PromptFile
from sightline.slash.service import Context
from sightline.tools.skills import PREFIX as SKILL_PREFIX


def run(core: Core, params: dict[str, Any]) -> dict[str, Any]:
    text: str = params["text"]
    workspace = params.get("workspace") or core.session.workspace
    plain = {"text": text, "workspace": workspace}
    split = catalog.split_command(text)
    if split is None:
        return core.send(plain)
    name, arguments = split
    ctx = Context(workspace, params.get("config_dir"))
    command = core.slash.find(ctx, name)
    if command is None:
        out = core.send(plain)
        out["hint"] = f"/{name[:60]} is not a command: sent as text"
        return out
    target = command.target
    if isinstance(target, Builtin):
        return {"command": target.subcommand, "args": expand.words(arguments)}
    if isinstance(target, PromptFile):
        return _prompt(core, params, target, arguments, text, workspace)
    if isinstance(target, catalog.AgentCommand):
        return core.send(plain)  # (ACP: a command is a prompt whose text starts with it)
    if isinstance(target, McpPrompt):
        return _mcp_prompt(core, params, target, text, arguments, workspace)
    if isinstance(target, Skill):
        return core.send(
            {"text": skill_text(target, arguments), "workspace": workspace}, shown=text
        )
    raise Refused(f"/{name}: cannot be run from here")  # (a source without a runner: a bug)


def _prompt(
    core: Core,
    params: dict[str, Any],
    prompt: PromptFile,
    arguments: str,
    typed: str,
    workspace: str,
) -> dict[str, Any]:
    model = turn_model(core, prompt)
    need = expand.needs(prompt)
    inputs, rest = expand.split_inputs(arguments, need.inputs)
    given = params.get("inputs") or {}
    inputs.update({k: str(v) for k, v in given.items() if k in need.inputs})
    missing = [n for n in need.inputs if n not in inputs]
    if missing:
        return {"ask": [{"name": n, "prompt": need.prompts.get(n) or n} for n in missing]}
    block = selected = None
    if need.selection:
        if not scope.has_range(params):
            raise Refused(
                f"/{prompt.name} needs a selection: select text in the editor, then send again"
            )
        sel = core.selection(params, scoped=False)
        selected = sel.text
        block = selection_block(sel)
    file = params.get("file") if isinstance(params.get("file"), str) else None
    if need.file and not file:
        raise Refused(f"/{prompt.name} needs a file: open one in the editor, then send again")
    values = expand.Values(
        arguments=rest,
        inputs=inputs,
        selection=block,
        selected_text=selected,
        file=file,
        workspace=workspace,
    )
    text = expand.expand(prompt, values)
    if not text.strip():
        raise Refused(f"/{prompt.name}: the prompt file has no text to send")
    return core.send({"text": text, "workspace": workspace}, shown=typed, model=model)


# How long a send waits for the provider's model list the first time (later: the cache).
MODEL_LIST_WAIT_S = 5.0
_MODEL = re.compile(r"^[^\s\x00-\x1f\x7f]{1,200}$")


def turn_model(core: Core, prompt: PromptFile) -> str | None:
    """The model the prompt file's turn runs on: None for the current one; Refused, naming
    the file, when the provider does not offer it, or while its list is still being
    fetched (the menu showing the file started that); a list that could not be fetched
    lets it through: the API's answer then says."""
    model = prompt.model
    provider = core.session.provider
    if not model or model == provider.model:
        return None
    name = f"/{prompt.name} ({prompt.shown})"
    if model == getattr(provider, "agent_model", None):
        return None  # an ACP agent already on it
    if callable(getattr(provider, "set_option", None)):
        raise Refused(
            f"{name} asks for model {model}: an ACP agent's model is chosen with "
            f":Sightline model {model}, then send again"
        )
    if core.session.turn is not None:
        raise Refused(f"{name} runs on its own model: wait for the turn or :Sightline stop")
    listed = core.models(MODEL_LIST_WAIT_S, join=True)
    if listed.get("loading"):
        raise Refused(
            f"{name} asks for model {model}: the {provider.name} provider's models are still "
            "being fetched to check it; send again in a moment"
        )
    offered = [str(m) for m in listed.get("models") or []]
    if model not in offered:
        # Copilot's prompt files name a model as its picker shows it (`GPT-4o`, `Claude
        # Sonnet 4 (copilot)`): the one id that reads the same, if there is one.
        same = [m for m in offered if _model_key(m) == _model_key(model)]
        if len(same) == 1:
            return same[0] if same[0] != provider.model else None
    if not _MODEL.match(model):
        raise Refused(f"{name}: model {model[:60]!r} is not a model name {provider.name} offers")
    if "error" not in listed and model not in offered:
        some = ", ".join(offered[:6]) + (", …" if len(offered) > 6 else "")
        raise Refused(
            f"{name} asks for model {model}, which the {provider.name} provider does not "
            f"offer ({some}); nothing was sent"
        )
    return model


def _model_key(name: str) -> str:
    """A model's name as ids spell it: lower case, words joined by `-`, no `(vendor)`."""
    name = re.sub(r"\s*\([^)]*\)\s*$", "", name.strip())
    return "-".join(name.lower().split())


def _mcp_prompt(
    core: Core,
    params: dict[str, Any],
    prompt: McpPrompt,
    typed: str,
    arguments: str,
    workspace: str,
) -> dict[str, Any]:
    """Missing required arguments are asked for; then the prompt is fetched on a worker
    (it waits on the server) and sent from there.  Answers `pending` at once: a failure
    is said in the transcript."""
    args = mcp_prompts.given(prompt, arguments)
    names = {a.name for a in prompt.arguments}
    given = params.get("inputs") or {}
    args.update({k: str(v) for k, v in given.items() if k in names})
    missing = [a for a in prompt.arguments if a.required and a.name not in args]
    if missing:
        return {"ask": [{"name": a.name, "prompt": a.description or a.name} for a in missing]}
    if core.session.turn is not None:
        raise Refused("a turn is already running: wait for it or :Sightline stop")

    def fetch_and_send() -> None:
        from sightline.mcp_client.client import McpFailure

        try:
            text = mcp_prompts.fetch_text(core.mcp, workspace, prompt, args)
            if not text.strip():
                raise McpFailure("the prompt has no text")
            core.send({"text": text, "workspace": workspace}, shown=typed)
        except (McpFailure, TimeoutError, Refused) as err:
            why = err.message if isinstance(err, Refused) else str(err) or "no answer in time"
            core.session.transcript.add_note(*narrator.error(f"/{prompt_name(prompt)}: {why}"))
            core.session.ui.schedule()

    threading.Thread(  # in the request's context: sent in the pane it came from
        target=contextvars.copy_context().run,
        args=(fetch_and_send,),
        name="sightline-mcp-prompt",
        daemon=True,
    ).start()
    return {"pending": True}


def prompt_name(prompt: McpPrompt) -> str:
    return f"{mcp_prompts.PREFIX}{prompt.server}:{prompt.prompt}"


def skill_text(skill: Skill, arguments: str) -> str:
    """A skill run by hand: its instructions and files, as load_skill answers, then what
    was typed after its name."""
    files = "\n".join(f"  {SKILL_PREFIX}{skill.name}/{f}" for f in skill.files)
    text = (
        f"Use the skill {skill.name}.\n\n<skill name={skill.name!r}>\n{skill.body}\n</skill>\n\n"
        f"Its files (read_file reads these paths):\n{files}"
    )
    return f"{text}\n\n{arguments}" if arguments.strip() else text


def selection_block(sel: scope.Selection) -> str:
    """The selection as a prompt quotes it: its file and lines, then its text fenced (the
    block Change with Agent sends, without holding the turn to it)."""
    label = sel.lines_label()
    where = f"lines {label}" if "–" in label else f"line {label}"
    fence = scope.fence_for(sel.text)
    return f"{sel.name}, {where}:\n{fence}{sel.filetype}\n{sel.text}\n{fence}"
