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

# As scripts/test.sh sets it, so the two commands share one build of the dependencies.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

say "installing what is missing (scripts/setup.sh)"
# The demo does not use stellar-cli, so it skips that slow install.
ASSAY_SETUP_NO_STELLAR_CLI=1 scripts/setup.sh

# The dev profile: the CLI's tests build the same binary, so scripts/test.sh after this rebuilds nothing here.
say "building assay with the demo (cargo build -p assay-cli --features demo; the first build takes several minutes)"
cargo build --locked -q -p assay-cli --features demo

target="${CARGO_TARGET_DIR:-$root/target}"
# The demo names the contracts it loads (`assay demo --list-wasm`): one list, so this script and the demo
# never disagree. build-wasm.sh always runs: cargo rebuilds only what changed, so a module left by an older
# checkout is brought up to date rather than trusted.
mapfile -t packages < <("$target/debug/assay" demo --list-wasm)
[ "${#packages[@]}" -gt 0 ] || { say "assay demo --list-wasm named no contract"; exit 1; }
say "building the contracts the demo loads to WASM (scripts/build-wasm.sh ${packages[*]})"
scripts/build-wasm.sh "${packages[@]}" >&2

say "running: assay demo"
exec "$target/debug/assay" demo --wasm-dir target/wasm --eval-dir testdata/eval "$@"
