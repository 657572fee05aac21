#!/usr/bin/env bash
# Build Soroban contracts to wasm32v1-none and place them at stable paths:
#
#     target/wasm/<crate_name>.wasm      (e.g. target/wasm/assay_registry.wasm)
#
# Usage: scripts/build-wasm.sh [PACKAGE...]     (default: every contract in the workspace)
#        `defect-token` as a PACKAGE builds conformant-token's planted defects, `power-token`
#        the power fixtures, one build per cargo feature, and `third-party` every token of the
#        fixtures/third-party workspace (its own soroban-sdk and Cargo.lock) as tp_<name>.wasm.
#        `example-token` builds examples/token (its own workspace) as example_token.wasm;
#        ASSAY_EXAMPLE_TOKEN_DIR builds a copy of it instead, ASSAY_EXAMPLE_TOKEN_NAME names the output.
#
# Toolchain, first that works:
#   1. `stellar contract build`, when the stellar CLI and the rustup wasm32v1-none target are installed;
#   2. rustup with the wasm32v1-none target installed;
#   3. Debian's rustc-web toolchain (installed with apt-get when missing and running as root),
#      which builds core/alloc from source with -Zbuild-std.
# Set ASSAY_WASM_TOOLCHAIN=stellar|rustup|debian to force one.
#
# Every .wasm then has its contract spec shaken: soroban-sdk 29 writes an interface entry for every
# type, error and event it knows (its own auth types included) and marks the ones that reach the
# contract's boundary; `scripts/spec-shake` (soroban-spec's marker matching, as `stellar contract
# build` does) drops the unmarked ones. The SDK refuses to build for WASM unless the build system
# promises this step (SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2), so it is never skipped.
#
# Then it goes through binaryen's `wasm-opt -Oz` (Debian package binaryen, installed with
# the Debian toolchain) when it is available: about a quarter smaller and cheaper to instantiate on
# chain. It keeps to the features wasm32v1-none emits (MVP + mutable-globals), so it introduces no
# instruction the Soroban VM refuses, and it keeps the contract spec and meta sections. Without
# wasm-opt the build still succeeds with a warning; ASSAY_WASM_OPT=0 skips the step.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

DEFAULT_PACKAGES=(assay-registry assay-verdict-store assay-gate-example)
# Fixture contracts join the default list when they exist in the workspace.
for fixture in vulnerable-token conformant-token read-floor upgradable-token power-ledger loose-store; do
    if [ -f "fixtures/$fixture/Cargo.toml" ]; then DEFAULT_PACKAGES+=("$fixture"); fi
done
if [ -f fixtures/conformant-token/Cargo.toml ]; then DEFAULT_PACKAGES+=(defect-token); fi
if [ -f fixtures/power-token/Cargo.toml ]; then DEFAULT_PACKAGES+=(power-token); fi
if [ -f fixtures/third-party/Cargo.toml ]; then DEFAULT_PACKAGES+=(third-party); fi
if [ "$#" -gt 0 ]; then packages=("$@"); else packages=("${DEFAULT_PACKAGES[@]}"); fi
# `defect-token` names no package: it asks for the planted-defect builds of conformant-token
# (one per cargo feature, at the end of this script). `power-token` is a package built once per
# power feature instead of once.
cargo_packages=()
defect_builds=false
power_builds=false
third_party_builds=false
example_token_builds=false
for p in "${packages[@]}"; do
    case "$p" in
    defect-token) defect_builds=true ;;
    power-token) power_builds=true ;;
    third-party) third_party_builds=true ;;
    example-token) example_token_builds=true ;;
    *) cargo_packages+=("$p") ;;
    esac
done

TARGET=wasm32v1-none
# Contracts build under the workspace's `contract` profile (size-tuned, aborting); `release` is the host's.
PROFILE=contract
# Both the target and the build directory, so a developer's `build.build-dir` setting never makes two checkouts
# share (and overwrite) contract artifacts, whose names carry no hash.
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

# The wasm-opt to use, or nothing: on PATH, else from Debian's binaryen when apt is usable as root.
find_wasm_opt() {
    [ "${ASSAY_WASM_OPT:-1}" = 0 ] && return 0
    if ! command -v wasm-opt >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing binaryen (wasm-opt) from Debian"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binaryen >&2 ||
            { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binaryen >&2; } || true
    fi
    command -v wasm-opt || true
}

