"""`grounding ingest`: a corpus folder ingested and indexed (or checked with `--check`), one line
per file saying what became of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.options import ConfigOption, SetOption, load_settings

console = Console()


def ingest(
    folder: Annotated[
        Path | None,
        typer.Argument(help="Corpus folder (default: the config's corpus).", show_default=False),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Dry run: list per file what would be ingested with which metadata, and why "
            "any file would not be; writes nothing.",
        ),
    ] = False,
    config: ConfigOption = Path("configs/pipeline.yaml"),
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Ingest and index a corpus folder, listing every file: ingested (doc id, title, tier,
    permission groups, date, encoding, chunks) or not, with the reason.

    Files without a catalog.yaml entry or sidecar get the defaults from
    stages.ingestion (default_trust_tier, default_permission_set), the title from the
    document and the date from the file. Exits 1 when no file is usable.
    """
    from flows.executor import corpus_snapshot
    from stages import ingestion
    from stages.source_selection import accepting_query_types

    settings = load_settings(config, set_)
    root = (folder or settings.corpus).resolve()
    if not root.is_dir():
        console.print(f"[red]not a folder:[/red] {root}")
        raise typer.Exit(2)
    ingest_config = settings.stage_config("ingestion")
    if check:  # writes nothing, not even the stat cache
        snapshot = ingestion.snapshot_corpus(
            root,
            ingest_config.max_file_bytes,
            follow_symlinks_outside_root=ingest_config.follow_symlinks_outside_root,
        )
    else:  # the run's own snapshot below then reuses these hashes
        snapshot = corpus_snapshot(settings, root)
    if check:
        rows = ingestion.check(snapshot, ingest_config)
    else:
        from flows.executor import run_shared_stages

        settings.corpus = root
        results = run_shared_stages(settings)
        rows = _rows_from_artifact(settings.artifact_store(), results["ingestion"].ref, snapshot)
    _print_ingest_rows(rows, root)
    usable = [r for r in rows if r["ingested"]]
    console.print(
        f"{len(usable)} of {len(rows)} files ingested | "
        f"{sum(1 for r in rows if r['error_kind'])} not ingested | "
        f"{sum(len(r['warnings']) for r in rows)} warnings"
    )
    policy = settings.stage_config("source_selection")
    for tier in sorted({r["trust_tier"] for r in usable}):
        accepted = accepting_query_types(policy, tier)
        count = sum(1 for r in usable if r["trust_tier"] == tier)
        if not accepted:
            console.print(
                f"[yellow]warning:[/yellow] {count} documents at tier {tier}: no query type "
                "accepts that tier, so they can never be cited (set trust_tier in catalog.yaml "
                "or stages.ingestion.default_trust_tier)"
            )
        elif accepted != set(policy.query_types):
            console.print(
                f"note: {count} documents at tier {tier} are citable only for query types "
                f"{', '.join(sorted(accepted))}"
            )
    if not usable:
        console.print("[red]nothing usable:[/red] no file in this folder can be ingested")
        raise typer.Exit(1)


def _rows_from_artifact(store, ref, snapshot) -> list[dict]:
    """The per-file rows of `ingestion.check`, read back from a built ingestion artifact."""
    from stages import ingestion

    documents = store.read_table(ref, "documents").drop_columns(["text"]).to_pylist()
    chunks = store.read_table(ref, "chunks").select(["doc_id"]).column("doc_id").to_pylist()
    errors = store.read_table(ref, "ingestion_errors").to_pylist()
    by_path = {d["path"]: d for d in documents}
    rows = []
    paths = [p for p in snapshot.column("path").to_pylist() if p != ingestion.FILE_DATES_PATH]
    for path in paths + sorted({e["path"] for e in errors} - set(paths)):
        doc = by_path.get(path)
        problems = [e for e in errors if e["path"] == path]
        failed = [e for e in problems if e["severity"] == "error"]
        rows.append(
            {
                "path": path,
                "ingested": doc is not None,
                "doc_id": doc and doc["doc_id"],
                "title": doc and doc["title"],
                "trust_tier": doc and doc["trust_tier"],
                "permission_set": doc and doc["permission_set"],
                "date": doc and (doc["last_modified"] or doc["published_at"]),
                "encoding": None,
                "chunks": chunks.count(doc["doc_id"]) if doc else 0,
                "error_kind": failed[0]["error_kind"] if failed else None,
                "reason": "; ".join(e["message"] for e in failed) or None,
                "warnings": [
                    f"{e['error_kind']}: {e['message']}" for e in problems if e not in failed
                ],
            }
        )
    return rows


def _print_ingest_rows(rows: list[dict], root: Path) -> None:
    """One line per file (greppable, any terminal width), its warnings indented below it."""
    from stages import ingestion

    console.print(f"corpus {root}", markup=False)
    defaulted = 0
    for row in rows:
        if row["ingested"]:
            details = [
                f"tier {row['trust_tier']}",
                f"groups {', '.join(row['permission_set'])}",
                f"dated {row['date'] or '-'}",
                *([row["encoding"]] if row["encoding"] else []),
                f"{row['chunks']} chunks",
            ]
            described = f"{row['doc_id']} {row['title']!r} ({'; '.join(details)})"
            line = f"ingested  {row['path']} -> {described}"
        elif row["error_kind"]:
            line = f"NOT       {row['path']}: {row['error_kind']}: {row['reason']}"
        elif row["path"].endswith(ingestion.SIDECAR_SUFFIXES + ingestion.CATALOG_NAMES):
            line = f"metadata  {row['path']}"
        else:
            line = f"skipped   {row['path']}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        for warning in row["warnings"]:
            if warning.startswith("missing_metadata:"):
                defaulted += 1
                continue
            console.print(f"          ! {warning}", markup=False, highlight=False, soft_wrap=True)
    if defaulted:
        console.print(
            f"{defaulted} files have no catalog entry or sidecar: default tier, groups and the "
            "file's date were used (see README, Corpus metadata)",
            markup=False,
            highlight=False,
        )
