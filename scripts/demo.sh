#!/usr/bin/env bash
# The whole pipeline offline, from a fresh clone: install what is missing, build the contracts to WASM and the
# `assay` binary, then run `assay demo` (local network, recorded sources replayed over local HTTPS).
# Exits with the demo's code: 0 only when every step had its stated outcome.
#
# Usage: scripts/demo.sh [extra `assay demo` options]
# Set CARGO_TARGET_DIR to build elsewhere (default: target/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'demo.sh: %s\n' "$*" >&2; }

say "installing what is missing (scripts/setup.sh)"
# The demo does not use stellar-cli, so it skips that slow install.
ASSAY_SETUP_NO_STELLAR_CLI=1 scripts/setup.sh

wasm=(assay_registry assay_gate_example conformant_token vulnerable_token)
missing=0
for w in "${wasm[@]}"; do [ -f "target/wasm/$w.wasm" ] || missing=1; done
if [ "$missing" = 1 ]; then
    say "building the contracts to WASM (scripts/build-wasm.sh)"
    # Only what the demo loads: the default list also builds every test fixture.
    scripts/build-wasm.sh assay-registry assay-gate-example conformant-token vulnerable-token
fi

# The dev profile shares its build with scripts/test.sh (the release profile is tuned for contract size).
say "building assay with the demo (cargo build -p assay-cli --features demo; the first build takes several minutes)"
cargo build --locked -q -p assay-cli --features demo

target="${CARGO_TARGET_DIR:-$root/target}"
say "running: assay demo"
exec "$target/debug/assay" demo --wasm-dir target/wasm --eval-dir testdata/eval "$@"
