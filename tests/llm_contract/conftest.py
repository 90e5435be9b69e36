"""The real-model contract runs only through `make llm-contract` (a llama.cpp build and a model load do
not fit `make test`'s budget): without MONGOMEM_LLM_CONTRACT=1 nothing here is collected."""

import os

collect_ignore_glob = [] if os.environ.get("MONGOMEM_LLM_CONTRACT") == "1" else ["test_*.py"]
