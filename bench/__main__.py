"""`python -m bench [names...]`: run benchmarks, write bench/results/*.json and README.md."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from bench import BENCHES, common
from bench import results_page as report


def parser() -> argparse.ArgumentParser:
    listing = "\n".join(
        f"  {name:<12} {importlib.import_module(module).DESCRIPTION}"
        for name, module in BENCHES.items()
    )
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmarks for retrieval and rerank. With no names, runs all of them.",
        epilog=f"benches:\n{listing}\n\nResults: bench/results/<name>.json and README.md. "
        "Benches that need ../shared/datasets skip with a message when it is absent.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("names", nargs="*", metavar="NAME", help=f"benches to run: {', '.join(BENCHES)}")
    p.add_argument("--results", type=Path, default=common.RESULTS, help="output folder")
    p.add_argument(
        "--datasets", type=Path, default=None, help="public data sets folder (../shared/datasets)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="STAGE.FIELD=VALUE",
        help="override a stage setting for scifact/calibration, e.g. rerank.mmr_lambda=1.0",
    )
    p.add_argument(
        "--sizes",
        type=lambda text: [int(n) for n in text.split(",")],
        default=None,
        metavar="N,N",
        help="corpus sizes for `scale` (default 1000,5000; e.g. 1000,5000,20000)",
    )
    p.add_argument("--rebuild-index", action="store_true", help="ignore the bench/.cache index")
    p.add_argument("--list", action="store_true", help="list the benches and exit")
    return p


def written_since(folder: Path, since: float) -> list[Path]:
    """The result files in `folder` written at or after `since` (epoch seconds)."""
    return sorted(p for p in Path(folder).glob("*.json") if p.stat().st_mtime >= since)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list:
        for name, module in BENCHES.items():
            print(f"{name:<12} {importlib.import_module(module).DESCRIPTION}")
        return 0
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        parser().error(f"unknown bench(es) {unknown}; choose from {list(BENCHES)}")
    if args.datasets:
        common.DATASETS = args.datasets.resolve()
    overrides = common.parse_overrides(args.overrides)

    from stages.common import offline, progress

    offline.apply_offline_environment()
    progress.enable(True)  # the stages' own rich progress bars
    try:
        return _run(args, overrides)
    finally:
        progress.enable(False)


def _run(args: argparse.Namespace, overrides: dict) -> int:
    names = args.names or list(BENCHES)
    outcome: dict[str, str] = {}
    for name in names:
        module = importlib.import_module(BENCHES[name])
        common.console.rule(f"[bold]{name}[/]: {module.DESCRIPTION}")
        started, wall_started = time.perf_counter(), time.time()
        try:
            result = module.run(
                results_dir=args.results,
                overrides=overrides,
                rebuild_index=args.rebuild_index,
                sizes=args.sizes,
            )
        except common.Skipped as skipped:
            message = common.skip_message(name, str(skipped))
            common.console.print(message, style="yellow", soft_wrap=True, markup=False)
            outcome[name] = "skipped"
            continue
        elapsed = time.perf_counter() - started
        common.console.print(module.summarize(result), markup=False, soft_wrap=True)
        # a bench may name its file after its settings (llm_answers-ask, answerability-fast)
        written = [str(p) for p in written_since(args.results, wall_started)]
        common.console.print(
            f"[green]{name} done in {elapsed:.1f} s[/] → {', '.join(written) or 'no file'}"
        )
        outcome[name] = f"ok ({elapsed:.0f} s)"
    readme = report.write_readme(args.results)
    common.console.print(f"summary: {outcome}; {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
