#!/bin/sh
# install-references.sh - the independent references the tests compare against,
# pinned in tests/reference/package-lock.json, into tests/reference/node_modules
# (ignored by git): node-llama-cpp with llama.cpp's prebuilt x86-64 Linux CPU
# libraries, @huggingface/jinja, and the official openai client.
# Optional (GPU) packages and install scripts are left out: nothing is built.
set -eu
cd "$(dirname "$0")/../tests/reference"
stamp=node_modules/.installed-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-references: npm is missing (install Node.js 20 with npm: sh tools/install-deps.sh)" >&2
    exit 1
fi
npm install --no-save --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
