"""The docs site: it builds with --strict, its reference pages are generated from the code (every
command, every stage's every setting), and a headless browser renders the built index and a
reference page with their content, and lays out tables and code within a laptop's width."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_site_builds_strict_with_every_page_of_the_nav(site):
    for page in (
        "index.html",
        "getting-started/index.html",
        "reference/cli/index.html",
        "reference/configuration/index.html",
        "benchmarks/index.html",
        "models/cards/answerability-minilm-v4/index.html",
        "agents/check-runs/index.html",
        "operations/offline/index.html",
    ):
        assert (site / page).is_file(), page
    assert (site / "images" / "scale.png").stat().st_size > 1000


def test_the_cli_reference_lists_every_command_and_option():
    import typer.main

    from cli.app import app
    from scripts.gen_docs import cli_reference

    page = cli_reference()
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        if command.hidden:
            continue
        assert f"## `grounding {name}" in page, name
        for param in command.params:
            for opt in param.opts if param.param_type_name == "option" else []:
                assert f"`{opt}`" in page, (name, opt)


def test_the_configuration_reference_holds_every_stage_setting():
    from scripts.gen_docs import config_reference, field_comments
    from stages.catalog import STAGES

    page = config_reference()
    for name, module in STAGES.items():
        assert f"\n## {name}\n" in page
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for field in module.Config.model_fields:
            assert f"| `{field}` |" in section, (name, field)
    # a field without a Field description is described by the comment the source writes
    from stages.ingestion import Config

    assert "none" in field_comments(Config)["ocr_engine"]
    assert '| `ocr_engine` | `"rapidocr"` \\| `"none"` | `"rapidocr"` |  | Scanned' in page
    # and the value configs/pipeline.yaml sets, where it differs from the default
    assert '| `as_of` | date \\| None | `null` | `"2026-11-15"` |' in page


def _browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _rendered(browser: str, page: Path, profile: Path) -> str:
    """The page's DOM after a headless browser loaded it and ran its scripts."""
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_headless_browser_renders_the_index_and_a_reference_page(site, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip(
            "no headless browser: install Debian's chromium (apt-get install chromium) to run "
            "the docs render test; the site itself was built and checked above"
        )
    index = _rendered(browser, site / "index.html", tmp_path / "profile")
    assert "<h1" in index and "Getting started" in index
    assert "cited answers or structured refusals" in index
    assert 'class="md-nav' in index  # the theme's navigation was drawn
    reference = _rendered(browser, site / "reference/configuration/index.html", tmp_path / "p2")
    assert "Configuration reference" in reference
    assert "chunk_overlap" in reference and "<table" in reference


def test_the_readme_is_short_and_its_links_resolve():
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links, "the README links into the docs"
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert missing == []


OVERFLOW_PROBE = """
<script>
window.addEventListener("load", () => {
  const cut = [];
  const boxes = document.querySelectorAll(".md-typeset__scrollwrap, .md-typeset pre > code");
  boxes.forEach((box) => {
    if (box.scrollWidth > box.clientWidth + 1) {
      cut.push(box.textContent.replace(/\\s+/g, " ").trim().slice(0, 80));
    }
  });
  document.body.setAttribute("data-cut", JSON.stringify(cut));
});
</script>
"""


def test_no_table_or_code_block_is_cut_at_a_laptop_width(site, tmp_path):
    """At 1366 px no table or code block is wider than the page (nothing hides past the right
    edge behind a scroll bar): long lines wrap, names stay whole."""
    import json
    import re

    browser = _browser()
    if browser is None:
        pytest.skip("no headless browser: install Debian's chromium to run the layout check")
    cut = {}
    for number, page in enumerate(
        (
            "benchmarks/index.html",
            "reference/configuration/index.html",
            "reference/cli/index.html",
            "evaluation/index.html",
            "getting-started/index.html",
            "operations/offline/index.html",
            "operations/large-corpora/index.html",
        )
    ):
        source = site / page
        probe = source.with_name("layout-probe.html")
        html = source.read_text(encoding="utf-8")
        probe.write_text(html.replace("</body>", OVERFLOW_PROBE + "</body>"), encoding="utf-8")
        done = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={tmp_path / f'profile{number}'}",
                "--window-size=1366,900",
                "--virtual-time-budget=5000",
                "--dump-dom",
                probe.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        found = re.search(r'data-cut="([^"]*)"', done.stdout)
        assert found, f"{page}: the layout probe did not run"
        items = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        if items:
            cut[page] = items
    assert cut == {}
