#!/usr/bin/env bash
# Install stellar-cli (the `stellar` command) for the tests that run the docs' `stellar` lines
# (attester/cli/tests/it/docs_commands.rs) once per machine, outside any checkout, and link it into the
# checkout as target/tools/bin/stellar — NOT onto PATH: with `stellar` on PATH, scripts/build-wasm.sh would
# prefer `stellar contract build`.
#
#     ${ASSAY_TOOLS_ROOT:-${XDG_DATA_HOME:-~/.local/share}/assay/tools}/stellar-cli-<VERSION>/bin/stellar
#
# The install directory names the version, so a pinned version already on the machine is reused by every
# clone (a fresh CI clone links it in seconds), and a new pin installs beside the old one. The first install
# compiles stellar-cli from crates.io with `cargo install --locked --debug`: unoptimised, without debug info.
# On the 2-core build machine (2026-12-01) that took 9 min of CPU against 66 min for the release build, and
# the docs' `stellar` lines ran in the same 21 s with either binary, since the CLI spends its time waiting on
# the network. The build goes to a scratch directory and the binary is moved into place whole, so an
# interrupted install leaves nothing that looks installed.
#
# Usage: scripts/install-stellar-cli.sh          (prints nothing when the pinned version is already linked)
set -euo pipefail

VERSION=28.1.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${ASSAY_TOOLS_ROOT:-${XDG_DATA_HOME:-$HOME/.local/share}/assay/tools}"
install_dir="$tools/stellar-cli-$VERSION"
bin="$install_dir/bin/stellar"
link="$root/target/tools/bin/stellar"

log() { printf 'install-stellar-cli: %s\n' "$*" >&2; }
is_pinned() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "stellar $VERSION"; }

if ! is_pinned "$bin"; then
    command -v cargo >/dev/null 2>&1 || { log "cargo is missing; install Rust (https://rustup.rs)"; exit 1; }
    mkdir -p "$tools"
    # One install at a time per machine: two clones set up at once share the install directory.
    exec 8>"$tools/.stellar-cli-$VERSION.lock"
    flock 8
    if ! is_pinned "$bin"; then
        # --no-default-features leaves out the OS keyring (libdbus) and Ledger (libudev) support, which the
        # tests do not use, so no system libraries beyond Rust's are needed.
        log "installing stellar-cli $VERSION into $install_dir (once per machine; cargo install --locked --debug, about 10 minutes on 2 cores)"
        start=$(date +%s)
        scratch="$(mktemp -d "$tools/.stellar-cli-$VERSION.XXXXXX")"
        # A separate target dir keeps this build from contending for the workspace's build lock.
        CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_DEV_STRIP=debuginfo CARGO_TARGET_DIR="$scratch/build" \
            cargo install --locked --debug --quiet --root "$scratch/root" \
            stellar-cli --version "$VERSION" --no-default-features >&2
        rm -rf "$install_dir"
        mkdir -p "$install_dir"
        mv "$scratch/root/bin" "$install_dir/bin"
        rm -rf "$scratch"
        log "installed $("$bin" --version | head -1) in $(($(date +%s) - start)) s"
    fi
fi

if [ "$(readlink "$link" 2>/dev/null)" != "$bin" ]; then
    mkdir -p "$(dirname "$link")"
    ln -sfn "$bin" "$link"
fi
