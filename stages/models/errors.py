"""The failures a judgment model reports: a technical error, never a verdict."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A backend could not produce a completion (model missing, server down, timeout…)."""


class ModelFileError(LLMError):
    """The GGUF file is missing, incomplete, or not the expected file."""


class JudgeError(RuntimeError):
    """A judge could not produce a verdict (a technical error, not a 'no')."""
