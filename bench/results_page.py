"""What the result files say, for people: bench/results/README.md and the docs' benchmarks page.

Both open with one table of headline figures (what, figure, target, anchor, measured on which
date, commit and stage versions; a result measured on older stage versions says so), then each
bench's own `summarize` of its result file. `write_readme` regenerates the README from every
`<bench>.json` present.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import BENCHES, common

TITLES = {
    "speed": "Speed: BM25, FAISS, retrieval.run",
    "scifact": "SciFact retrieval quality (BEIR test)",
    "ranking": "Ranking on the frozen eval sets",
    "calibration": "Confidence calibration on SQuAD 2.0 dev",
    "generation": "Generation backends on SQuAD 2.0 dev",
    "halueval": "HaluEval QA: flagging hallucinated answers",
    "paraphrase": "Paraphrase pairs: groundedness that reads meaning",
    "ops": "Operations: backfill throughput and incremental re-runs",
    "user_folder": "A user's own folder: answers, per-file errors, peak memory",
    "answerability": "The answerability judge, end to end",
    "question_checks": "Question checks: names and negation",
    "llm_answers": "LLM answers under the guardrails",
    "ocr": "OCR of scanned pages: words recovered, seconds per page",
    "tables": "Tables as chunks: one-cell questions cited to their row",
    "scale": "Large corpora: full build and incremental re-runs",
    "embeddings": "Embedding runtimes: torch, ONNX, int8",
    "setup": "A fresh machine: `make setup` with empty package caches",
    "veto_ceiling": "Veto ceiling: what a judge of answers would have to reach",
    "agent_runs": "Agent runs: tool calls and answers checked",
    "ragtruth": "RAGTruth QA: hallucination detection on real LLM answers",
    "judge_ceiling": "Judge ceiling: the claim-judge AUC the RAGTruth targets need",
    "agent_runs_ragtruth": "RAGTruth's answers as agent runs",
    "serving": "Serving agents: HTTP latency, soak, states",
}


@dataclass
class Headline:
    """One row of the headline table."""

    what: str
    figure: str
    target: str = "–"
    anchor: str = "–"
    met: bool | None = None


def _f(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return (
        f"{value:,.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
    )


def _pct(value: float) -> str:
    return f"{value:.1%}"


def _refs(references: dict[str, float], fmt: Callable[[float], str] = _f) -> str:
    return "; ".join(f"{name} {fmt(value)}" for name, value in references.items())


def _speed(r: dict) -> Headline:
    t = r["target"]
    query = r["bm25"][str(t["bm25_speedup_at"])]["query"]
    return Headline(
        f"BM25 scoring speed-up over rank_bm25 at {t['bm25_speedup_at']:,} chunks",
        f"×{_f(t['measured'], 1)}",
        f"≥ ×{_f(t['required'], 1)}",
        f"rank_bm25's own scores, equal within {query['max_abs_score_diff']:.0e}",
        t["met"],
    )


def _scifact(r: dict) -> Headline:
    t = r["target"]
    return Headline(
        f"SciFact {t['metric']}",
        _f(t["measured"], 4),
        f"≥ {_f(t['required'])}",
        _refs(r.get("references_ndcg@10", {})),
        t["met"],
    )


def _ranking(r: dict) -> Headline:
    values = [s["metrics"]["fused+rerank"]["ndcg@10"] for s in r["sets"]]
    return Headline(
        f"nDCG@10 of the full stack on {len(values)} frozen sets",
        f"{min(values):.3f}–{max(values):.3f}",
        "≥ fused and ≥ dense on every set",
        "the same run's fused and dense lists",
        r.get("met"),
    )


def _calibration(r: dict) -> Headline:
    held = r["held_out"]
    return Headline(
        f"rerank confidence ECE on held-out SQuAD 2.0 dev ({held['n']:,} questions)",
        _f(held["ece"], 4),
        anchor=f"accuracy {_f(held['accuracy'])} at mean confidence {_f(held['mean_confidence'])}",
    )


def _generation(r: dict) -> Headline:
    backends = r["backends"]
    figure = ", ".join(f"{n} {_pct(b['answerable_with_gold'])}" for n, b in backends.items())
    return Headline("answerable questions answered with a gold answer, by backend", figure)


def _halueval(r: dict) -> Headline:
    held = r["calibration"]["on_held_out_records"]
    target = r["target_accuracy"]
    return Headline(
        "HaluEval QA accuracy of flagging, held-out records "
        + r["calibration"]["held_out_records"],
        _pct(held["accuracy"]),
        f"≥ {_pct(target)}",
        _refs(r.get("references_accuracy", {}), _pct),
        held["accuracy"] >= target,
    )


def _paraphrase(r: dict) -> Headline:
    value = r["configured_threshold"]["test"]["balanced_accuracy"]
    target = r["targets"]["balanced_accuracy"]
    return Headline(
        "balanced accuracy on paraphrase pairs (test half, configured threshold)",
        _f(value, 4),
        f"≥ {_f(target)}",
        met=value >= target,
    )


def _ops(r: dict) -> Headline:
    squad, t = r["squad2_dev"], r["targets"]
    met = squad["questions_per_s"] >= t["questions_per_s"] and (
        squad["incremental_over_full"] <= t["incremental_over_full"]
    )
    return Headline(
        "backfill questions per second on SQuAD dev; incremental / full time",
        f"{_f(squad['questions_per_s'], 1)} q/s; {_f(squad['incremental_over_full'])}",
        f"≥ {_f(t['questions_per_s'])} q/s; ≤ {_f(t['incremental_over_full'])}",
        met=met,
    )


def _user_folder(r: dict) -> Headline:
    return Headline(
        f"peak memory of `grounding run` over a user's folder ({r['questions']} questions)",
        f"{_f(r['peak_rss_mb'], 1)} MB",
        f"≤ {_f(r['target_peak_rss_mb'])} MB",
        met=r["peak_rss_mb"] <= r["target_peak_rss_mb"],
    )


def _answerability(r: dict) -> Headline:
    judges = {j["judge"]: j for j in r["judges"]}
    added, target = r["strict_added_s_per_answered"], r["target_added_s_per_answered"]
    return Headline(
        "strict answerability judge: truthfulness (without → with); added seconds per answer",
        f"{_f(judges['none']['truthfulness'])} → {_f(judges['strict']['truthfulness'])}; "
        f"{_f(added, 2)} s",
        f"≤ {_f(target)} s added",
        met=added <= target,
    )


def _question_checks(r: dict) -> Headline:
    variants = r["end_to_end"]
    first, last = variants[0], variants[-1]
    return Headline(
        f"truthfulness, {first['variant']} → {last['variant']}",
        f"{_f(first['truthfulness'])} → {_f(last['truthfulness'])}",
    )


def _llm_answers(r: dict) -> Headline:
    name, block = next(
        (n, s["guardrails_on_llm_drafts"])
        for n, s in r["sets"].items()
        if s.get("guardrails_on_llm_drafts")
    )
    t = r["targets"]
    fp, eff = block["false_positive_rate"], block["efficacy"]
    return Headline(
        f"guardrails on {block['drafts']} LLM drafts ({name}): right drafts stopped; "
        "wrong drafts stopped",
        f"{_pct(fp)}; {_pct(eff)}",
        f"≤ {_pct(t['false_positive_rate'])}; ≥ {_pct(t['efficacy'])}",
        met=fp <= t["false_positive_rate"] and eff >= t["efficacy"],
    )


def _ocr(r: dict) -> Headline:
    met = r["word_recall"] >= r["target_word_recall"] and (
        r["seconds_per_page"] <= r["target_seconds_per_page"]
    )
    return Headline(
        "OCR words recovered; seconds per scanned page",
        f"{_pct(r['word_recall'])}; {_f(r['seconds_per_page'], 2)} s",
        f"≥ {_pct(r['target_word_recall'])}; ≤ {_f(r['target_seconds_per_page'])} s",
        met=met,
    )


def _tables(r: dict) -> Headline:
    return Headline(
        f"one-cell table questions answered and cited to their row ({r['questions']})",
        _pct(r["ok"]),
        f"≥ {_pct(r['target'])}",
        met=r["ok"] >= r["target"],
    )


def _scale(r: dict) -> Headline:
    size = max(r["sizes"], key=int)
    entry = r["sizes"][size]
    ratios = entry["ratios"]
    worst = max(ratios.values(), key=lambda x: x["wall"] / x["target"])
    return Headline(
        f"{int(size):,} documents: full build; slowest re-run against its share of the full build",
        f"{_f(entry['full']['wall_s'], 1)} s; {_pct(worst['wall'])}",
        f"re-runs ≤ {_pct(worst['target'])}",
        met=all(x["wall"] <= x["target"] for x in ratios.values()),
    )


def _embeddings(r: dict) -> Headline:
    int8 = r["runtimes"].get("onnx-int8") or next(iter(r["runtimes"].values()))
    return Headline(
        "int8 ONNX embeddings: nDCG@10 change against fp32; sentences per second against torch",
        f"{_f(int8['ndcg10_minus_fp32'], 4)}; ×{_f(int8['sentences_speedup'], 1)}",
        r["rule"],
        met=r.get("int8_within_rule"),
    )


def _setup(r: dict) -> Headline:
    return Headline(
        "`make setup` in a fresh clone with empty caches",
        f"{_f(r['seconds'], 1)} s",
        f"≤ {_f(r['target_s'])} s",
        met=r.get("met"),
    )


def _veto_ceiling(r: dict) -> Headline:
    rows = [
        (entry["set"], j)
        for entry in r["sets"]
        for j in entry["judges"]
        if j["judge"] == "none" and j.get("auc_needed_for_target") is not None
    ]
    figure = "; ".join(f"{s} {_f(j['auc_needed_for_target'], 3)}" for s, j in rows)
    have = "; ".join(f"{s} {_f(j['confidence_auc_right_vs_wrong'], 3)}" for s, j in rows)
    return Headline(
        "answer-judge AUC needed for the truthfulness targets, by set",
        figure or "no set within its ceiling",
        "; ".join(f"{k} {_f(v)}" for k, v in r["targets"].items()) + " (truthfulness)",
        f"today's confidence AUC: {have}" if have else "–",
    )


def _agent_runs(r: dict) -> Headline:
    tools, claims, t = r["tool_calls"], r["claims"]["report_split"], r["targets"]
    met = (
        tools["recall"] >= t["invalid_recall"]
        and tools["valid_flag_rate"] <= t["valid_flag_rate_max"]
        and claims["hallucinated_flagged"] >= t["hallucinated_flagged"]
        and claims["clean_flag_rate"] <= t["clean_flag_rate_max"]
    )
    return Headline(
        "invalid tool calls caught; valid runs flagged; hallucinated answers caught; clean "
        "answers flagged",
        f"{_pct(tools['recall'])}; {_pct(tools['valid_flag_rate'])}; "
        f"{_pct(claims['hallucinated_flagged'])}; {_pct(claims['clean_flag_rate'])}",
        f"≥ {_pct(t['invalid_recall'])}; ≤ {_pct(t['valid_flag_rate_max'])}; "
        f"≥ {_pct(t['hallucinated_flagged'])}; ≤ {_pct(t['clean_flag_rate_max'])}",
        met=met,
    )


def _ragtruth(r: dict) -> Headline:
    split = "report" if "report" in r["splits"] else next(iter(r["splits"]))
    resp, t = r["splits"][split]["response"], r["targets"]
    met = resp["f1"] >= t["f1"] and resp["correct_flag_rate"] <= t["correct_flag_rate"]
    return Headline(
        f"response-level F1; correct answers flagged ({split} split, {resp['n']} answers)",
        f"{_f(resp['f1'])}; {_pct(resp['correct_flag_rate'])}",
        f"≥ {_f(t['f1'])}; ≤ {_pct(t['correct_flag_rate'])}",
        "published F1: " + _refs(r.get("references_f1", {})),
        met,
    )


def _judge_ceiling(r: dict) -> Headline:
    split = r["splits"].get("report") or next(iter(r["splits"].values()))
    return Headline(
        "claim-judge AUC the RAGTruth targets need (report split)",
        _f(split["auc_needed"], 3),
        f"F1 ≥ {_f(r['targets']['f1'])} at ≤ {_pct(r['targets']['correct_flagged'])} "
        "correct flagged",
        f"the configured judge's claim AUC: {_f(split['configured_judge_claim_auc'], 3)}",
    )


def _agent_runs_ragtruth(r: dict) -> Headline:
    split = r["splits"].get("report") or next(iter(r["splits"].values()))
    text, t = split["text"], r["targets"]
    return Headline(
        "RAGTruth answers as agent runs (text results): F1; correct answers flagged",
        f"{_f(text['f1'])}; {_pct(text['correct_flag_rate'])}",
        f"≥ {_f(t['f1'])}; ≤ {_pct(t['correct_flag_rate'])}",
        met=text["f1"] >= t["f1"] and text["correct_flag_rate"] <= t["correct_flag_rate"],
    )


def _serving(r: dict) -> Headline:
    met = r["met"]
    return Headline(
        "HTTP /v1/search p50 without an LLM; targets met",
        f"{_f(r['search_no_llm']['p50_ms'], 1)} ms; {sum(met.values())} of {len(met)}",
        f"≤ {_f(r['targets']['search_p50_ms'])} ms; all",
        met=all(met.values()),
    )


HEADLINES: dict[str, Callable[[dict], Headline]] = {
    "speed": _speed,
    "scifact": _scifact,
    "ranking": _ranking,
    "calibration": _calibration,
    "generation": _generation,
    "halueval": _halueval,
    "paraphrase": _paraphrase,
    "ops": _ops,
    "user_folder": _user_folder,
    "answerability": _answerability,
    "question_checks": _question_checks,
    "llm_answers": _llm_answers,
    "ocr": _ocr,
    "tables": _tables,
    "scale": _scale,
    "embeddings": _embeddings,
    "setup": _setup,
    "veto_ceiling": _veto_ceiling,
    "agent_runs": _agent_runs,
    "ragtruth": _ragtruth,
    "judge_ceiling": _judge_ceiling,
    "agent_runs_ragtruth": _agent_runs_ragtruth,
    "serving": _serving,
}


def headline(name: str, result: dict[str, Any]) -> Headline:
    """The bench's headline row; a bench without one, or a result file of an older shape,
    gets its description and a pointer to the details instead of a guess."""
    description = getattr(importlib.import_module(BENCHES[name]), "DESCRIPTION", name)
    make = HEADLINES.get(name)
    if make is None:
        return Headline(description, "see the details")
    try:
        return make(result)
    except (KeyError, TypeError, ValueError, IndexError, StopIteration, ZeroDivisionError):
        return Headline(description, "see the details (the result file predates this table)")


# ---------------------------------------------------------------- result files


def bench_of(path: Path) -> str | None:
    """The bench a result file belongs to: `<bench>.json` or a variant `<bench>-<what>.json`
    that the bench wrote (it carries a `bench` key; fits by scripts/ do not)."""
    if "bench" not in _load(path):
        return None
    stem = path.stem
    names = sorted(BENCHES, key=len, reverse=True)
    return next((n for n in names if stem == n or stem.startswith(f"{n}-")), None)


def result_files(results_dir: Path) -> dict[str, list[Path]]:
    """Bench -> its result files, the headline file first: the one the bench names (`HEADLINE`),
    else `<bench>.json`, else the newest variant. Files of no bench (fits and sweeps written by
    scripts/) are under ""."""
    grouped: dict[str, list[Path]] = {}
    for path in sorted(results_dir.glob("*.json")):
        grouped.setdefault(bench_of(path) or "", []).append(path)
    for name, paths in grouped.items():
        if name:
            first = getattr(importlib.import_module(BENCHES[name]), "HEADLINE", None) or name
            paths.sort(key=lambda p: (p.stem != first, p.stem != name, -_timestamp(p)))
    return grouped


def _timestamp(path: Path) -> float:
    import datetime as dt

    date = _date(_load(path))
    try:
        return dt.datetime.fromisoformat(date).timestamp() if date else 0.0
    except ValueError:
        return 0.0


def _load(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _date(result: dict[str, Any]) -> str | None:
    return (result.get("machine") or {}).get("date") or result.get("date")


def current_versions() -> dict[str, str]:
    return common.stage_versions()


def recorded_versions(result: dict[str, Any]) -> dict[str, str]:
    machine = result.get("machine") or {}
    return {**(result.get("stage_versions") or {}), **(machine.get("stage_versions") or {})}


def measured_on(
    result: dict[str, Any], current: dict[str, str] | None = None, short: bool = False
) -> str:
    """Date and commit; "measured on an older version" with the stages that changed since,
    when any did (`short`: "older version", for a table cell)."""
    current = current_versions() if current is None else current
    machine = result.get("machine") or {}
    date = (_date(result) or "")[:10] or "no date recorded"
    commit = (machine.get("git_commit") or result.get("git_commit") or "")[:7]
    text = f"{date}, `{commit}`" if commit else date
    recorded = recorded_versions(result)
    older = [
        f"{stage} {version} (now {current[stage]})"
        for stage, version in recorded.items()
        if stage in current and current[stage] != version
    ]
    if older:
        label = "older version" if short else "measured on an older version"
        return f"{text}; **{label}**: {', '.join(older)}"
    if not recorded:
        return f"{text}; stage versions not recorded"
    return text


def _machine_line(machine: dict[str, Any]) -> str:
    libs = ", ".join(f"{k} {v}" for k, v in machine.get("libraries", {}).items() if v)
    commit = (machine.get("git_commit") or "unknown")[:12]
    stages = ", ".join(f"{k} {v}" for k, v in machine.get("stage_versions", {}).items())
    load = machine.get("load_average_1_5_15min")
    load_text = " / ".join(str(x) for x in load) if load else "not recorded"
    return (
        f"Measured {machine.get('date') or 'on an unrecorded date'} on "
        f"{machine.get('nproc') or 'an unrecorded number of'} cores, Python "
        f"{machine.get('python') or 'unrecorded'}, commit `{commit}` "
        f"(stages: {stages or 'not recorded'}); load average (1/5/15 min) when written "
        f"{load_text}. Libraries: {libs or 'not recorded'}."
    )


# ---------------------------------------------------------------- readable text


_DICT = re.compile(r"\{'[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def readable(text: str) -> str:
    """A summary's Python dict reprs ("{'a': 1, 'b': {'c': 2}}") as words ("a 1, b (c 2)")."""

    def words(value: Any) -> str:
        if isinstance(value, dict):
            return ", ".join(
                f"{k} ({words(v)})" if isinstance(v, dict) else f"{k} {words(v)}"
                for k, v in value.items()
            )
        if isinstance(value, list | tuple):
            return ", ".join(words(v) for v in value)
        return _f(value, 4) if isinstance(value, float) else str(value)

    def replace(match: re.Match) -> str:
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            return match.group(0)
        return words(value) if isinstance(value, dict) else match.group(0)

    return _DICT.sub(replace, text)


