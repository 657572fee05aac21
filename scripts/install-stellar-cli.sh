#!/usr/bin/env bash
# Install stellar-cli (the `stellar` command) for the tests that run the docs' `stellar` lines
# (attester/cli/tests/it/docs_commands.rs), into target/tools/bin/stellar — NOT onto PATH: with `stellar` on
# PATH, scripts/build-wasm.sh would prefer `stellar contract build`.
#
# Idempotent: does nothing when target/tools/bin/stellar already reports the pinned version. The first
# install compiles stellar-cli from crates.io with `cargo install --locked --debug`: unoptimised, without
# debug info. On the 2-core build machine (2026-12-01) that took 9 min of CPU against 66 min for the release
# build, and the docs' `stellar` lines ran in the same 21 s with either binary, since the CLI spends its
# time waiting on the network.
#
# Usage: scripts/install-stellar-cli.sh          (ASSAY_TOOLS_ROOT overrides the install root)
set -euo pipefail

VERSION=28.1.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${ASSAY_TOOLS_ROOT:-$root/target/tools}"
bin="$tools/bin/stellar"

log() { printf 'install-stellar-cli: %s\n' "$*" >&2; }

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "stellar $VERSION"; then
    exit 0
fi

command -v cargo >/dev/null 2>&1 || { log "cargo is missing; install Rust (https://rustup.rs)"; exit 1; }
# --no-default-features leaves out the OS keyring (libdbus) and Ledger (libudev) support, which the tests
# do not use, so no system libraries beyond Rust's are needed.
log "installing stellar-cli $VERSION into $tools (cargo install --locked --debug; about 10 minutes on 2 cores)"
start=$(date +%s)
# A separate target dir keeps this build from contending for the workspace's build lock.
CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_DEV_STRIP=debuginfo CARGO_TARGET_DIR="$tools/build" \
    cargo install --locked --debug --quiet --root "$tools" \
    stellar-cli --version "$VERSION" --no-default-features >&2
rm -rf "$tools/build"
log "installed $("$bin" --version | head -1) in $(( $(date +%s) - start )) s"
