#!/usr/bin/env bash
# A private PostgreSQL cluster for tests, from Debian's package: nothing shared with a system cluster.
#
#   scripts/postgres.sh start DIR [PID]
#                                   # initdb in DIR, start a server listening on a unix socket in DIR only
#                                   # (no TCP port to collide on), print its URL on stdout; with PID, the
#                                   # server is stopped and DIR removed once process PID is gone (a test
#                                   # killed before it could stop its server leaves nothing running)
#   scripts/postgres.sh stop DIR    # stop it (immediately: a test cluster has nothing to keep)
#
# Run as root, the cluster belongs to the `postgres` user (PostgreSQL refuses to run as root) and DIR is
# handed to it. Exit 69 when PostgreSQL is not installed (scripts/setup.sh installs it).
set -euo pipefail

usage() { echo "usage: scripts/postgres.sh start DIR [PID] | stop DIR" >&2; exit 64; }
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
command=$1
dir=$(realpath -m "$2")
owner=${3:-}

bindir() {
    local candidate
    for candidate in /usr/lib/postgresql/*/bin; do
        [ -x "$candidate/initdb" ] && { echo "$candidate"; return 0; }
    done
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bin=$(bindir) || {
    echo "postgres.sh: PostgreSQL is not installed: run scripts/setup.sh (or apt-get install -y postgresql)" >&2
    exit 69
}

case $command in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    # fsync off: a test cluster is thrown away, and a crash of the machine loses nothing anyone keeps.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses='' -k $dir -c fsync=off -c synchronous_commit=off -c max_connections=300" \
        start >/dev/null || {
        cat "$dir/server.log" >&2
        exit 1
    }
    if [ -n "$owner" ]; then
        # Detached, with its output closed so that the caller reading ours is not held open by it.
        (
            while kill -0 "$owner" 2>/dev/null; do sleep 1; done
            as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
            rm -rf "$dir"
        ) </dev/null >/dev/null 2>&1 &
    fi
    echo "postgresql://postgres@${dir//\//%2F}/postgres"
    ;;
stop)
    # Already stopped (its owner's watchdog, or an earlier stop) is stopped.
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
*) usage ;;
esac