def summary(name: str, result: dict[str, Any]) -> str:
    """The bench's own summary of a result file, its dicts as words; a file of an older shape
    that the summary cannot read says so in a sentence."""
    module = importlib.import_module(BENCHES[name])
    try:
        return readable(module.summarize(result))
    except Exception as exc:  # an old result file a newer summary cannot read
        return (
            f"This file's shape predates the bench's current summary ({type(exc).__name__} "
            f"on {exc}); `python -m bench {name}` measures it again."
        )


def headline_table(
    results_dir: Path, link: Callable[[str, str], str] | None = None
) -> tuple[list[str], dict[str, list[Path]]]:
    """The headline table's lines and the result files it read, by bench. `link(name, text)`
    turns a row's *what* into a link to the bench's details."""
    files = result_files(results_dir)
    current = current_versions()
    link = link or (lambda name, text: f"{text} (`{name}`)")
    lines = ["| what | figure | target | anchor | measured |", "|---|---|---|---|---|"]
    for name in BENCHES:
        paths = files.get(name)
        if not paths:
            description = getattr(importlib.import_module(BENCHES[name]), "DESCRIPTION", name)
            lines.append(
                f"| {link(name, _cell(description))} | no result file yet | – | – "
                f"| `python -m bench {name}` |"
            )
            continue
        result = _load(paths[0])
        row = headline(name, result)
        mark = {True: " (met)", False: " (**not met**)"}.get(row.met, "")
        where = measured_on(result, current, short=True)
        if paths[0].stem != name:
            where += f"; from `{paths[0].name}`"
        lines.append(
            f"| {link(name, _cell(row.what))} | {_cell(row.figure)}{mark} | {_cell(row.target)} "
            f"| {_cell(row.anchor)} | {where} |"
        )
    return lines, files


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def other_files_table(paths: list[Path], pages: dict[str, str] | None = None) -> list[str]:
    """Result files of no bench (fits and sweeps by scripts/): the script that writes each and,
    given `pages` (docs page -> its text), the pages that report it."""
    writers = _writers()
    header = (
        "| file | written by | reported on | measured |"
        if pages
        else "| file | written by | measured |"
    )
    lines = [header, "|---|---|---|---|" if pages else "|---|---|---|"]
    for path in paths:
        by = _written_by(path.name, writers)
        written = ", ".join(f"`python -m scripts.{n}`" for n in sorted(set(by))) or "–"
        date = (_date(_load(path)) or "")[:10] or "not recorded"
        cells = [f"`{path.name}`", written]
        if pages:
            cited = [title for title, text in pages.items() if path.name in text]
            cells.append(", ".join(cited) or "–")
        lines.append("| " + " | ".join([*cells, date]) + " |")
    return lines


