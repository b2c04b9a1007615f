"""The release eval's HTML report, its metrics.json and questions.parquet, and the markdown summary.

The report is a tool to look at failures: the gate verdict and scores by axis against the
baseline, expected vs actual outcomes per category, plots, then the wrong answers (and leaks),
most confident first, and the over-refusals, each with question, answer, evidence, confidence
and the guardrail report."""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
from pathlib import Path

import pyarrow as pa

from eval.frozen_sets import ROOT
from eval.metrics import reliability_bins
from eval.release_gate import format_value
from eval.scoring import EvalResult

REPORTS_DIR = ROOT / "eval" / "reports"
WORST_FAILURES = 15


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def plots(run: EvalResult) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = run.per_question
    images = {}
    pairs = [(r["confidence"], r["correct"]) for r in rows if r["confidence"] is not None]
    fig, ax = plt.subplots(figsize=(4.5, 4))
    centers, accuracies, sizes = [], [], []
    for index, members in enumerate(reliability_bins(pairs)):
        if members:
            centers.append((index + 0.5) / 10)
            accuracies.append(sum(o for _, o in members) / len(members))
            sizes.append(len(members))
    ax.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    ax.bar(centers, accuracies, width=0.09, alpha=0.7, label="share correct")
    for x, y, n in zip(centers, accuracies, sizes, strict=True):
        ax.text(x, y + 0.02, str(n), ha="center", fontsize=7)
    ax.set(xlabel="rerank confidence", ylabel="answered correctly", xlim=(0, 1), ylim=(0, 1.1))
    ax.set_title("Reliability diagram (n per bin)")
    ax.legend(fontsize=7)
    images["reliability"] = _png(fig)

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for outcome, colour in ((True, "tab:green"), (False, "tab:red")):
        values = [c for c, o in pairs if o == outcome]
        axes[0].hist(values, bins=20, range=(0, 1), alpha=0.6, color=colour, label=str(outcome))
        scores = [
            r["guardrail_score"]
            for r in rows
            if r["guardrail_score"] is not None and r["pre_guardrail_supported"] == outcome
        ]
        axes[1].hist(scores, bins=20, range=(0, 1), alpha=0.6, color=colour, label=str(outcome))
    axes[0].set(title="Rerank confidence by correctness", xlabel="confidence")
    axes[1].set(title="Guardrail score by pre-guardrail support", xlabel="weakest-claim score")
    axes[0].legend(title="correct", fontsize=7)
    axes[1].legend(title="supported", fontsize=7)
    images["distributions"] = _png(fig)

    seconds = run.metrics["axes"]["cost"]["seconds_per_question"]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh(list(seconds), [v * 1000 for v in seconds.values()], color="tab:blue")
    ax.invert_yaxis()
    ax.set(xlabel="ms per question", title="Time per stage (this run; cache hits are ~0)")
    images["stage_time"] = _png(fig)
    return images


def worst_failures(rows: list[dict], limit: int = WORST_FAILURES) -> list[dict]:
    """Leaks first, then confident wrong answers, then wrong refusals and blocks."""

    def severity(row: dict) -> tuple:
        wrong_answer = row["status"] == "answered" and not row["correct"]
        return (
            -len(row["leaked_doc_ids"]),
            -int(wrong_answer),
            -(row["confidence"] or 0.0),
            row["question_id"],
        )

    failed = [r for r in rows if not r["outcome_correct"] or r["leaked_doc_ids"]]
    return sorted(failed, key=severity)[:limit]


def outcome_of(row: dict) -> str:
    """What happened to one question, as a reader of the report names it."""
    if row["status"] == "answered":
        return "answered, correct" if row["correct"] else "answered, wrong"
    return str(row["status"])


OUTCOMES = ("answered, correct", "answered, wrong", "refused", "blocked")


def outcome_table(rows: list[dict]) -> list[dict]:
    """Expected vs actual per category: how many of each outcome, per (category, expected)."""
    groups: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        key = (str(row["category"]), row["expected_behavior"])
        counts = groups.setdefault(key, dict.fromkeys(OUTCOMES, 0))
        outcome = outcome_of(row)
        counts[outcome] = counts.get(outcome, 0) + 1
    return [
        {"category": c, "expected": x, "n": sum(counts.values()), **counts}
        for (c, x), counts in sorted(groups.items())
    ]


def _colour(row: dict) -> str:
    return {
        "regressed": "#f8d0d0",
        "worse within tolerance": "#fcebc8",
        "improved": "#d4f2d4",
    }.get(row["verdict"], "white")


