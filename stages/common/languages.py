"""The language a question is written in, detected offline, and whether the pipeline serves it.

Detection is py3langid (a naive Bayes model over byte n-grams for 97 languages; the model ships in
the wheel, about 4.6 MB, and loads in about a second). A short or mixed question ("SLA?", a
product name) gives no confident answer: it is recorded as `und` (undetermined, ISO 639-2) and
treated as served, so that only a question the detector is sure about is refused for its
language, never an English one it could not place.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from typing import Any

UNDETERMINED = "und"
# The packaged embedder (all-MiniLM-L6-v2), the BM25 stemmer and the answer checks are English.
SUPPORTED_LANGUAGES = ("en",)
# Chosen on tests/data/language_questions.jsonl (and checked on language_questions_heldout.jsonl):
# full questions put 0.38 or more on their language, keyword queries ("SSO on Business?") at
# most 0.12 on any; a question in another language gives English 0.002 at most.
MIN_CONFIDENCE = 0.3  # normalised probability of the top language
SERVED_DOUBT = 0.05  # a served language this likely: never call the question anything else
MIN_LETTERS = 12  # fewer letters than this is too little text to tell a language by

NAMES = {
    "ar": "Arabic",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "hi": "Hindi",
    "hu": "Hungarian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nb": "Norwegian",
    "nl": "Dutch",
    "nn": "Norwegian Nynorsk",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "zh": "Chinese",
}
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_lock = threading.Lock()


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    with contextlib.suppress(AttributeError, OSError, TypeError, ValueError):
        _map_tables(identifier)  # else it keeps its tables in memory: larger, same answers
    return identifier


def _map_tables(identifier: Any) -> None:
    """Move the identifier's two big tables (its byte automaton, 39 MB of uint32, and its
    per-feature class weights, 27 MB of float16) into a read-only mapping of an unlinked
    temporary file. A question reads a few hundred of their rows, so only those pages become
    resident (8 MB after the 85 sample questions), and the kernel can drop them again; held in
    the process's own memory, all 66 MB were resident in every process that detects a language.
    Same values, same types: the same answers.

    The file's pages are written out and dropped from the page cache before they are mapped,
    and the mapping is read at random: pages just written sit in the cache as large folios,
    which a fault maps whole (a first question then made 40 MB resident)."""
    import mmap
    import tempfile

    import numpy as np

    nextmove, ptc = identifier.tk_nextmove, np.ascontiguousarray(identifier.nb_ptc)
    moves = memoryview(nextmove).cast("B")
    with tempfile.TemporaryFile(prefix="grounding-langid-") as handle:
        handle.write(moves)
        handle.write(ptc.tobytes())
        handle.flush()
        with contextlib.suppress(AttributeError, OSError):  # Linux; elsewhere only larger
            os.fdatasync(handle.fileno())
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    with contextlib.suppress(AttributeError, OSError):
        mapped.madvise(mmap.MADV_RANDOM)
    table = np.frombuffer(mapped, dtype=ptc.dtype, count=ptc.size, offset=moves.nbytes)
    identifier.tk_nextmove = memoryview(mapped)[: moves.nbytes].cast(nextmove.typecode)
    identifier.nb_ptc = table.reshape(ptc.shape)
    _, nb_pc, nb_classes = identifier._full_model
    identifier._full_model = identifier.nb_ptc, nb_pc, nb_classes


def detect(text: str, served: tuple[str, ...] = SUPPORTED_LANGUAGES) -> tuple[str, float]:
    """(ISO 639-1 code, its probability) of the text's language; `und` when unsure, or when the
    text could well be in a served language although another one ranks first."""
    if len(_LETTER.findall(text or "")) < MIN_LETTERS:
        return UNDETERMINED, 0.0
    with _lock:  # the identifier keeps scratch arrays between calls
        ranked = _identifier().rank(text)
    language, confidence = ranked[0][0], float(ranked[0][1])
    if confidence < MIN_CONFIDENCE:
        return UNDETERMINED, confidence
    if language not in served and any(p >= SERVED_DOUBT for lang, p in ranked if lang in served):
        return UNDETERMINED, confidence
    return language, confidence


def detect_language(text: str) -> str:
    """Only the code of `detect`."""
    return detect(text)[0]


def is_served(language: str | None, supported: tuple[str, ...] = SUPPORTED_LANGUAGES) -> bool:
    """Whether the corpus and models can answer a question in this language (unknown: yes)."""
    return not language or language == UNDETERMINED or language in supported


def language_name(language: str) -> str:
    """'Spanish (es)' for a person; the bare code where the name is not known here."""
    name = NAMES.get(language)
    return f"{name} ({language})" if name else language


def unserved(language: str, served: list[str] | tuple[str, ...]) -> str:
    """What a refusal for the language names as missing, for a person."""
    names = ", ".join(language_name(code) for code in served)
    return f"an answer in {language_name(language)}: the sources and models serve {names}"