pick_toolchain() {
    if [ -n "${ASSAY_WASM_TOOLCHAIN:-}" ]; then echo "$ASSAY_WASM_TOOLCHAIN"; return; fi
    # `stellar contract build` compiles with rustup's wasm32v1-none target, so it is only usable when
    # that target is installed; a stellar CLI on PATH alone is not enough.
    if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
        if command -v stellar >/dev/null 2>&1; then echo stellar; else echo rustup; fi
        return
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
    # Each contract is compiled as a cdylib only, one `cargo rustc` per package, as `stellar contract
    # build` does. `cargo build` would compile the crate's declared `["cdylib", "rlib"]` in one rustc
    # run, and that run leaves the cdylib with code LTO would otherwise have removed (registry: 14,979
    # code bytes before wasm-opt instead of 6,432).
    local p
    case "$toolchain" in
    stellar)
        for p in "${names[@]}"; do
            CARGO_TARGET_DIR="$build_dir" CARGO_BUILD_BUILD_DIR="$build_dir" stellar contract build --profile "$PROFILE" --package "$p" ${extra[@]+"${extra[@]}"} >&2
        done
        ;;
    rustup)
        for p in "${names[@]}"; do
            # soroban-sdk refuses a WASM build without this promise; install_wasm keeps it.
            RUSTFLAGS="${ASSAY_WASM_RUSTFLAGS:-}" SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2=1 \
                CARGO_TARGET_DIR="$build_dir" CARGO_BUILD_BUILD_DIR="$build_dir" cargo rustc --locked --profile "$PROFILE" --target "$TARGET" \
                -p "$p" --crate-type=cdylib ${extra[@]+"${extra[@]}"} >&2
        done
        ;;
    debian)
        have_debian_toolchain || install_debian_toolchain
        for p in "${names[@]}"; do
            # The promise to shake the spec is kept by install_wasm below (scripts/spec-shake).
            PATH="/usr/lib/llvm-22/bin:$PATH" \
                RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="${ASSAY_WASM_RUSTFLAGS:-}" \
                SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2=1 CARGO_TARGET_DIR="$build_dir" CARGO_BUILD_BUILD_DIR="$build_dir" \
                /usr/bin/cargo rustc --locked --profile "$PROFILE" --target "$TARGET" \
                -Zbuild-std=core,alloc -p "$p" --crate-type=cdylib ${extra[@]+"${extra[@]}"} >&2
        done
        ;;
    *)
        log "unknown ASSAY_WASM_TOOLCHAIN '$toolchain' (expected stellar, rustup or debian)"
        exit 2
        ;;
    esac
}

# Held from the first build to the last copy: the defect builds share conformant-token's output
# file in the build directory, so a concurrent run must never copy it between two builds.
exec 9>"$out_dir/.build.lock"
flock 9

if [ "${#cargo_packages[@]}" -gt 0 ]; then build_with "${cargo_packages[@]}"; fi

wasm_opt="$(find_wasm_opt)"
if [ -z "$wasm_opt" ] && [ "${ASSAY_WASM_OPT:-1}" != 0 ]; then
    log "wasm-opt not found: contracts are left unoptimised (install binaryen to get the documented sizes)"
fi

# The spec shaker, a host binary of this workspace, built into its own target directory: a test that
# runs this script while `cargo test` holds the workspace's build lock must not wait on that lock.
spec_shake="$root/target/spec-shake/debug/spec-shake"
host_cargo=(cargo)
if ! command -v cargo >/dev/null 2>&1; then host_cargo=(env RUSTC=/usr/bin/rustc /usr/bin/cargo); fi
[ -x "$spec_shake" ] || log "building scripts/spec-shake (once; about a minute)"
CARGO_TARGET_DIR="$root/target/spec-shake" "${host_cargo[@]}" build --locked --quiet -p assay-spec-shake >&2 ||
    { log "could not build scripts/spec-shake (cargo build -p assay-spec-shake)"; exit 1; }

# install SRC NAME [SPEC_SHAKE_ARGS...]: shake and optimise SRC into target/wasm/NAME.wasm through
# private temporary files, so a concurrent reader never sees a partial .wasm.
install_wasm() {
    local src="$1" name="$2" tmp shaken
    shift 2
    tmp="$(mktemp "$out_dir/.$name.XXXXXX")"
    shaken="$(mktemp "$out_dir/.$name.shaken.XXXXXX")"
    "$spec_shake" "$@" "$src" "$shaken" || { rm -f "$tmp" "$shaken"; exit 1; }
    if [ -n "$wasm_opt" ]; then
        "$wasm_opt" -Oz --converge --mvp-features --enable-mutable-globals "$shaken" -o "$tmp"
        rm -f "$shaken"
    else
        mv "$shaken" "$tmp"
    fi
    chmod 0644 "$tmp"
    mv "$tmp" "$out_dir/$name.wasm"
    printf '%s\t%s bytes\n' "target/wasm/$name.wasm" "$(stat -c %s "$out_dir/$name.wasm")"
}

