"""The one question "can this model look at an image?", asked before anything is sent.

A provider that declares it (`capabilities.vision`, a bool) is taken at its word. Until every
provider declares it, the answer for one that does not is the stand-in below, kept here
alone so that the declaration replaces it in one place: the Messages API's models all take
images; an OpenAI-compatible model does when its name says it is one of the families that
do; an ACP agent is asked by its provider at the turn, before the prompt is sent (its
promptCapabilities.image is known once it has started); Echo and anything else do not.
"""

from __future__ import annotations

import re

from sightline.providers.base import Provider

# OpenAI-compatible models known to take images: GPT-4o/4.1/5 and o-series, and the local
# vision families Ollama and OpenRouter serve (llava, *-vision, *-vl, gemma3, pixtral, …).
_OPENAI_VISION = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|(^|/)o[134](-|$)|llava|vision|"
    r"[-_.]vl\b|-vl-|qwen2\.5vl|gemma3|pixtral|claude|gemini|minicpm-v|moondream|llama4",
    re.IGNORECASE,
)


def sees_images(provider: Provider) -> bool:
    declared = getattr(provider.capabilities, "vision", None)
    if isinstance(declared, bool):
        return declared
    if provider.name == "anthropic":
        return True
    if provider.name in ("openai", "ollama", "openrouter"):
        return bool(_OPENAI_VISION.search(provider.model or ""))
    # An ACP agent says so in its promptCapabilities.image, known once it has started: its
    # provider refuses the turn before the prompt is sent (providers/acp).
    return provider.capabilities.runs_turns


def refusal(provider: Provider) -> str:
    """What the user reads when a message with an image cannot be sent."""
    who = f"{provider.name} {provider.model}".strip() if provider.model else provider.name
    return (
        f"sightline: {who} cannot look at images; nothing was sent "
        "(choose a model with vision: :Sightline model, or remove the image)"
    )
