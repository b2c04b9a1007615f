"""The serving bench serves a store holding the corpus only, never answers of an earlier run."""

from pathlib import Path

from bench import serving


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")


def test_the_served_store_keeps_the_corpus_and_drops_every_question_output(tmp_path):
    store = tmp_path / "artifacts"
    kept = ["ingestion/a", "ingestion.parts/b", "indexing/c", "indexing.embeddings/d"]
    kept += ["corpus/e", "corpus.stat/f", "_llm_kv/g.bin", "ingestion/generation/h"]
    dropped = ["generation/i", "generation.batches/j", "guardrails/k", "questions/l"]
    dropped += ["revise/m", "rerank.batches/n", "source_selection/o"]
    for name in kept + dropped:
        _touch(store / name)

    served = serving._corpus_only_copy(store, tmp_path / "served")

    copied = sorted(str(p.relative_to(served)) for p in served.rglob("*") if p.is_file())
    assert copied == sorted(kept)
    assert all((store / name).is_file() for name in kept + dropped)  # the original is untouched
