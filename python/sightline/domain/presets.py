"""What each provider name means: a table of data, no logic.

`kind` picks the implementation (the anthropic SDK, the openai SDK's Chat Completions, its
Azure client, the anthropic SDK's Bedrock or Vertex client); the rest are the defaults a
user gets when the config leaves them out. The key is read from `key_env`, else from
`provider.api_key_cmd`; a preset with `needs_key = False` (a local server) needs none but
uses one when its variable is set. A preset with `model = ""` serves what it loaded: its
default model is the first its model list (`{base_url}/models`) names. Each model's own
facts (tools, vision, price) are in domain/models.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Preset:
    kind: str  # "anthropic" | "openai" | "azure" | "bedrock" | "vertex" | "gemini" | "echo"
    model: str  # the default model when provider.model is not set ("": the server's first)
    base_url: str | None = None  # None: the SDK's own default (or $ANTHROPIC_BASE_URL)
    key_env: str | None = None  # the environment variable holding the key
    needs_key: bool = True
    local: bool = False  # runs on this machine: no cost
    thinking: Literal["budget", "effort"] | None = None  # what provider.thinking means
    # Chat Completions' name of the reply's token limit (OpenAI's own API renamed it).
    max_tokens_key: str = "max_tokens"
    # The pip extra that brings what this kind needs beyond the core (`sightline[bedrock]`).
    extra: str | None = None


PRESETS: dict[str, Preset] = {
    "echo": Preset(kind="echo", model="echo", needs_key=False, local=True),
    "anthropic": Preset(
        kind="anthropic", model="claude-sonnet-5-5", key_env="ANTHROPIC_API_KEY", thinking="budget"
    ),
    "openai": Preset(
        kind="openai",
        model="gpt-4.1",
        base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        thinking="effort",
        max_tokens_key="max_completion_tokens",
    ),
    "ollama": Preset(
        kind="openai",
        model="llama3.1",
        base_url="http://localhost:11434/v1",
        needs_key=False,
        local=True,
        thinking="effort",
    ),
    "openrouter": Preset(
        kind="openai",
        model="openai/gpt-4.1",
        base_url="https://openrouter.ai/api/v1",
        key_env="OPENROUTER_API_KEY",
        thinking="effort",
    ),
    # Azure OpenAI: the endpoint and deployment are the user's (provider.base_url and
    # provider.deployment); the deployment names the model.
    "azure": Preset(
        kind="azure",
        model="",
        key_env="AZURE_OPENAI_API_KEY",
        needs_key=False,  # or an Entra ID token: providers/azure_api.py says what is missing
        thinking="effort",
        max_tokens_key="max_completion_tokens",
    ),
    # Claude on AWS Bedrock and Google Vertex: the SDKs' own credential chains, no key.
    "bedrock": Preset(
        kind="bedrock",
        model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        needs_key=False,
        thinking="budget",
        extra="bedrock",
    ),
    "vertex": Preset(
        kind="vertex",
        model="claude-sonnet-4-5@20250929",
        needs_key=False,
        thinking="budget",
        extra="vertex",
    ),
    # The key may also be in $GOOGLE_API_KEY (providers/gemini_api.py KEY_ENVS).
    "gemini": Preset(
        kind="gemini",
        model="gemini-2.5-flash",
        key_env="GEMINI_API_KEY",
        thinking="budget",  # or a level: providers/gemini_api.py thinking_config
        extra="gemini",
    ),
    # Chat Completions with the token of the user's GitHub sign-in (providers/copilot_auth.py).
    "copilot": Preset(kind="openai", model="gpt-4.1", needs_key=False, thinking="effort"),
}

# OpenAI-compatible services (Chat Completions on the openai SDK), as data.
PRESETS.update(
    {
        "mistral": Preset(
            kind="openai",
            model="mistral-large-latest",
            base_url="https://api.mistral.ai/v1",
            key_env="MISTRAL_API_KEY",
            thinking="effort",
        ),
        "deepseek": Preset(
            kind="openai",
            model="deepseek-chat",
            base_url="https://api.deepseek.com/v1",
            key_env="DEEPSEEK_API_KEY",
            thinking="effort",
        ),
        "xai": Preset(
            kind="openai",
            model="grok-4",
            base_url="https://api.x.ai/v1",
            key_env="XAI_API_KEY",
            thinking="effort",
        ),
        "lmstudio": Preset(
            kind="openai",
            model="",
            base_url="http://localhost:1234/v1",
            needs_key=False,
            local=True,
            thinking="effort",
        ),
        "vllm": Preset(
            kind="openai",
            model="",
            base_url="http://localhost:8000/v1",
            key_env="VLLM_API_KEY",  # `vllm serve --api-key`, when set
            needs_key=False,
            local=True,
            thinking="effort",
        ),
        "llamacpp": Preset(
            kind="openai",
            model="",
            base_url="http://localhost:8080/v1",
            key_env="LLAMA_API_KEY",  # `llama-server --api-key`, when set
            needs_key=False,
            local=True,
            thinking="effort",
        ),
    }
)


def preset(name: str) -> Preset | None:
    return PRESETS.get(name)


def default_model(name: str) -> str:
    found = PRESETS.get(name)
    return found.model if found else ""