def _written_by(file_name: str, writers: list[tuple[str, str]]) -> list[str]:
    """The scripts whose output paths match the file, else that name it; a variant
    (`x-fast.json`) is traced to the file it varies (`x.json`)."""
    stem = file_name.removesuffix(".json")
    while stem:
        name = f"{stem}.json"
        by = [script for script, pattern in writers if re.fullmatch(pattern, name)]
        by = by or [
            p.stem
            for p in sorted((common.ROOT / "scripts").glob("*.py"))
            if f"bench/results/{name}" in p.read_text(encoding="utf-8")
        ]
        if by:
            return by
        stem = stem.rpartition("-")[0]
    return []


def _writers() -> list[tuple[str, str]]:
    """(script, a pattern of the result file names it writes), from the paths in its source."""
    found = []
    for path in sorted((common.ROOT / "scripts").glob("*.py")):
        for name in re.findall(r'"results"\s*/\s*f?"([\w{}.-]+\.json)"', path.read_text("utf-8")):
            pattern = re.sub(r"\\\{[^}]*\\\}", r"[\\w.-]+", re.escape(name))
            found.append((path.stem, pattern))
    return found


def write_readme(results_dir: Path | None = None) -> Path:
    results_dir = Path(results_dir or common.RESULTS)
    results_dir.mkdir(parents=True, exist_ok=True)
    table, files = headline_table(results_dir)
    parts = [
        "# Benchmark results",
        "",
        "Generated by `make bench` (`python -m bench [names...]`); do not edit by hand. "
        "Each section is summarised from `<bench>.json` in this folder, which holds every "
        "figure plus the machine, library versions and commit it was measured on. A result "
        "measured on older stage versions than the code's says so.",
        "",
        *table,
    ]
    sections = []
    for name in BENCHES:
        paths = files.get(name)
        if not paths:
            continue
        result = _load(paths[0])
        module = importlib.import_module(BENCHES[name])
        sections += [
            "",
            f"## {TITLES.get(name, name)}",
            "",
            module.DESCRIPTION.rstrip(".") + f" (`{paths[0].name}`).",
            "",
            summary(name, result),
            "",
            _machine_line(result.get("machine", {})),
        ]
    readme = results_dir / "README.md"
    readme.write_text("\n".join(parts + sections) + "\n", encoding="utf-8")
    return readme
