"""The one question "can this model look at an image?", asked before anything is sent.

The provider's declared capabilities answer it (`capabilities.vision`, from the model's entry
in domain/models.py). An ACP agent says so in its promptCapabilities.image, known once it has
started: its provider refuses the turn before the prompt is sent (providers/acp). A model
domain/models.py does not know (a local or newly released one) is judged by its name: the
OpenAI-compatible families known to take images.
"""

from __future__ import annotations

import re

from sightline.domain import models
from sightline.providers.base import Provider

# OpenAI-compatible models known to take images: GPT-4o/4.1/5 and o-series, and the local
# vision families Ollama and OpenRouter serve (llava, *-vision, *-vl, gemma3, pixtral, …).
_OPENAI_VISION = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|(^|/)o[134](-|$)|llava|vision|"
    r"[-_.]vl\b|-vl-|qwen2\.5vl|gemma3|pixtral|claude|gemini|minicpm-v|moondream|llama4",
    re.IGNORECASE,
)


def sees_images(provider: Provider) -> bool:
    caps = provider.capabilities
    if caps.vision or caps.runs_turns:
        return True
    if models.lookup(provider.model or "").vision is None:  # not in the table: its name
        return bool(_OPENAI_VISION.search(provider.model or "")) and provider.name != "echo"
    return False


def refusal(provider: Provider) -> str:
    """What the user reads when a message with an image cannot be sent."""
    who = f"{provider.name} {provider.model}".strip() if provider.model else provider.name
    return (
        f"sightline: {who} cannot look at images; nothing was sent "
        "(choose a model with vision: :Sightline model, or remove the image)"
    )
