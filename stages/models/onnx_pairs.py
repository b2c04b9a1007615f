"""Cross-encoder pair scoring on CPU: P(passage answers question) from an ONNX model by path.

The model directory holds `model.onnx`, `tokenizer.json` and `model.onnx.sha256` (written by
`scripts/train_answerability.py`; no model is committed yet). The hash is checked
when the model is loaded, so a missing or corrupt file is a `PairModelError`, never a score.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from stages.models.chat import raise_if_cancelled
from stages.models.files import file_sha256

BATCH = 64
MAX_LENGTH = 128
_CACHE_SIZE = 50_000


class PairModelError(RuntimeError):
    """The pair model cannot be loaded or run."""


def pair_text(sentence: str, title: str, previous: str) -> str:
    """The passage side of a pair, exactly as the training script built it."""
    text = f"{sentence} | {title}"
    return f"{text} | {previous}" if previous else text


class OnnxPairScorer:
    """Scores (question, passage) pairs; results are memoised per (question, passage)."""

    def __init__(
        self, model_dir: str | Path, threads: int | None = None, max_length: int = MAX_LENGTH
    ) -> None:
        self.model_dir = Path(model_dir)
        model_file = self.model_dir / "model.onnx"
        try:
            expected = (self.model_dir / "model.onnx.sha256").read_text().split()[0]
            # read the bytes every load: a sidecar cache would hide a corrupted file
            self.sha256 = file_sha256(model_file, use_sidecar=False)
        except (OSError, IndexError) as exc:
            raise PairModelError(f"pair model unreadable at {self.model_dir}: {exc}") from exc
        self.model_id = f"onnx:{self.sha256[:12]}"
        if self.sha256 != expected:
            raise PairModelError(
                f"pair model {model_file} has sha256 {self.sha256[:12]}…, expected {expected[:12]}…"
            )
        try:
            import onnxruntime
            from tokenizers import Tokenizer

            options = onnxruntime.SessionOptions()
            if threads:
                options.intra_op_num_threads = threads
            self.session = onnxruntime.InferenceSession(
                str(model_file), options, providers=["CPUExecutionProvider"]
            )
            self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        except Exception as exc:  # a broken file or runtime: not a score
            raise PairModelError(f"pair model failed to load: {type(exc).__name__}: {exc}") from exc
        self.tokenizer.enable_truncation(max_length, strategy="only_second")
        self.input_names = {i.name for i in self.session.get_inputs()}
        self._memo: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def score(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Raw logits, one per pair (apply a calibration to read them as probabilities).
        `Cancelled` when the caller's stop flag (`chat.stop_when`) is set: a judge scoring claim
        after claim for a request past its deadline stops at its next claim."""
        raise_if_cancelled()
        out = np.zeros(len(pairs), dtype=float)
        todo: list[int] = []
        with self._lock:
            for i, pair in enumerate(pairs):
                if pair in self._memo:
                    out[i] = self._memo[pair]
                else:
                    todo.append(i)
        if todo:
            fresh = self._run([pairs[i] for i in todo])
            with self._lock:
                for i, value in zip(todo, fresh, strict=True):
                    out[i] = value
                    self._memo[pairs[i]] = float(value)
                while len(self._memo) > _CACHE_SIZE:
                    self._memo.popitem(last=False)
        return out

    def _run(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(pairs)
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        logits = np.zeros(len(pairs), dtype=float)
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chosen)
            feeds = {
                name: np.zeros((len(chosen), width), dtype=np.int64)
                for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            for row, i in enumerate(chosen):
                e = encodings[i]
                n = len(e.ids)
                feeds["input_ids"][row, :n] = e.ids
                feeds["attention_mask"][row, :n] = e.attention_mask
                feeds["token_type_ids"][row, :n] = e.type_ids
            feeds = {k: v for k, v in feeds.items() if k in self.input_names}
            try:
                result = self.session.run(None, feeds)[0]
            except Exception as exc:
                raise PairModelError(f"pair model failed: {type(exc).__name__}: {exc}") from exc
            logits[chosen] = np.asarray(result, dtype=float).reshape(-1)
        return logits


_LOADED: dict[tuple[str, str, str], OnnxPairScorer] = {}
_LOAD_LOCK = threading.Lock()


def load(model_dir: str | Path, max_length: int = MAX_LENGTH) -> OnnxPairScorer:
    """One scorer per model directory and file mtime: a replaced file is reloaded (and its sha256
    checked again), never reused."""
    path = Path(model_dir).resolve()
    try:
        key = (str(path), (path / "model.onnx").stat().st_mtime_ns.__str__(), str(max_length))
    except OSError as exc:
        raise PairModelError(f"pair model missing at {path}: {exc}") from exc
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED[key] = OnnxPairScorer(path, max_length=max_length)
        return _LOADED[key]


ROW_CELL = re.compile(r"^[^:;|()]{1,60}: \S")  # "Storage per user: 250 GB", a table cell


def row_cells(sentence: str) -> list[str]:
    """The cells of a table row as the formats write it ("Plan: Business; Storage per user:
    250 GB; …", stages/formats/tables.py), or [] for any other sentence."""
    cells = [c.strip() for c in sentence.rstrip(".").split("; ")]
    # prose such as "The Normans (Norman: Nourmands; French: Normands; Latin: …) were" is not a
    # row: a cell's key has no bracket and a cell closes every bracket it opens
    if len(cells) < 3 or not all(ROW_CELL.match(c) and c.count("(") == c.count(")") for c in cells):
        return []
    return cells


def cell_views(sentence: str) -> list[str]:
    """A table row as the pair model reads prose: its key cell with one other cell each ("Plan:
    Business; Storage per user: 250 GB."). Trained on sentences, the model scores a whole row
    of five cells low for a question about one of them (1.4 where the short view gets 2.9) and
    still tells the Business row from the Enterprise one in the short view."""
    cells = row_cells(sentence)
    return [f"{cells[0]}; {cell}." for cell in cells[1:]]


def sentence_passages(title: str, text: str) -> list[tuple[int, int, str]]:
    """(start, end, passage) per sentence of a chunk: the pair's passage side with its context."""
    from stages.common.text import sentence_spans

    spans = sentence_spans(text)
    passages = []
    for i, (start, end) in enumerate(spans):
        previous = text[spans[i - 1][0] : spans[i - 1][1]] if i else ""
        passages.append((start, end, pair_text(text[start:end], title, previous)))
    return passages


def sentence_logit(scorer: OnnxPairScorer, question: str, sentence: str, title: str = "") -> float:
    """The pair logit of one sentence read alone (no sentence before it), a table row as its
    best cell view: as the fast answerability judge reads a sentence (`cell_views`)."""
    views = [pair_text(sentence, title, "")]
    views += [pair_text(view, title, "") for view in cell_views(sentence)]
    try:
        return max(float(s) for s in scorer.score([(question, view) for view in views]))
    except Exception as exc:  # any model failure is the caller's technical error
        raise PairModelError(f"{type(exc).__name__}: {exc}") from exc
