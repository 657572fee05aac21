#!/usr/bin/env bash
# Install what the build and tests need and a fresh Debian machine lacks. Idempotent and quiet
# when everything is present. The wasm toolchain is handled by scripts/build-wasm.sh.
set -euo pipefail

need_apt=()
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo is missing; install Rust (https://rustup.rs)" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true
command -v flock >/dev/null 2>&1 || need_apt+=(util-linux)
# The localnet interop test drives the node with @stellar/stellar-sdk from npm.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# The `assay serve` test renders its pages in headless Chromium.
command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || need_apt+=(chromium-headless-shell)
# The `--output junit` tests read the XML with Debian's junitparser (the system python3, not a pyenv one).
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import junitparser' >/dev/null 2>&1; } || need_apt+=(python3-junitparser)
# The history's PostgreSQL backend is tested against a private cluster of Debian's server (scripts/postgres.sh).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_apt+=(postgresql)

if [ "${#need_apt[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing packages: ${need_apt[*]}; run: sudo apt-get install -y ${need_apt[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
fi

# npm packages for the localnet interop test and the TypeScript reads (attester/cli/tests/it/integrator_ts.rs),
# pinned by each project's package-lock.json.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for project in attester/localnet/interop examples/typescript; do
    dir="$root/$project"
    if [ -f "$dir/package-lock.json" ] && [ ! -d "$dir/node_modules/@stellar/stellar-sdk" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
    fi
done

# The SARIF Multitool that validates `--output sarif` (attester/cli/tests/it/ci_formats.rs), pinned by its
# package-lock.json; its Linux binary ships inside the npm package.
sarif_dir="$root/attester/cli/tests/sarif"
sarif_tool="$sarif_dir/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
if [ ! -f "$sarif_tool" ]; then
    (cd "$sarif_dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
chmod u+x "$sarif_tool"

# stellar-cli for the tests that run the docs' `stellar` lines: installed once per machine outside the checkout
# and linked as target/tools/bin/stellar (not PATH). Slow the first time on a machine (a cargo install), seconds
# after that; the demo does not need it and skips it with ASSAY_SETUP_NO_STELLAR_CLI=1.
if [ "${ASSAY_SETUP_NO_STELLAR_CLI:-0}" != 1 ]; then
    "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/install-stellar-cli.sh"
fi
