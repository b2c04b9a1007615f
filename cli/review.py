"""`grounding review sample|sample-judge|batches|serve|import|report`, `grounding calibrate`.

The human-review loop (quality/): draw answers of a run into a review batch, judge them on a
local page or import verdicts made elsewhere, report the guardrails' efficacy from them, and
refit the gate's lines on them. `register(app)` adds them to the `grounding` app.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings

review_app = typer.Typer(
    help="Human review of sampled answers: sample, serve, import, report. Runs and batches are "
    "found through the pipeline config's store and runs_dir (`--set store=...`).",
    no_args_is_help=True,
)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@review_app.command("sample")
def sample(
    run_id: Annotated[str, typer.Argument(help="A run id under runs/ (a unique prefix will do).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Answers to draw.")] = 50,
    seed: Annotated[int, typer.Option(help="Random seed of the draw.")] = 0,
    low_confidence: Annotated[
        float, typer.Option(help="Below this confidence (else gate score) an answer is 'low'.")
    ] = 0.6,
    low_boost: Annotated[
        float, typer.Option(help="How many times more often low-confidence answers are drawn.")
    ] = 3.0,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    json_output: Annotated[bool, typer.Option("--json", help="Print the batch as JSON.")] = False,
) -> None:
    """Draw a stratified sample of a run's answers (emitted, revised, blocked, refused; low
    confidence over-sampled, weights recorded) into a review batch in the store."""
    from quality import review

    settings = load_settings(config, set_)
    try:
        run_dir = review.find_run(settings.runs_dir, run_id)
        items = review.items_from_run(run_dir)
        if not items:
            raise review.ReviewError(f"run {run_dir.name} has no answers")
        sample_config = review.SampleConfig(
            n=n, seed=seed, low_confidence=low_confidence, low_boost=low_boost
        )
        drawn = review.draw(items, sample_config)
        ref = review.write_batch(settings.artifact_store(), drawn, sample_config, run_dir.name)
    except review.ReviewError as exc:
        raise _fail(str(exc)) from exc
    counts: dict[str, int] = {}
    for item in drawn:
        counts[item["stratum"]] = counts.get(item["stratum"], 0) + 1
    if json_output:
        typer.echo(json.dumps({"batch": ref.key, "run": run_dir.name, "strata": counts}))
        return
    shown = ", ".join(f"{k} {v}" for k, v in counts.items())
    typer.echo(f"batch {ref.key[:12]}: {len(drawn)} of {len(items)} answers of {run_dir.name}")
    typer.echo(f"  strata: {shown}")
    typer.echo(f"  judge it: grounding review serve {ref.key[:12]} --reviewer YOUR_NAME")


@review_app.command("sample-judge")
def sample_judge(
    run_id: Annotated[str, typer.Argument(help="A run id under runs/ (a unique prefix will do).")],
    quality_config: Annotated[
        Path,
        typer.Option(
            "--quality-config", help="The quality settings (its sampled_judging section)."
        ),
    ] = Path("configs/quality.yaml"),
    rate: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Share of the other answers to re-judge (overrides)."),
    ] = None,
    band: Annotated[
        str | None,
        typer.Option(help="LOW,HIGH: a fast-judged claim scored inside is unsure (overrides)."),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the draw (overrides).")] = None,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Re-judge a sampled stream of a run's answers with the LLM judge: every answer the fast
    judge was unsure of, and a random share of the rest (weights recorded). Disagreements go
    to a review batch listed first. Exit 0 done, 2 cannot start, 3 done with judge failures
    (technical errors, counted apart, never as verdicts)."""
    from quality import review
    from quality import sampled_judging as sj

    settings = load_settings(config, set_)
    overrides: dict = {"rate": rate, "seed": seed}
    if band is not None:
        try:
            low, high = (float(v) for v in band.split(","))
        except ValueError as exc:
            raise _fail(f"--band {band!r}: expected LOW,HIGH such as 0.5,0.8") from exc
        overrides["band"] = (low, high)
    try:
        judging = sj.load_config(quality_config, overrides)
        run_dir = review.find_run(settings.runs_dir, run_id)
        report = sj.sample_judge(
            run_dir, settings.artifact_store(), judging, settings.stage_config("guardrails")
        )
    except (sj.SampledJudgingError, review.ReviewError) as exc:
        raise _fail(str(exc)) from exc
    if json_output:
        typer.echo(json.dumps(report, indent=1, default=str))
    else:
        typer.echo(
            f"run {report['run']}: {report['drawn']} of {report['with_draft']} answers re-judged "
            f"({report['drawn_unsure']} unsure, {report['drawn_rate']} by the {judging.rate:g} "
            f"share); {report['judged']} judged, {report['technical_errors']} technical errors"
        )
        typer.echo(
            f"  disagreeing answers {report['disagreeing_answers']} (verdict changed "
            f"{report['answer_verdict_changes']}); weighted share of the run's answers "
            f"disagreeing: {report['weighted_share_disagreeing']}"
        )
        for row in [a for a in report["answers"] if a["disagrees"]][:10]:
            typer.echo(f"  {row['answer_id']}: {row['why']}")
        for row in report["errors"][:5]:
            typer.echo(f"  technical error: {row['answer_id']}: {row['error']}", err=True)
        if report["batch"]:
            typer.echo(f"  queued: grounding review serve {report['batch'][:12]} --reviewer NAME")
        typer.echo(f"  wrote {report['report']}")
    if report["technical_errors"]:
        raise typer.Exit(3)


