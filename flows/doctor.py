"""`python -m flows.doctor`: prove the install works offline. Run by `make setup`.

Any outbound connection attempt fails the check, so a dependency that would download something at
run time is caught at install time instead of in a user's first run.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable

from stages.common.offline import apply_offline_environment, patch_unstructured_spacy


def _forbid_network() -> None:
    def refuse(self: socket.socket, address: object) -> None:
        if (
            isinstance(address, tuple)
            and address
            and address[0] in ("127.0.0.1", "::1", "localhost")
        ):
            return original(self, address)
        raise RuntimeError(f"network access attempted: {address}")

    original = socket.socket.connect
    socket.socket.connect = refuse  # type: ignore[method-assign]


def _parse_markdown() -> str:
    patch_unstructured_spacy()
    from unstructured.partition.md import partition_md

    elements = partition_md(text="# Prices\n\nThe Enterprise plan costs 49 euros per user.")
    assert elements and "Enterprise" in elements[-1].text, "markdown parsed to nothing"
    return f"{len(elements)} elements"


def _embed() -> str:
    from stages.models import embeddings

    # the default runs on ONNX Runtime: its files are exported here on a fresh machine
    spec = embeddings.DEFAULT_EMBEDDING_MODEL
    vectors = embeddings.embed(spec, ["offline check"])
    return f"dimension {vectors.shape[1]} ({embeddings.model_version(spec)})"


def _imports() -> str:
    import faiss
    import prefect
    import ragas

    return f"faiss {faiss.__version__}, prefect {prefect.__version__}, ragas {ragas.__version__}"


def _format_readers() -> str:
    """The libraries behind stages/formats/ (pptx, xlsx, vtt/srt) import."""
    from importlib import metadata

    import openpyxl  # noqa: F401
    import pptx  # noqa: F401
    import webvtt  # noqa: F401

    packages = ("python-pptx", "openpyxl", "webvtt-py")
    return ", ".join(f"{name} {metadata.version(name)}" for name in packages)


def _generator_model() -> str:
    from stages.models import files

    digest = files.verify_gguf(files.DEFAULT_MODEL_PATH, files.PACKAGED_MODEL_SHA256)
    return f"{files.DEFAULT_MODEL_PATH} sha256 {digest[:12]}…"


def _ocr() -> str:
    """The OCR of scanned pages and images, with the models inside the rapidocr wheel."""
    from PIL import Image, ImageDraw, ImageFont

    from stages.formats import ocr

    image = Image.new("L", (900, 600), 255)  # page-like: a thin strip is upscaled and split
    ImageDraw.Draw(image).text(
        (20, 30), "Enterprise 49 EUR", font=ImageFont.load_default(48), fill=0
    )
    lines = ocr.get_engine("rapidocr").recognize(image)
    text = " ".join(line.text for line in lines)
    assert "49" in text, f"OCR read {text!r}"
    return f"read {text!r}"


def _local_llm() -> str:
    """Load the GGUF with the installed llama.cpp binding and judge one obvious claim: proves the
    prebuilt wheel runs on this CPU and reads this model, in one forward pass."""
    import xllamacpp

    from stages.models.settings import LLMSettings
    from stages.models.yesno import LlamaYesNo

    judge = LlamaYesNo(LLMSettings(n_ctx=512))
    p_yes = judge.p_yes(
        "Answer yes or no.", "Passage: Paris is the capital of France.\nIs Paris in France?"
    )
    assert p_yes > 0.5, f"P(yes) {p_yes:.2f} for an obvious yes"
    return f"xllamacpp {xllamacpp.__version__}, P(yes) {p_yes:.2f} on an obvious yes"


CHECKS: dict[str, Callable[[], str]] = {
    "unstructured + PyPI spaCy model": _parse_markdown,
    "packaged embedding model": _embed,
    "faiss / prefect / ragas": _imports,
    "format readers (pptx, xlsx, vtt/srt)": _format_readers,
    "local generator GGUF": _generator_model,
    "OCR (RapidOCR, packaged PP-OCR models)": _ocr,
    "local LLM (llama.cpp)": _local_llm,
}


def main() -> int:
    apply_offline_environment()
    _forbid_network()
    failed = 0
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            detail = check()
            print(f"  ok    {name}: {detail} [{time.perf_counter() - started:.1f}s]")
        except Exception as exc:  # report every failing check, not just the first
            failed += 1
            print(f"  FAIL  {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
