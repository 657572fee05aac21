#!/usr/bin/env bash
# Every check CI makes, in the order a failure is cheapest to see.
# Works on a fresh Debian machine: it installs what is missing (the wasm toolchain through
# scripts/build-wasm.sh, and the tools named in scripts/setup.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# A whole-suite run gains little from incremental compilation and its caches double the build directory; a
# developer's own `cargo test` keeps it. CARGO_INCREMENTAL=1 in the environment turns it back on.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# Each step's wall time, printed as a table at the end (and on failure, up to the failing step), so where CI's
# time goes is read off every run.
timings=()
lane_pid=""
step_name=""
step_start=0
run_start=$(date +%s)
end_step() {
    if [ -n "$step_name" ]; then timings+=("$(printf '%6d s  %s' "$(($(date +%s) - step_start))" "$step_name")"); fi
}
step() {
    end_step
    step_name="$*"
    step_start=$(date +%s)
    printf '\n== %s\n' "$*" >&2
}
print_timings() {
    local rc=$?
    if [ -n "$lane_pid" ]; then kill_tree "$lane_pid"; fi
    end_step
    step_name=""
    printf '\n== step times (wall)\n' >&2
    printf '%s\n' "${timings[@]}" >&2
    if [ -f "$root/target/ci-logs/times" ]; then cat "$root/target/ci-logs/times" >&2; fi
    printf '%6d s  total (exit %d)\n' "$(($(date +%s) - run_start))" "$rc" >&2
}
trap print_timings EXIT

# The second lane. The projects with a workspace of their own (examples/token, examples/integrator,
# fixtures/third-party) compile in target directories of their own and run no test whose outcome depends on
# time, so they run beside the workspace's steps instead of after them, at the lowest CPU priority (nice 19):
# they take the CPU the workspace's steps leave idle (a link on one core, tests waiting on local networks and
# child processes) and next to nothing from them. Each lane step's output goes to target/ci-logs/<step>.log,
# printed when the lane is waited for; its wall time joins the table; a failure fails the run.
lane_dir="$root/target/ci-logs"
# Runs one lane step with its output in its log; under the lane's `set -e`, a failure ends the lane there.
lane_step() {
    local name="$1" slug="$2"
    shift 2
    local started
    started=$(date +%s)
    printf '%s\n' "$slug" >"$lane_dir/current"
    "$@" >"$lane_dir/$slug.log" 2>&1
    printf '%6d s  (second lane) %s\n' "$(($(date +%s) - started))" "$name" >>"$lane_dir/times"
}
start_lane() {
    rm -rf "$lane_dir"
    mkdir -p "$lane_dir"
    (
        set -euo pipefail
        renice -n 19 -p "$BASHPID" >/dev/null
        lane_step "consumer projects: example token, integrator example" consumers consumer_projects
        lane_step "third-party fixtures" third-party third_party_fixtures
        rm -f "$lane_dir/current"
    ) &
    lane_pid=$!
}
wait_lane() {
    local rc=0
    wait "$lane_pid" || rc=$?
    lane_pid=""
    if [ "$rc" != 0 ]; then
        local failed
        failed="$(cat "$lane_dir/current" 2>/dev/null || echo unknown)"
        printf 'the second lane failed in %s (exit %d); its output:\n' "$failed" "$rc" >&2
        cat "$lane_dir/$failed.log" >&2 || true
        exit 1
    fi
}
# A run that ends early stops the lane and everything it started.
kill_tree() {
    local child
    for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}

# Two projects as they would live in their own repositories, each with its own workspace and Cargo.lock, built
# from its own directory: examples/token, a token author's project whose tests run Assay's suite per check and
# the power assertion (assay-testkit, docs/token-tests.md) on its WASM, built as the author's `stellar contract
# build` would (scripts/build-wasm.sh example-token, in the `contracts to wasm` step); and examples/integrator,
# a consumer of the registry (docs/integrating.md) with the registry's .wasm placed where a consumer puts a
# release. Both use one target directory, made anew before the lane starts: each resolves from its own lock,
# and the Soroban host graph the two share (same versions, same dev profile) is compiled once instead of twice.
# The planted-defect test of assay-testkit (in the tests step) builds a copy of the example token in the same
# directory; cargo's lock on it orders the two.
consumer_target="$root/target/consumers"
consumer_projects() {
    (
        cd examples/token
        cargo fmt --check
        CARGO_TARGET_DIR="$consumer_target" cargo clippy --all-targets --locked -- -D warnings
        CARGO_TARGET_DIR="$consumer_target" EXAMPLE_TOKEN_WASM="$root/target/wasm/example_token.wasm" cargo test --locked
    )
    cp target/wasm/assay_registry.wasm target/wasm/assay_verdict_store.wasm examples/integrator/wasm/
    (
        cd examples/integrator
        cargo fmt --check
        CARGO_TARGET_DIR="$consumer_target" cargo clippy --all-targets --locked -- -D warnings
        CARGO_TARGET_DIR="$consumer_target" cargo test --locked
    )
}

