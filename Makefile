# Two commands for a newcomer: `make run` talks to the board, `make test` runs the tests.
# Both create ./.venv on first use (Python >= 3.11 required) and install Sabha into it; `make test`
# adds the test tools (pytest, mypy, ruff, mkdocs ...) to it the first time. `make run` also makes your own
# board the first time (docs/advisors.md: Where your board lives).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test docs bench clean

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Sabha needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(BIN)/.installed-test: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

run: $(BIN)/.installed sabha.yaml
	@$(BIN)/sabha chat

# Your own board, made once (git-ignored): sabha.yaml, my-workspace/ (your souls), sessions/.
sabha.yaml: | $(BIN)/.installed
	$(BIN)/sabha init .

# The tests run in parallel (pytest-xdist), 4 workers whatever the core count: most tests wait on a real
# `sabha run` subprocess, fake servers or a model held at a gate, so on 2 cores 4 workers took 397-419 s where
# one per core took 470-541 s (measured 2026-11-28, every test passing either way). Tests marked
# @pytest.mark.xdist_group(...) run one after the other on one worker (--dist loadgroup).
# PYTEST_XDIST_AUTO_NUM_WORKERS=1 make test runs them on one worker.
export PYTEST_XDIST_AUTO_NUM_WORKERS ?= 4
test: $(BIN)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadgroup

# The docs site (MkDocs, Material theme) into site/ (git-ignored). --strict: a broken link or anchor, or a page
# left out of the nav, fails the build. The config reference and the source tree are written while it builds.
docs: $(BIN)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/turn_overhead.py

clean:
	rm -rf $(VENV)