for p in ${cargo_packages[@]+"${cargo_packages[@]}"}; do
    name="${p//-/_}"
    src="$build_dir/$TARGET/$PROFILE/$name.wasm"
    if [ ! -f "$src" ]; then
        log "expected $src after the build, but it is missing"
        exit 1
    fi
    install_wasm "$src" "$name"
done

# The planted-defect builds: conformant-token with one defect feature each, installed as
# target/wasm/defect_token_<feature>.wasm (the featureless conformant_token.wasm is their control).
if $defect_builds; then
    for feature in fee-on-transfer allowance-not-decremented approve-accumulates \
        burn-from-debits-spender zero-transfer-mints transfer-from-ignores-allowance \
        transfer-skips-auth transfer-from-skips-auth approve-skips-auth burn-skips-auth \
        burn-from-skips-auth transfer-event-swaps-parties approve-event-omits-expiry \
        burn-emits-no-event approve-accepts-past-expiry transfer-pulls-xlm; do
        build_with conformant-token -- --features "$feature"
        install_wasm "$build_dir/$TARGET/$PROFILE/conformant_token.wasm" "defect_token_${feature//-/_}"
    done
fi

# The power fixtures (fixtures/power-token): a correct token plus one admin power per cargo feature,
# installed as target/wasm/power_token_<feature>.wasm; the featureless build is
# target/wasm/power_token_control.wasm. `hidden-clawback` exports `clawback` but its spec entry is
# removed here, after the build: the host calls exports by name, the spec is only metadata.
if $power_builds; then
    # Every feature the crate declares (its [features] table), after the featureless control.
    power_features="$(sed -n '/^\[features\]/,/^\[/s/^\([a-z-]*\) = \[\]$/\1/p' fixtures/power-token/Cargo.toml)"
    for feature in control $power_features; do
        if [ "$feature" = control ]; then build_with power-token; else build_with power-token -- --features "$feature"; fi
        shake_args=()
        if [ "$feature" = hidden-clawback ]; then shake_args=(--drop-fn clawback); fi
        install_wasm "$build_dir/$TARGET/$PROFILE/power_token.wasm" "power_token_${feature//-/_}" ${shake_args[@]+"${shake_args[@]}"}
    done
fi

# The third-party tokens (fixtures/third-party/README.md): a workspace of its own, with its own
# Cargo.lock and soroban-sdk (OpenZeppelin's stellar-tokens 0.8.0 needs soroban-sdk 28), built in
# its own build directory into target/wasm/tp_<name>.wasm (package tp-<name>).
if $third_party_builds; then
    tp_manifest="$root/fixtures/third-party/Cargo.toml"
    tp_members="$(sed -n '/^members = \[/,/^\]/s/^ *"\([a-z0-9-]*\)",$/\1/p' "$tp_manifest")"
    for member in $tp_members; do
        package="tp-$member"
        build_dir="$build_dir-third-party" build_with "$package" -- --manifest-path "$tp_manifest"
        install_wasm "$build_dir-third-party/$TARGET/$PROFILE/${package//-/_}.wasm" "${package//-/_}"
    done
fi

# The example token (examples/token, docs/integrating.md): a token author's project with its own workspace
# and Cargo.lock, built with the `release` profile its manifest declares (as `stellar contract build` does),
# in its own build directory, into target/wasm/example_token.wasm. ASSAY_EXAMPLE_TOKEN_DIR builds a copy of
# the project (assay-testkit's planted-defect test), ASSAY_EXAMPLE_TOKEN_NAME names its output. A copy builds
# in a directory of its own: a cdylib's file name carries no hash, so the copy's build would overwrite
# deps/example_token.wasm under the original's still-fresh fingerprint, and the next build of the original
# would install the copy's (defective) module as example_token.wasm.
if $example_token_builds; then
    example_dir="${ASSAY_EXAMPLE_TOKEN_DIR:-$root/examples/token}"
    example_name="${ASSAY_EXAMPLE_TOKEN_NAME:-example_token}"
    example_build="$build_dir-example-token"
    if [ -n "${ASSAY_EXAMPLE_TOKEN_DIR:-}" ]; then
        example_build="$build_dir-example-token-copy"
    fi
    build_dir="$example_build" PROFILE=release build_with example-token -- --manifest-path "$example_dir/Cargo.toml"
    install_wasm "$example_build/$TARGET/release/example_token.wasm" "$example_name"
fi