@review_app.command("batches")
def batches(
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the review batches in the store and how many answers each reviewer judged."""
    from quality import review

    store = load_settings(config, set_).artifact_store()
    rows = review.list_batches(store)
    for row in rows:
        judged = review.read_verdicts(store, row["key"]) if not store.remote else {}
        row["judged"] = {who: len(v) for who, v in judged.items()}
    if json_output:
        typer.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        typer.echo("no review batches (grounding review sample RUN_ID makes one)")
    for row in rows:
        judged = ", ".join(f"{k} {v}" for k, v in row["judged"].items()) or "not judged yet"
        typer.echo(
            f"{row['key'][:12]}  {row['kind']:<13}  run {row['run']}  {row['answers']} answers  "
            f"({row['created_at'][:19]})  judged: {judged}"
        )


@review_app.command("serve")
def serve(
    batch: Annotated[str, typer.Argument(help="Batch key (or a unique prefix).")],
    reviewer: Annotated[str, typer.Option(help="Your name: verdicts are kept per reviewer.")],
    port: Annotated[int, typer.Option(help="Port on the loopback address.")] = 8765,
    host: Annotated[str, typer.Option(help="Bind address; loopback only.")] = "127.0.0.1",
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Open the review page for one batch on http://127.0.0.1:PORT/ (keyboard: 1-4 verdict,
    j/k answers, [ and ] claims, s/u claim verdict, n note). Every verdict is saved at once."""
    import uvicorn

    from quality import review, review_page

    if host not in LOOPBACK:
        raise _fail(f"--host {host}: the review page binds a loopback address only")
    try:
        api = review_page.app(load_settings(config, set_).artifact_store(), batch, reviewer)
    except review.ReviewError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"review page on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
    uvicorn.run(api, host=host, port=port, log_level="warning")


@review_app.command("import")
def import_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="Verdicts as CSV or JSONL (answer_id, verdict, note, claims, reviewer).",
            exists=True,
        ),
    ],
    batch: Annotated[str, typer.Option(help="The batch the answer ids belong to.")],
    reviewer: Annotated[
        str | None, typer.Option(help="Reviewer of rows without a reviewer column.")
    ] = None,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Import verdicts made elsewhere: every row is checked first; one bad row and nothing is
    written (each bad row is named)."""
    from quality import review

    store = load_settings(config, set_).artifact_store()
    try:
        stored, errors = review.import_verdicts(store, batch, file, reviewer)
    except (review.ReviewError, OSError, UnicodeDecodeError) as exc:
        raise _fail(str(exc)) from exc
    for error in errors:
        typer.echo(f"error: {error}", err=True)
    if errors:
        typer.echo(f"{len(errors)} bad rows: nothing imported", err=True)
        raise typer.Exit(1)
    typer.echo(f"imported {stored} verdicts into batch {batch}")


def _load_batches(store, keys: list[str], samples_only: bool = False) -> list[dict]:
    """The named batches, else every judged one (`samples_only`: every judged stratified
    sample, leaving out the judges' disagreements)."""
    from quality import review

    refs = (
        [review.find_batch(store, k) for k in keys]
        if keys
        else [r for r in store.list_refs(review.STAGE)]
    )
    out = []
    for ref in refs:
        verdicts = review.read_verdicts(store, ref.key)
        if not keys and not verdicts:
            continue
        manifest = store.manifest(ref)
        if samples_only and not keys and manifest.get("kind") == review.DISAGREEMENTS:
            continue
        out.append(
            {
                "key": ref.key,
                "run": manifest.get("input_keys", {}).get("run"),
                "items": review.load_items(store, ref),
                "verdicts": verdicts,
            }
        )
    return out


@review_app.command("report")
def report(
    batch: Annotated[
        list[str], typer.Option(help="Batches to count (repeatable); default: every judged one.")
    ] = [],  # noqa: B006 - typer needs a literal default
    reviewer: Annotated[
        str | None, typer.Option(help="Count only this reviewer's verdicts.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON, not Markdown.")] = False,
    out: Annotated[
        Path | None, typer.Option(help="Also write report.md and report.json in this folder.")
    ] = None,
    prefect: Annotated[
        bool, typer.Option(help="Also publish the report as Prefect artifacts (a flow run).")
    ] = False,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Guardrail efficacy from human verdicts: efficacy, false-positive rate (blocked but
    correct), miss rate (emitted but hallucinated), refusal correctness, each with a 95 %
    interval under the sampling weights; reviewer agreement (Cohen's kappa). By default the
    stratified samples only: a disagreements batch stands for the disagreeing answers alone
    (name it with --batch to count it)."""
    from quality import efficacy, review

    store = load_settings(config, set_).artifact_store()
    try:
        loaded = _load_batches(store, batch, samples_only=True)
    except review.ReviewError as exc:
        raise _fail(str(exc)) from exc
    if not loaded:
        raise _fail("no judged review batch (grounding review serve or import first)", 1)
    figures = efficacy.report(loaded, reviewer)
    text = efficacy.markdown(figures)
    if out:
        efficacy.write_report(out, figures, text)
    if prefect:
        efficacy.publish_prefect(figures, text)
    typer.echo(json.dumps(figures, indent=1) if json_output else text)


def calibrate_command(
    from_reviews: Annotated[
        bool, typer.Option("--from-reviews", help="Fit on the review batches' human verdicts.")
    ] = False,
    batch: Annotated[
        list[str], typer.Option(help="Batches to fit on (repeatable); default: every judged one.")
    ] = [],  # noqa: B006 - typer needs a literal default
    reviewer: Annotated[
        str | None, typer.Option(help="Fit on this reviewer's verdicts only.")
    ] = None,
    guardrails: Annotated[
        list[Path],
        typer.Option(
            help="Guardrails YAML files the verdicts' answers were checked with, merged in order "
            "(repeatable); default: the pipeline config's guardrails section."
        ),
    ] = [],  # noqa: B006 - typer needs a literal default
    max_correct_flagged: Annotated[
        float | None,
        typer.Option(
            min=0, max=1, help="Only settings that flag at most this share of the good drafts."
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="The overlay YAML to write (and OUT.json).")] = Path(
        "configs/guardrails-calibrated.yaml"
    ),
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Refit the gate (answer line, claim floor, lexical weight, the fast judge's accept line)
    on human verdicts, cross-validated by question, and write an overlay config."""
    from quality import calibrate, efficacy, review

    if not from_reviews:
        raise _fail("say where the labels come from: --from-reviews")
    settings = load_settings(config, set_)
    base = settings.stage_config("guardrails")
    if guardrails:
        base = _guardrails_from_files(guardrails)
    store = settings.artifact_store()
    try:
        loaded = _load_batches(store, batch)
    except review.ReviewError as exc:
        raise _fail(str(exc)) from exc
    items, labels = [], {}
    for entry in loaded:
        items += entry["items"]
        labels.update(efficacy.resolve(entry["verdicts"], reviewer)["labels"])
    try:
        result = calibrate.calibrate(items, labels, base, max_correct_flagged=max_correct_flagged)
    except calibrate.CalibrationError as exc:
        raise _fail(str(exc), 1) from exc
    sources = {
        "batches": [e["key"][:12] for e in loaded],
        "reviewer": reviewer or "all (agreeing verdicts)",
        "base": [str(p) for p in guardrails] or str(config),
    }
    calibrate.write_overlay(out, result, base, sources)
    cv = result["cross_validated"]
    fitted = result["fitted"]
    typer.echo(
        f"fitted on {result['drafts']} drafts ({result['bad']} bad, {result['questions']} "
        f"questions): answer_threshold {fitted['answer_threshold']}, claim_floor "
        f"{fitted['claim_floor']}, lexical_weight {fitted['lexical_weight']}, accept "
        f"{fitted['accept'] if result['accept_refitted'] else 'kept'}"
    )
    for name in ("base", "fitted"):
        f = cv[name]
        typer.echo(
            f"  out-of-fold {name:<6} F1 {f['f1']:.3f}  precision {f['precision']:.3f}  "
            f"recall {f['recall']:.3f}  correct flagged {f['correct_flagged']}"
        )
    if result["accept_note"]:
        typer.echo(f"  note: {result['accept_note']}")
    typer.echo(f"wrote {out} and {out.name}.json")


def _guardrails_from_files(paths: list[Path]):
    from flows.pipeline_config import ConfigError, _read_yaml
    from stages.guardrails import Config

    merged: dict = {}
    try:
        for path in paths:
            merged.update(_read_yaml(path))
        return Config(**merged)
    except (ConfigError, ValueError) as exc:
        raise _fail(f"guardrails config: {exc}") from exc


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
    app.command("calibrate")(calibrate_command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(review_app())
