"""A vision model behind an OpenAI-compatible endpoint, asked to describe one picture.

Used by ingestion's figure descriptions when its `vision` block names an endpoint and a model
(`settings.VisionSettings`); off by default, and nothing here runs offline unless configured. The
picture goes as a PNG data URL in an `image_url` content part (the OpenAI chat format that
vLLM, llama.cpp's server, Ollama and hosted APIs accept); the reply is plain text. Any failure
is an `LLMError` from the chat client (timeouts, retries and status handling are its own).
"""

from __future__ import annotations

import base64
import io
from typing import Any

from stages.models.chat import OpenAICompatibleClient
from stages.models.errors import LLMError
from stages.models.settings import VisionSettings

PROMPT = (
    "Describe this figure for a search index. Say what kind of picture it is and what it shows, "
    "and copy any title, labels, numbers and text you can read in it. Describe only what is "
    "visible; do not guess. Reply in plain text, at most 120 words."
)


class VisionClient:
    """`describe(image) -> str` for a PIL image (or PNG/JPEG bytes); raises `LLMError`."""

    def __init__(self, settings: VisionSettings, transport: Any = None) -> None:
        if not settings.enabled:
            raise LLMError("vision.base_url and vision.model must both be set")
        self.settings = settings
        self.model_id = f"openai-compatible:{settings.model}"
        self._chat = OpenAICompatibleClient(
            settings.base_url,
            settings.model,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            max_tokens=settings.max_tokens,
            timeout_s=settings.timeout_s,
            connect_timeout_s=settings.connect_timeout_s,
            http_retries=settings.http_retries,
            response_format="none",  # a description is prose, not JSON
            transport=transport,
        )

    def describe(self, image: Any) -> str:
        url = "data:image/png;base64," + base64.b64encode(
            png_bytes(image, self.settings.max_side_px)
        ).decode("ascii")
        messages = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": PROMPT},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        ]
        return self._chat.complete(messages, {}).text.strip()

    def close(self) -> None:
        self._chat.close()


def png_bytes(image: Any, max_side: int) -> bytes:
    """The picture as PNG, its longest side at most `max_side` pixels."""
    from PIL import Image

    if isinstance(image, bytes | bytearray):
        image = Image.open(io.BytesIO(image))
    image = image.convert("RGB")
    if max(image.size) > max_side:
        image.thumbnail((max_side, max_side))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()
