#!/usr/bin/env bash
# Build Soroban contracts to wasm32v1-none and place them at stable paths:
#
#     target/wasm/<crate_name>.wasm      (e.g. target/wasm/assay_registry.wasm)
#
# Usage: scripts/build-wasm.sh [PACKAGE...]     (default: every contract in the workspace)
#
# Toolchain, first that works:
#   1. `stellar contract build`, when the stellar CLI is installed;
#   2. rustup with the wasm32v1-none target installed;
#   3. Debian's rustc-web toolchain (installed with apt-get when missing and running as root),
#      which builds core/alloc from source with -Zbuild-std.
# Set ASSAY_WASM_TOOLCHAIN=stellar|rustup|debian to force one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

DEFAULT_PACKAGES=(assay-registry assay-gate-example)
# Fixture contracts join the default list when they exist in the workspace.
for fixture in vulnerable-token conformant-token defect-token; do
    if [ -f "fixtures/$fixture/Cargo.toml" ]; then DEFAULT_PACKAGES+=("$fixture"); fi
done
if [ "$#" -gt 0 ]; then packages=("$@"); else packages=("${DEFAULT_PACKAGES[@]}"); fi

TARGET=wasm32v1-none
build_dir="${ASSAY_WASM_TARGET_DIR:-$root/target/wasm-build}"
out_dir="$root/target/wasm"
mkdir -p "$out_dir"

log() { printf 'build-wasm: %s\n' "$*" >&2; }

debian_packages=(rustc-web rust-web-src cargo-web rust-web-llvm lld-22)

have_debian_toolchain() {
    [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -x /usr/lib/llvm-22/bin/ld.lld ] &&
        /usr/bin/rustc --print sysroot >/dev/null 2>&1 &&
        [ -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/src/rust/library/core" ]
}

install_debian_toolchain() {
    if [ "$(id -u)" != 0 ]; then
        log "the Debian wasm toolchain is missing; install it with:"
        log "  sudo apt-get update && sudo apt-get install -y ${debian_packages[*]}"
        exit 1
    fi
    log "installing the Debian wasm toolchain: ${debian_packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${debian_packages[@]}" >&2
}

pick_toolchain() {
    if [ -n "${ASSAY_WASM_TOOLCHAIN:-}" ]; then echo "$ASSAY_WASM_TOOLCHAIN"; return; fi
    if command -v stellar >/dev/null 2>&1; then echo stellar; return; fi
    if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
        echo rustup; return
    fi
    echo debian
}

toolchain="$(pick_toolchain)"
log "toolchain: $toolchain; packages: ${packages[*]}"

# build_with PACKAGE... [-- CARGO_ARGS...]: one cargo build with the chosen toolchain.
build_with() {
    local names=() extra=()
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do names+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    extra=("$@")
    local args=()
    for p in "${names[@]}"; do args+=(-p "$p"); done
case "$toolchain" in
stellar)
    for p in "${names[@]}"; do
        CARGO_TARGET_DIR="$build_dir" stellar contract build --package "$p" ${extra[@]+"${extra[@]}"} >&2
    done
    ;;
rustup)
    CARGO_TARGET_DIR="$build_dir" cargo build --locked --release --target "$TARGET" "${args[@]}" ${extra[@]+"${extra[@]}"} >&2
    ;;
debian)
    have_debian_toolchain || install_debian_toolchain
    # A flock keeps concurrent test binaries from racing one build directory.
    PATH="/usr/lib/llvm-22/bin:$PATH" \
        RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="${ASSAY_WASM_RUSTFLAGS:-}" \
        SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2=1 CARGO_TARGET_DIR="$build_dir" \
        flock "$out_dir/.lock" /usr/bin/cargo build --locked --release --target "$TARGET" \
        -Zbuild-std=core,alloc "${args[@]}" ${extra[@]+"${extra[@]}"} >&2
    ;;
*)
    log "unknown ASSAY_WASM_TOOLCHAIN '$toolchain' (expected stellar, rustup or debian)"
    exit 2
    ;;
esac
}

build_with "${packages[@]}"

for p in "${packages[@]}"; do
    name="${p//-/_}"
    src="$build_dir/$TARGET/release/$name.wasm"
    if [ ! -f "$src" ]; then
        log "expected $src after the build, but it is missing"
        exit 1
    fi
    cp "$src" "$out_dir/$name.wasm.tmp"
    mv "$out_dir/$name.wasm.tmp" "$out_dir/$name.wasm"
    printf '%s\t%s bytes\n' "target/wasm/$name.wasm" "$(stat -c %s "$out_dir/$name.wasm")"
done

# defect-token plants one defect per cargo feature: one build and one wasm per feature,
# target/wasm/defect_token_<feature>.wasm (the featureless defect_token.wasm is the control).
for p in "${packages[@]}"; do
    [ "$p" = defect-token ] || continue
    # Held across build and copy: the features share one output file in the build directory.
    exec 9>"$out_dir/.defect-token.lock"
    flock 9
    for feature in fee-on-transfer allowance-not-decremented approve-accumulates \
        burn-from-debits-spender zero-transfer-mints transfer-from-ignores-allowance; do
        build_with defect-token -- --features "$feature"
        out="defect_token_${feature//-/_}"
        cp "$build_dir/$TARGET/release/defect_token.wasm" "$out_dir/$out.wasm.tmp"
        mv "$out_dir/$out.wasm.tmp" "$out_dir/$out.wasm"
        printf '%s\t%s bytes\n' "target/wasm/$out.wasm" "$(stat -c %s "$out_dir/$out.wasm")"
    done
done
