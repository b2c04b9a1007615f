"""The guardrails stage's settings (configs/guardrails.yaml): its own module so that the
per-claim checker and the gate, which read it, import no package that imports them back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

import stages.guardrails.short_answers as short_answers
from stages.models import settings

LEGACY_LLM_KEYS = ("llm_backend", "model_path", "model_sha256", "n_ctx", "n_threads")
LEGACY_LLM_KEYS += ("base_url", "model", "api_key", "timeout_s")


class FastJudge(BaseModel):
    """The claim-support cross-encoder in front of the judge (the GGUF costs about a
    second a claim). Its calibrated P(supported) decides a claim alone outside the band
    (reject, accept); inside it, the configured judge is asked. Trained and fitted by
    scripts/train_claim_judge.py (model card in the model's folder)."""

    model_config = ConfigDict(extra="forbid")

    model_path: str = Field(description="folder with model.onnx, its sha256 and tokenizer.json")
    model_sha256: str | None = Field(None, description="checked when loaded; None: the sidecar's")
    max_length: int = Field(192, ge=16, le=512, description="tokens of claim and evidence read")
    scale: float = Field(1.0, description="Platt scaling: P = sigmoid(scale * logit + bias)")
    bias: float = 0.0
    reject: float = Field(0.0, ge=0, le=1, description="P at or below: unsupported, no LLM call")
    accept: float = Field(1.0, ge=0, le=1, description="P at or above: supported, no LLM call")
    # in the band: "judge" = the configured judge's score alone; "mean" = the mean of both
    band_score: Literal["judge", "mean"] = "judge"
    # accept only a claim with at least this share of its content words in the spans (the
    # question's count as known); 0: the fast judge's P alone
    accept_min_share: float = Field(0.0, ge=0, le=1, description="word share needed to accept")
    # Fitted on the claims of long answers: a one-claim answer (an LLM's short answer, HaluEval's)
    # keeps the configured judge and its own thresholds.
    parts_only: bool = Field(True, description="decide only claims of multi-claim answers")


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # gate
    emit_threshold: float = Field(0.85, ge=0, le=1)
    revise_threshold: float = Field(0.6, ge=0, le=1, description="below: claim 'unsupported'")
    block_threshold: float = Field(0.4, ge=0, le=1, description="a critical claim below blocks")
    aggregate: Literal["min", "weighted_mean", "floor_mean"] = "min"
    # floor_mean: below this a single claim decides the answer (stages/guardrails/gate.py)
    claim_floor: float = Field(0.5, ge=0, le=1, description="a claim below this blocks alone")
    answer_threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="floor_mean: the answer emits at or above; None: emit_threshold",
    )
    # floor_mean was fitted on RAGTruth's multi-sentence answers; a one-claim answer (HaluEval's,
    # the pipeline's own short drafts) has nothing to average, so it keeps the min gate's line.
    long_answer_claims: int = Field(
        2, ge=1, description="floor_mean: answers with fewer scored claims use the min gate"
    )
    critical_weight: float = Field(2.0, ge=1, description="weight of critical claims in the mean")
    # floor_mean answers: a judged claim's support blends the judge's P(yes) with the share of
    # its content words the evidence holds, (p + w * share) / (judge_threshold * (1 + w)): a fact
    # an LLM adds brings words no span has, which the judge alone underweights. 0: the judge alone.
    lexical_weight: float = Field(
        0.0, ge=0, le=5, description="floor_mean: weight of the claim's word share beside P(yes)"
    )
    max_revise_rounds: int = Field(2, ge=0, le=5)
    revise_round: int = Field(0, ge=0, description="set by the flow's revise loop")
    # claims and support
    decomposer: Literal["rules", "llm"] = "rules"
    judge: Literal["llm", "nli", "none"] = "llm"
    # Chosen on HaluEval QA records 1-100 and the paraphrase pairs' dev split (configs/
    # guardrails.yaml says how); held-out figures on HaluEval 101-500 and the pairs' test split.
    judge_threshold: float = Field(
        0.9, gt=0, le=1, description="judge P(yes) at or above this counts as fully supported"
    )
    prefilter_lexical: float = Field(
        0.2, ge=0, le=1, description="below this share of content words, no judge call"
    )
    short_answer_words: int = Field(
        6,
        ge=0,
        description="an LLM's verbatim claim of at most this many words is judged with its "
        "question; 0 = never",
    )
    # The judge's P(yes) for a proposed answer to a question runs lower than for a whole claim:
    # its own threshold, chosen by scripts/fit_short_answer_threshold.py (not on an eval set).
    short_answer_threshold: float = Field(
        0.95, gt=0, le=1, description="judge P(yes) that fully supports a short answer"
    )
    # An LLM answer made only of sentences copied from its evidence is supported, but copying a
    # sentence does not make it an answer to this question: one judge call asks that
    # (scripts/fit_short_answer_threshold.py --kind sentence chose the threshold); 0 = off.
    answer_sentence_threshold: float = Field(
        0.0, ge=0, le=1, description="judge P(yes) that a copied answer answers the question"
    )
    # A short answer judged by three signals (stages/guardrails/short_answers.py); then
    # short_answer_threshold applies to their combined probability. None: the judge's alone.
    short_answer_signals: short_answers.ShortAnswerSignals | None = None
    # The judge reads the cited spans cut to the sentences that bear on the claim, at most this
    # many words: its prompt is read at about 60 tokens/s on 2 cores (stages/guardrails/judge.py).
    judge_focus_words: int = Field(80, ge=10, le=2000, description="evidence words per judgement")
    judge_cache_dir: str | None = "artifacts/_judge_cache"
    fast_judge: FastJudge | None = None
    identifier_allowlist: list[str] = Field(default_factory=list)
    # the judge / probe LLM: the local GGUF, or an OpenAI-compatible server
    llm: settings.LLMSettings = settings.LLMSettings()
    nli_model_path: str | None = None
    nli_entailment_label: str = "entailment"
    # self-consistency probes (LLM generators only)
    # 2: greedy probes repeat themselves; bench llm_answers replayed 17 probed claims with 2
    # probes instead of 3: the same decision for all 17, with half the model calls
    consistency_probes: int = Field(2, ge=0, le=5, description="0 turns probes off")
    min_agreement: float = Field(0.5, ge=0, le=1)
    # PII
    redact_pii: list[str] = Field(["email", "phone", "iban", "card_number", "national_id"])
    pii_engine: Literal["auto", "presidio", "regex"] = "auto"

    @model_validator(mode="before")
    @classmethod
    def _legacy_llm_keys(cls, data: Any) -> Any:
        return settings.fold_legacy_keys(data, LEGACY_LLM_KEYS)