def render_html(run: EvalResult, comparison: dict, images: dict[str, str]) -> str:
    e = html.escape
    m = run.metrics
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Eval {e(m['set'])}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;"
        "padding:3px 8px;font-size:13px;vertical-align:top}.pass{color:green}.fail{color:#b00}"
        "</style></head><body>",
        f"<h1>Release eval: {e(m['set'])}</h1>",
        f"<p>{m['questions']} questions · set {m['set_hash'][:12]} · counts {e(str(m['counts']))}"
        f" · wall {m['axes']['cost'].get('wall_seconds')} s</p>",
    ]
    if not comparison["has_baseline"]:
        out.append("<p><b>No baseline yet</b>: this run has nothing to be compared with.</p>")
    elif comparison["passed"]:
        out.append("<p class='pass'><b>Gate: PASS</b></p>")
    else:
        items = "".join(f"<li>{e(f)}</li>" for f in comparison["failures"])
        out.append(f"<p class='fail'><b>Gate: FAIL</b></p><ul>{items}</ul>")
    for note in comparison["notes"]:
        out.append(f"<p class='fail'><b>{e(note)}</b></p>")
    out.append(
        "<h2>Scores by axis vs baseline</h2><table><tr><th>axis</th><th>metric</th>"
        "<th>baseline</th><th>candidate</th><th>delta</th><th>better</th>"
        "<th>tolerance</th><th>verdict</th></tr>"
    )
    for row in comparison["rows"]:
        delta = "" if row["delta"] is None else f"{row['delta']:+.4f}"
        out.append(
            f"<tr style='background:{_colour(row)}'><td>{e(row['axis'])}</td>"
            f"<td>{e(row['metric'])}</td><td>{format_value(row['baseline'])}</td>"
            f"<td>{format_value(row['candidate'])}</td><td>{delta}</td><td>{row['direction']}</td>"
            f"<td>{row['tolerance']}</td><td>{e(row['verdict'])}</td></tr>"
        )
    out.append("</table><h2>Expected vs actual, per category</h2><table><tr><th>category</th>")
    out.append("<th>expected</th><th>n</th>" + "".join(f"<th>{o}</th>" for o in OUTCOMES))
    out.append("</tr>")
    for row in outcome_table(run.per_question):
        cells = "".join(f"<td>{row[o]}</td>" for o in OUTCOMES)
        out.append(
            f"<tr><td>{e(row['category'])}</td><td>{e(row['expected'])}</td>"
            f"<td>{row['n']}</td>{cells}</tr>"
        )
    out.append("</table><h2>All metrics</h2><pre>")
    out.append(e(json.dumps(m["axes"], indent=2)))
    out.append("</pre><h2>Plots</h2>")
    for name, data in images.items():
        out.append(f"<img alt='{name}' src='data:image/png;base64,{data}'>")
    failures = worst_failures(run.per_question, limit=len(run.per_question))
    wrong = [r for r in failures if r["leaked_doc_ids"] or outcome_of(r) == "answered, wrong"]
    over_refused = [
        r for r in failures if r["expected_behavior"] == "answer" and r["status"] != "answered"
    ]
    sections = (
        ("Wrong answers and leaks (most confident first)", wrong[:WORST_FAILURES]),
        ("Over-refusals: answerable questions without an answer", over_refused[:WORST_FAILURES]),
    )
    for title, chosen in sections:
        out += _failure_table(title, chosen)
    out.append("</body></html>")
    return "\n".join(out)


def _failure_table(title: str, rows: list[dict]) -> list[str]:
    e = html.escape
    out = [
        f"<h2>{e(title)}</h2><p>{len(rows)} shown.</p><table><tr><th>question</th>"
        "<th>expected</th><th>got</th><th>answer</th><th>evidence</th><th>guardrail report</th>"
        "</tr>"
    ]
    for row in rows:
        expected = row["expected_behavior"]
        if expected == "answer":
            expected += f": {row['gold_answers']} from {row['gold_doc_ids']}"
        else:
            expected += f" ({row['expected_refusal_reason']})"
        got = (
            f"{row['status']} {row['refusal_reason'] or ''} conf={format_value(row['confidence'])}"
        )
        if row["leaked_doc_ids"]:
            got += f" LEAK {row['leaked_doc_ids']}"
        evidence = "<br>".join(e(x[:300]) for x in row["evidence"][:5])
        report = e(f"{row['guardrail_action']}: {'; '.join(row['guardrail_reasons'])}")
        answer = e((row["answer"] or row["pre_guardrail_answer"] or "")[:400])
        out.append(
            f"<tr><td><b>{e(row['question_id'])}</b> [{e(str(row['category']))}, "
            f"{e(row['principal'])}] {e(row['question'])}</td><td>{e(expected)}</td>"
            f"<td>{e(got)}</td><td>{answer}</td><td>{evidence}</td><td>{report}</td></tr>"
        )
    out.append("</table>")
    return out


def write_report(run: EvalResult, comparison: dict, reports_dir: Path = REPORTS_DIR) -> Path:
    import pyarrow.parquet as pq

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = Path(reports_dir) / stamp
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = Path(reports_dir) / f"{stamp}-{suffix}"
    folder.mkdir(parents=True)
    payload = {**run.metrics, "gate": {k: v for k, v in comparison.items() if k != "rows"}}
    payload["gate"]["rows"] = comparison["rows"]
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    pq.write_table(pa.Table.from_pylist(run.per_question), folder / "questions.parquet")
    (folder / "report.html").write_text(render_html(run, comparison, plots(run)))
    return folder


def summary_markdown(run: EvalResult, comparison: dict, folder: Path | None) -> str:
    lines = [f"# Release eval `{run.eval_set.name}`", ""]
    verdict = (
        "no baseline"
        if not comparison["has_baseline"]
        else "PASS"
        if comparison["passed"]
        else "FAIL"
    )
    lines += [f"Gate: **{verdict}**", ""]
    lines += [f"- {f}" for f in comparison["failures"]] + [
        f"- **{n}**" for n in comparison["notes"]
    ]
    lines += ["", "| axis | metric | baseline | candidate | verdict |", "|---|---|---|---|---|"]
    for r in comparison["rows"]:
        lines.append(
            f"| {r['axis']} | {r['metric']} | {format_value(r['baseline'])} "
            f"| {format_value(r['candidate'])} | {r['verdict']} |"
        )
    if folder:
        lines += ["", f"Report: `{folder}/report.html`"]
    return "\n".join(lines)
