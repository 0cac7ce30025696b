"""Issue 28's providers as a user meets them: a child Neovim set up as the README says
(`provider = { name = 'azure' | 'bedrock' | 'vertex' | 'mistral', … }`), credentials in the
environment, the loopback fakes of each wire format. The reply in the transcript, the
model in the bar, what the model can do in the status, keys redacted from the transcript
and history, faults said in the user's words, :checkhealth naming where the credentials
come from and whether the endpoint answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fakeapi
from tests import fakeopenai as fo
from tests.agent_util import TURN_TIMEOUT_S, idle, send
from tests.conftest import capture_notify, said, status, transcript, wait_for
from tests.fakecloud import AwsKey, FakeBedrock, FakeVertex, ServiceAccount

AKID, SECRET = "AKIDNVIM0001", "aws-secret-nvim-0001-zyx"
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": AKID,
    "AWS_SECRET_ACCESS_KEY": SECRET,
    "AWS_REGION": "us-west-2",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(autouse=True)
def no_cloud_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUD_ML_REGION",
        "MISTRAL_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def bedrock() -> Iterator[FakeBedrock]:
    with FakeBedrock(keys=[AwsKey(AKID, SECRET)]) as server:
        yield server
    assert not server.errors, server.errors


def history_text(isolated_env: Path) -> str:
    return "".join(p.read_text() for p in (isolated_env.parent / "xdg").rglob("*.jsonl"))


def checkhealth(nv: Any) -> str:
    nv.command("checkhealth sightline")
    return "\n".join(nv.api.buf_get_lines(0, 0, -1, False))


def test_claude_on_bedrock_chats_and_its_secret_never_shows(
    nvim_factory: Any, bedrock: FakeBedrock, isolated_env: Path
) -> None:
    nv = nvim_factory(
        {"provider": {"name": "bedrock", "base_url": bedrock.base_url, "retries": 0}},
        env=AWS_ENV,
    )
    nv.command("Sightline chat")
    bedrock.script(fakeapi.text(f"Signed and streamed. Your secret is {SECRET}."))
    send(nv, "hello")
    idle(nv)
    shown = "\n".join(transcript(nv))
    assert "Signed and streamed. Your secret is [REDACTED]." in shown and SECRET not in shown
    st = status(nv)
    assert st["provider"] == "bedrock" and st["model"].startswith("us.anthropic.claude-sonnet")
    assert st["capabilities"]["vision"] is True and st["capabilities"]["tools"] is True
    assert st["cost"]["total"] > 0  # Bedrock's Claude is priced as Claude
    (req,) = bedrock.invocations()
    assert "/us-west-2/bedrock/aws4_request" in req.headers["authorization"]
    history = history_text(isolated_env)
    assert "Signed and streamed" in history and SECRET not in history


def test_a_model_not_enabled_in_the_region_is_said_with_what_to_do(
    nvim_factory: Any, isolated_env: Path
) -> None:
    with FakeBedrock(keys=[AwsKey(AKID, SECRET)], enabled=["another-model"]) as server:
        nv = nvim_factory(
            {"provider": {"name": "bedrock", "base_url": server.base_url, "retries": 0}},
            env=AWS_ENV,
        )
        nv.command("Sightline chat")
        send(nv, "hello")
        idle(nv)
    shown = "\n".join(transcript(nv))
    assert "No access to this model in us-west-2 (403)" in shown
    assert "Bedrock → Model access" in shown and "Traceback" not in shown


def test_azure_chats_through_its_deployment(nvim_factory: Any, isolated_env: Path) -> None:
    key = "azure-nvim-key-000111222"
    with fo.FakeOpenAI(api_key=key, azure={"chat4o": "gpt-4o-2024-08-06"}) as server:
        provider = {"name": "azure", "base_url": server.base_url, "deployment": "chat4o"}
        nv = nvim_factory({"provider": provider}, env={"AZURE_OPENAI_API_KEY": key})
        nv.command("Sightline chat")
        server.script(fo.text("Hello from Azure."))
        send(nv, "hello")
        idle(nv)
        (req,) = server.completions()
    assert any("Hello from Azure." in line for line in transcript(nv))
    assert status(nv)["model"] == "chat4o"
    assert req.path == "/openai/deployments/chat4o/chat/completions"
    assert key not in json.dumps(req.body) and key not in history_text(isolated_env)


def test_claude_on_vertex_chats_with_a_service_account_key_file(
    nvim_factory: Any, tmp_path: Path
) -> None:
    with FakeVertex() as server:
        account = ServiceAccount.make(server.token_uri, project="proj-nvim")
        server.trust(account)
        key_file = tmp_path / "sa.json"
        key_file.write_text(json.dumps(account.info))
        provider = {"name": "vertex", "base_url": f"{server.base_url}/v1", "region": "us-east5"}
        nv = nvim_factory(
            {"provider": provider},
            env={"GOOGLE_APPLICATION_CREDENTIALS": str(key_file), "NO_GCE_CHECK": "True"},
        )
        nv.command("Sightline chat")
        server.script(fakeapi.text("Hello from Vertex."))
        send(nv, "hello")
        idle(nv)
        assert "/projects/proj-nvim/locations/us-east5/" in server.predictions()[0].path
    assert any("Hello from Vertex." in line for line in transcript(nv))


def test_checkhealth_says_where_the_credentials_come_from_and_that_the_endpoint_answers(
    nvim_factory: Any, bedrock: FakeBedrock
) -> None:
    nv = nvim_factory({"provider": {"name": "bedrock", "base_url": bedrock.base_url}}, env=AWS_ENV)
    text = checkhealth(nv)
    assert "boto3" in text and "(the bedrock provider)" in text
    assert "bedrock credentials from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY" in text
    assert "region us-west-2" in text
    assert f"endpoint {bedrock.base_url} accepts connections" in text
    assert SECRET not in text


def test_checkhealth_says_an_endpoint_is_unreachable_and_credentials_are_missing(
    nvim_factory: Any,
) -> None:
    with fo.FakeOpenAI() as gone:
        url = gone.base_url  # closed: nothing listens there any more
    nv = nvim_factory({"provider": {"name": "azure", "base_url": url, "deployment": "d"}})
    text = checkhealth(nv)
    assert "azure credentials: no credential: set $AZURE_OPENAI_API_KEY" in text
    assert f"endpoint {url} is not reachable" in text


def test_a_preset_is_chosen_by_its_name_and_takes_base_url_and_model(
    nvim_factory: Any,
) -> None:
    with fo.FakeOpenAI(api_key="mistral-key-12345") as server:
        provider = {"name": "mistral", "base_url": server.base_url, "model": "codestral-latest"}
        nv = nvim_factory({"provider": provider}, env={"MISTRAL_API_KEY": "mistral-key-12345"})
        nv.command("Sightline chat")
        server.script(fo.text("Bonjour."))
        send(nv, "hello")
        idle(nv)
        assert server.completions()[0].body["model"] == "codestral-latest"
    assert any("Bonjour." in line for line in transcript(nv))
    assert status(nv)["capabilities"]["context_window"] == 256_000


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ("{provider = {name = 'bedrock', region = 5}}", "sightline.provider.region: expected"),
        ("{provider = {name = 'azure', deployment = ''}}", "sightline.provider.deployment:"),
        ("{provider = {name = 'azure', entra_token_cmd = {}}}", "provider.entra_token_cmd:"),
        ("{provider = {name = 'vertex', project = {}}}", "sightline.provider.project: expected"),
        ("{provider = {name = 'bedrock', thinking = 'high'}}", ""),
    ],
)
def test_the_new_keys_are_checked_by_setup(nvim: Any, opts: str, message: str) -> None:
    said = nvim.exec_lua(f"return {{require('sightline').setup({opts})}}")
    if message:
        assert said[0] is None and message in said[1], said
    else:
        assert said == [True]


def test_a_model_without_tools_is_offered_none_and_the_bar_says_chat_only(
    nvim_factory: Any,
) -> None:
    with fo.FakeOpenAI(api_key="sk-chat-only-0001") as server:
        provider = {"name": "openai", "base_url": server.base_url, "model": "o1-mini"}
        nv = nvim_factory({"provider": provider}, env={"OPENAI_API_KEY": "sk-chat-only-0001"})
        nv.command("set columns=200")
        nv.command("Sightline chat")
        server.script(fo.text("Just talking."))
        send(nv, "read my files")
        idle(nv)
        (req,) = server.completions()
    assert "tools" not in req.body
    shown = "\n".join(transcript(nv))
    assert "Just talking." in shown and "o1-mini does not support tools" in shown
    assert status(nv)["capabilities"]["tools"] is False
    bar = nv.exec_lua(
        "return vim.wo[vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)].winbar"
    )
    assert "openai o1-mini (chat only)" in bar


def test_model_lists_bedrocks_claude_models_and_says_why_when_it_cannot(
    nvim_factory: Any, bedrock: FakeBedrock
) -> None:
    provider = {"name": "bedrock", "base_url": bedrock.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env=AWS_ENV)
    nv.command("set columns=250")
    taken = capture_notify(nv)
    found = wait_for(
        lambda: len(c := nv.call("getcompletion", "Sightline model us.", "cmdline")) > 1 and c,
        TURN_TIMEOUT_S,
        "the model list",
    )
    assert found == [
        "us.anthropic.claude-opus-4-1-20250805-v1:0",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    ]
    nv.command("Sightline model")
    (note,) = [said(nv, n["msg"]) for n in taken()]
    assert note.startswith(
        "sightline: model us.anthropic.claude-sonnet-4-5-20250929-v1:0; models: "
    )
    assert "anthropic.claude-3-haiku-20240307-v1:0" in note
    nv.command("Sightline model us.anthropic.claude-opus-4-1-20250805-v1:0")
    bedrock.script(fakeapi.text("from opus"))
    send(nv, "hi")
    idle(nv)
    assert bedrock.invocations()[0].path.startswith(
        "/model/us.anthropic.claude-opus-4-1-20250805-v1:0/"
    )


def test_a_model_list_refused_says_why_and_keeps_the_configured_model(
    nvim_factory: Any, bedrock: FakeBedrock
) -> None:
    bedrock.list_denied = True
    provider = {"name": "bedrock", "base_url": bedrock.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env=AWS_ENV)
    nv.command("set columns=250")
    nv.call("getcompletion", "Sightline model ", "cmdline")  # starts the list's fetch
    asked = "return require('sightline.host').request('agent.models', { wait_ms = 0 }).error"
    wait_for(lambda: nv.exec_lua(asked), TURN_TIMEOUT_S, "the list's failure")
    assert nv.call("getcompletion", "Sightline model ", "cmdline") == [status(nv)["model"]]
    taken = capture_notify(nv)
    nv.command("Sightline model")
    (note,) = [said(nv, n["msg"]) for n in taken()]
    assert "; no model list: AWS did not let $AWS_ACCESS_KEY_ID and" in note
    assert "bedrock:ListFoundationModels" in note and SECRET not in note