# fixtures/third-party has its own workspace and Cargo.lock (soroban-sdk 28 for OpenZeppelin's stellar-tokens).
third_party_fixtures() {
    (
        cd fixtures/third-party
        cargo fmt --check
        CARGO_TARGET_DIR="$root/target/third-party" cargo clippy --all-targets --locked -- -D warnings
        CARGO_TARGET_DIR="$root/target/third-party" cargo test --locked
    )
}

step "setup"
scripts/setup.sh

step "format"
cargo fmt --all --check

step "contracts to wasm"
scripts/build-wasm.sh
scripts/build-wasm.sh example-token

# The second lane starts as soon as the modules it reads exist, from a fresh consumer target directory.
rm -rf "$consumer_target"
start_lane

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the released binary"
# The tests build assay with the `demo` feature (a dev-dependency turns it on for the whole workspace), so
# the binary a user builds, without it, is checked on its own.
cargo clippy -p assay-cli --bin assay --locked -- -D warnings

step "the README's install line"
# The README's line, into a scratch root so a developer's ~/.cargo/bin is left alone, with --debug: the release
# profile would compile the whole dependency graph a second time (about ten minutes on two cores) to prove what
# the dev profile proves too, that the package installs from the lock. The release profile's settings are pinned
# by attester/cli/tests/it/release_profile.rs.
install_root="$(mktemp -d)"
CARGO_TARGET_DIR="$root/target" cargo install --path attester/cli --locked --root "$install_root" --quiet --debug
"$install_root/bin/assay" --version
rm -rf "$install_root"

step "one stellar-xdr"
xdr_versions="$(cargo tree --workspace --locked -e normal,build,dev --prefix none 2>/dev/null | awk '$1 == "stellar-xdr" { print $2 }' | sort -u)"
if [ "$(printf '%s\n' "$xdr_versions" | grep -c .)" -gt 1 ]; then
    printf 'more than one stellar-xdr in the graph:\n%s\n' "$xdr_versions" >&2
    exit 1
fi

step "one stellar-strkey of our own"
# Our crates all use the workspace's stellar-strkey. Upstream pins others that cannot be unified (each 0.0.x
# requirement is exact): soroban-env-host 29.0.1 and stellar-xdr 28.0.0 need 0.0.13, stellar-rpc-client
# 28.0.0 needs 0.0.18, and soroban-sdk 29.0.1 pins =0.0.16, the one ours use. Report every version and who uses
# it; fail when an assay crate uses any but the workspace's.
ours="$(sed -n 's/^stellar-strkey = "=\(.*\)"$/\1/p' Cargo.toml)"
strkey_versions="$(cargo tree --workspace --locked -e normal,build,dev --prefix none 2>/dev/null | awk '$1 == "stellar-strkey" { print $2 }' | sort -u)"
for v in $strkey_versions; do
    users="$(cargo tree --workspace --locked -e normal,build,dev --prefix none --depth 1 -i "stellar-strkey@${v#v}" 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u | tr '\n' ' ')"
    printf 'stellar-strkey %s: used by %s\n' "$v" "$users" >&2
    case " $users" in *" assay-"*) [ "${v#v}" = "$ours" ] || {
        printf 'an assay crate uses stellar-strkey %s, not the workspace'"'"'s %s\n' "$v" "$ours" >&2
        exit 1
    } ;; esac
done

step "tests"
# One private PostgreSQL cluster for the run (scripts/postgres.sh): the history's tests run on it and on SQLite,
# the multi-worker tests on it; each test makes a database of its own. Stopped however the run ends.
pg_dir="$(mktemp -d /tmp/assay-ci-pg.XXXXXX)"
ASSAY_TEST_DATABASE_URL="$(scripts/postgres.sh start "$pg_dir" $$)"
export ASSAY_TEST_DATABASE_URL
trap 'rc=$?; scripts/postgres.sh stop "$pg_dir" >/dev/null 2>&1; (exit $rc); print_timings' EXIT
cargo test --workspace --locked
scripts/postgres.sh stop "$pg_dir"
trap print_timings EXIT
rm -rf "$pg_dir"
unset ASSAY_TEST_DATABASE_URL

step "power fixtures, one build per power"
# `cargo test --workspace` tests fixtures/power-token's featureless control; each power is a feature.
for feature in $(sed -n '/^\[features\]/,/^\[/s/^\([a-z-]*\) = \[\]$/\1/p' fixtures/power-token/Cargo.toml); do
    cargo test --locked -p power-token --lib --features "$feature"
done

step "waiting for the second lane"
wait_lane

# The README's first command, scripts/demo.sh, runs before this script in .ci/run (from a clone with nothing
# built, as a newcomer runs it); the demo itself is also a test (attester/cli/tests/it/demo.rs).
