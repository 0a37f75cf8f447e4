# The CUDA glossary. `make help` lists the targets.
# Site and test tools live in .venv (created on first use from requirements.lock);
# `make verify` uses the GPU node's own python3, which may have no registry to install from.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TERMS  ?= terms
export NO_MKDOCS_2_WARNING := 1

.DEFAULT_GOAL := help
.PHONY: help venv serve build check new export test lint schema verify links bench bench-tools bench-links clean

help: ## list the targets
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

venv: $(STAMP) ## create .venv with the pinned dependencies

serve: $(STAMP) ## build and serve the site on 127.0.0.1:8000; an edit to terms/, templates/, measurements/ rebuilds the pages it changes
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload --dirty

build: $(STAMP) ## check the terms, then build the site into site/ (mkdocs build --strict)
	$(BIN)/mkdocs build --strict --site-dir site

check: export CUDAGLOSS_TERMS := $(value TERMS)
check: $(STAMP) ## report every mistake in the term and measurement files as path:line:col (TERMS=folder to check another)
	$(BIN)/cudagloss check --strict "$$CUDAGLOSS_TERMS"

# The name, section and folder reach cudagloss in the environment as the text typed: never
# through a shell, never expanded by make. make exports a variable given on its command
# line, expanding it (a `$(shell ...)` in it would run), so those three are not exported.
ifeq ($(origin TERM),command line)
unexport TERM
endif
ifeq ($(origin SECTION),command line)
unexport SECTION
endif
ifeq ($(origin TERMS),command line)
unexport TERMS
endif
new: NEW_TERM_ORIGIN := $(origin TERM)
new: export CUDAGLOSS_NEW_TERM := $(value TERM)
new: export CUDAGLOSS_NEW_SECTION := $(value SECTION)
new: export CUDAGLOSS_NEW_TERMS := $(value TERMS)
new: $(STAMP) ## write terms/<slug>.yaml for a new term: make new TERM="Fat binary" [SECTION=slug]
	@# TERM is also the terminal's type in the environment: only a TERM given to make counts.
	@test "$(NEW_TERM_ORIGIN)" = "command line" || { echo 'usage: make new TERM="Fat binary" [SECTION=compilation]' >&2; exit 2; }
	$(BIN)/cudagloss new --from-env

export: export CUDAGLOSS_TERMS := $(value TERMS)
export: $(STAMP) ## write the whole glossary as export/glossary.md and export/llms.txt (the site publishes both too)
	$(BIN)/cudagloss export "$$CUDAGLOSS_TERMS" --out export

test: $(STAMP) ## run the test suite
	$(BIN)/python -m pytest

lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check src tests site_hooks verifier bench
	$(BIN)/mypy

schema: $(STAMP) ## regenerate schema/*.json from the model
	$(BIN)/cudagloss schema

verify: ## run the GPU experiments with this machine's own python3 (EXPERIMENT=id for one; ARGS=--list)
	PYTHONPATH=src:. $(PYTHON) -m verifier $(if $(EXPERIMENT),--experiment $(EXPERIMENT)) $(ARGS)

links: export CUDAGLOSS_TERMS := $(value TERMS)
links: $(STAMP) ## check every source URL, stamp reachable ones in the terms (ARGS=--force, --format json, --no-stamp)
	$(BIN)/cudagloss links "$$CUDAGLOSS_TERMS" $(ARGS)

# The other link checkers the benchmark compares against, kept out of .venv. Either may fail
# to install (no npm here, say): the benchmark then reports that tool as not installed.
TOOLS := bench/.tools
$(TOOLS)/venv/bin/linkchecker:
	$(PYTHON) -m venv $(TOOLS)/venv
	$(TOOLS)/venv/bin/python -m pip install --quiet --disable-pip-version-check LinkChecker==10.6.0
$(TOOLS)/node_modules/.bin/linkinator:
	npm install --silent --no-save --prefix $(TOOLS) linkinator@6.3.0

bench-tools: ## install LinkChecker (PyPI) and linkinator (npm) into bench/.tools for the benchmarks
	-@$(MAKE) --no-print-directory $(TOOLS)/venv/bin/linkchecker
	-@$(MAKE) --no-print-directory $(TOOLS)/node_modules/.bin/linkinator

bench: $(STAMP) bench-tools ## run the benchmarks in bench/ (the GPU one only where there is a GPU) and write bench/RESULTS.md
	$(BIN)/python bench/links.py
	$(BIN)/python bench/build.py
	$(BIN)/python bench/byline.py
	$(BIN)/python bench/serve.py
	PYTHONPATH=src:. $(PYTHON) bench/verify.py || test $$? -eq 3
	$(BIN)/python bench/report.py

bench-links: $(STAMP) bench-tools ## our link checker against LinkChecker and linkinator on 1,000 local URLs (ARGS=--urls N)
	$(BIN)/python bench/links.py $(ARGS)

clean: ## remove the built site and caches
	rm -rf site export .pytest_cache .mypy_cache .ruff_cache
