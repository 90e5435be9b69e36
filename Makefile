# The two commands: `make dev` and `make test`. Both create the environment when it is missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: dev test lint setup opensearch bench clean sam-validate sam-build

$(STAMP): pyproject.toml layers/core/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

setup: $(STAMP)

dev: $(STAMP)
	$(BIN)/mongomem dev --port 3000

test: $(STAMP) opensearch
	$(BIN)/python -m pytest $(PYTEST_ARGS)

opensearch:
	@if [ -x tools/opensearch/prepare.sh ]; then tools/opensearch/prepare.sh; fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check layers functions tests bench tools
	$(BIN)/mypy

sam-validate: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[sam]"
	$(BIN)/sam validate --lint --region eu-west-1

sam-build: sam-validate
	$(BIN)/sam build --region eu-west-1

bench: $(STAMP)
	$(BIN)/python bench/record_turn.py

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
