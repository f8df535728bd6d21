#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests: loopback only, trust auth, data under BASE/data.
#   scripts/postgres.sh [start] [BASE]   start (or find running) and print its URL on stdout
#   scripts/postgres.sh stop [BASE]      stop it
#   scripts/postgres.sh status [BASE]    print the URL and exit 0 if running, else exit 1
#   scripts/postgres.sh url [BASE]       alias of status
# BASE defaults to .cache/pg in the repository. Port: APPLIANCE_PG_PORT (default 54329); when that
# port is taken by something else the next free one is used, and the printed URL says which.
set -euo pipefail

ACTION="${1:-start}"
case "$ACTION" in
    start | stop | status | url) ;;
    *) echo "usage: $0 [start|stop|status] [BASE_DIR]" >&2; exit 2 ;;
esac

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="${2:-$REPO/.cache/pg}"
PORT="${APPLIANCE_PG_PORT:-54329}"
DBNAME="appliance_test"
DEADLINE_SECONDS="${APPLIANCE_PG_TIMEOUT:-60}"

die() { printf 'postgres.sh: %s\n' "$*" >&2; exit 1; }

find_bin() {
    local dir
    if [ -n "${PG_BIN:-}" ]; then
        printf '%s\n' "$PG_BIN"
        return
    fi
    # Highest installed major version (Debian 12 and Raspberry Pi OS ship 15).
    for dir in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5 -n -r); do
        if [ -x "$dir/initdb" ]; then
            printf '%s\n' "$dir"
            return
        fi
    done
    die "PostgreSQL server binaries not found under /usr/lib/postgresql (run scripts/setup.sh)"
}
BIN="$(find_bin)"

mkdir -p "$BASE"
BASE="$(cd "$BASE" && pwd)"

# initdb refuses to run as root, so root runs the server as the `postgres` OS user.
RUN=()
if [ "$(id -u)" -eq 0 ]; then
    getent passwd postgres >/dev/null || die "no 'postgres' OS user (install the postgresql package)"
    RUN=(runuser -u postgres --)
    # The server must reach its data dir (e.g. a clone under /root is not reachable), and a unix
    # socket path has a ~107 byte limit: fall back to a per-checkout directory under /tmp.
    if ! runuser -u postgres -- test -w "$BASE" 2>/dev/null; then
        chown postgres: "$BASE" 2>/dev/null || true
    fi
    if ! runuser -u postgres -- test -w "$BASE" 2>/dev/null || [ "${#BASE}" -gt 70 ]; then
        BASE="/tmp/appliance-pg-$(printf '%s' "$BASE" | sha256sum | cut -c1-12)"
        mkdir -p "$BASE"
        chown postgres: "$BASE"
    fi
elif [ "${#BASE}" -gt 70 ]; then
    BASE="/tmp/appliance-pg-$(id -u)-$(printf '%s' "$BASE" | sha256sum | cut -c1-12)"
    mkdir -p "$BASE"
fi
DATA="$BASE/data"
LOG="$BASE/server.log"
if [ "${#RUN[@]}" -gt 0 ]; then
    touch "$LOG"
    chown postgres: "$LOG"
fi

# Two processes starting the same server at once would race in initdb/pg_ctl.
exec 9>>"$BASE/.lock"
flock 9

running_port() {  # prints the port of this data dir's live server, or fails
    [ -f "$DATA/postmaster.pid" ] || return 1
    "${RUN[@]}" "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1 || return 1
    sed -n 4p "$DATA/postmaster.pid"
}

url_for() { printf 'postgresql://postgres@127.0.0.1:%s/%s\n' "$1" "$DBNAME"; }

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case "$ACTION" in
    stop)
        if running_port >/dev/null; then
            "${RUN[@]}" "$BIN/pg_ctl" -D "$DATA" stop -m fast -w -t "$DEADLINE_SECONDS" >/dev/null
            echo "postgres.sh: stopped server in $DATA" >&2
        fi
        exit 0
        ;;
    status | url)
        port="$(running_port)" || exit 1
        url_for "$port"
        exit 0
        ;;
esac

if port="$(running_port)"; then
    url_for "$port"
    exit 0
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
    rm -rf "$DATA"
    "${RUN[@]}" "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
        >"$LOG" 2>&1 || { cat "$LOG" >&2; die "initdb failed (log above)"; }
fi

for _ in $(seq 1 50); do
    port_taken "$PORT" || break
    PORT=$((PORT + 1))
done
port_taken "$PORT" && die "no free port found near ${APPLIANCE_PG_PORT:-54329}"

# Loopback only, socket inside the data dir; durability off because the data is thrown away.
# pg_ctl -w notices a server that dies while starting; pg_isready below confirms it is serving.
"${RUN[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t "$DEADLINE_SECONDS" start -o "-p $PORT -c listen_addresses=127.0.0.1 \
-c unix_socket_directories='$DATA' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    >/dev/null 9>&- || { tail -n 20 "$LOG" >&2; die "pg_ctl start failed (log: $LOG)"; }

deadline=$((SECONDS + DEADLINE_SECONDS))
until "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        tail -n 20 "$LOG" >&2
        die "server did not accept connections within ${DEADLINE_SECONDS}s (log: $LOG)"
    fi
    sleep 0.1
done

psql=("$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tA)
if [ -z "$("${psql[@]}" -c "select 1 from pg_database where datname = '$DBNAME'")" ]; then
    "${psql[@]}" -c "create database $DBNAME" >/dev/null
fi
echo "postgres.sh: server running in $DATA" >&2
url_for "$PORT"
