#!/usr/bin/env bash
# Generate the registry's TypeScript bindings with `stellar contract bindings typescript` from the built
# .wasm, into examples/typescript/bindings (not checked in: they always match the .wasm they came from),
# and compile them with examples/typescript/read.ts into examples/typescript/dist.
#
# Usage: scripts/ts-bindings.sh [REGISTRY_WASM]
#   REGISTRY_WASM defaults to target/wasm/assay_registry.wasm (scripts/build-wasm.sh assay-registry).
#   stellar-cli: ASSAY_STELLAR_CLI, else target/tools/bin/stellar (scripts/install-stellar-cli.sh), else PATH.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wasm="${1:-$root/target/wasm/assay_registry.wasm}"
example="$root/examples/typescript"

log() { printf 'ts-bindings: %s\n' "$*" >&2; }

[ -f "$wasm" ] || { log "no $wasm: build it with scripts/build-wasm.sh assay-registry"; exit 1; }
stellar="${ASSAY_STELLAR_CLI:-$root/target/tools/bin/stellar}"
if [ ! -x "$stellar" ]; then
    stellar="$(command -v stellar || true)"
    [ -n "$stellar" ] || { log "stellar-cli is missing: run scripts/install-stellar-cli.sh"; exit 1; }
fi

STELLAR_NO_UPDATE_CHECK=1 "$stellar" contract bindings typescript --wasm "$wasm" \
    --output-dir "$example/bindings" --overwrite >&2
if [ ! -d "$example/node_modules/@stellar/stellar-sdk" ] || [ ! -d "$example/node_modules/typescript" ]; then
    (cd "$example" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
(cd "$example" && npx --no-install tsc -p .) >&2
log "bindings in examples/typescript/bindings, compiled with read.ts into examples/typescript/dist"
