"""Pair scorers: a model that scores (text, text) pairs, e.g. (question, passage) or
(premise, hypothesis). Relevance and answerability cross-encoders, and NLI models through the
probability of one label, share this one interface, so a new one is added by path, not by code.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

import numpy as np

from stages.models.files import resolve_model_path


class PairScorer(Protocol):
    model_id: str

    def score(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """One float per pair; raises on a model that cannot be loaded."""
        ...


@functools.cache
def load_cross_encoder(path: str) -> Any:
    """One CrossEncoder per process and resolved directory (loading takes a second or two)."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device="cpu")


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder directory (or a `package:` spec), loaded on first use.

    `label=None`: the model's own score per pair (a one-output relevance or answerability head);
    `label="entailment"`: the softmax probability of the label of that name (an NLI model).
    """

    def __init__(self, spec: str, label: str | None = None) -> None:
        self.spec = spec
        self.label = label
        self.model_id = f"cross-encoder:{spec}" + (f"#{label}" if label else "")
        self._model: Any = None
        self._index: int | None = None

    def load(self) -> None:
        if self._model is not None:
            return
        model = load_cross_encoder(str(resolve_model_path(self.spec)))
        if self.label is not None:
            labels = {v.lower(): int(k) for k, v in model.config.id2label.items()}
            if self.label.lower() not in labels:
                raise ValueError(f"model has no label {self.label!r}: {sorted(labels)}")
            self._index = labels[self.label.lower()]
        self._model = model

    def score(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.load()
        if not pairs:
            return np.zeros(0)
        if self._index is None:
            return np.asarray(self._model.predict(pairs), dtype=float)
        probabilities = self._model.predict(pairs, apply_softmax=True)
        return np.asarray(probabilities, dtype=float)[:, self._index]


def cross_encoder(spec: str, label: str | None = None) -> PairScorer:
    """The pair scorer at `spec` (an ONNX runtime would be chosen here, by the spec)."""
    return CrossEncoderScorer(spec, label)
