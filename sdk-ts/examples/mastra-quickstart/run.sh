#!/usr/bin/env bash
# The quickstart a new user follows: pack @mongomem/client, install it into an empty Mastra project, run an
# agent (mock model) against a running `make dev` (or $MONGOMEM_URL). Prints what the agent recorded,
# the working memory it read and what it recalled across threads.
#   sdk-ts/examples/mastra-quickstart/run.sh            # make dev must be running
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sdk="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export MONGOMEM_URL="${MONGOMEM_URL:-http://127.0.0.1:3000}"

# the package as npm would publish it (ESM + type declarations)
[ -d "$sdk/node_modules" ] || (cd "$sdk" && npm ci --no-audit --no-fund --loglevel=error)
tarball="$(cd "$sdk" && npm pack --silent --pack-destination "$work" | tail -1)"
echo "packed $tarball ($(du -k "$work/$tarball" | cut -f1) kB)"

# an empty project, then the three installs a Mastra user makes
mkdir "$work/app" && cd "$work/app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work/$tarball" @mastra/core@1.71.0 ai@7.0.185 zod@4.6.7 2>&1 | grep -v EBADENGINE | grep -v "^npm warn  " || true
echo "installed: $(npm ls --depth=0 2>/dev/null | tail -n +2 | sed 's/^[^a-z@]*//' | tr '\n' ' ')"
cp "$here/agent.mjs" .
node agent.mjs
