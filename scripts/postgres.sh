#!/usr/bin/env bash
# A throwaway PostgreSQL server for the service's tests (Debian's
# PostgreSQL, installed by scripts/setup.sh).
#
#   scripts/postgres.sh start [DIR]  initdb in DIR (a new temp dir if none),
#                                    start on 127.0.0.1 on a free port (the
#                                    same port again on a restart), print
#                                    `export WEBPROOF_TEST_DATABASE_URL=...`
#                                    and `export WEBPROOF_TEST_PGDIR=DIR`
#   scripts/postgres.sh stop DIR     stop it (fast shutdown); DIR stays
#   scripts/postgres.sh destroy DIR  stop it and delete DIR
#
# Use: eval "$(scripts/postgres.sh start)"; ...; scripts/postgres.sh destroy
# "$WEBPROOF_TEST_PGDIR". Trust authentication, loopback only: for tests.
# PostgreSQL refuses to run as root: as root, it runs as the `postgres`
# user. Messages go to stderr; only the exports go to stdout.
set -euo pipefail

bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  echo "postgres.sh: no PostgreSQL found (initdb); run scripts/setup.sh" >&2
  exit 1
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd=${1:-}
dir=${2:-}
BIN=$(bindir)
case "$cmd" in
  start)
    if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/webproof-pg.XXXXXX); fi
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; chmod 700 "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    [ -f "$dir/port" ] || free_port >"$dir/port"
    port=$(cat "$dir/port")
    # Room for a few test binaries' replicas and pools running at once.
    as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >&2 || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "postgres.sh: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)" >&2
    echo "export WEBPROOF_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$port/postgres"
    echo "export WEBPROOF_TEST_PGDIR=$dir"
    ;;
  stop | destroy)
    [ -n "$dir" ] || { echo "usage: $0 $cmd DIR" >&2; exit 2; }
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_pg "$BIN/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >&2 || true
    fi
    if [ "$cmd" = destroy ]; then rm -rf "$dir"; fi
    ;;
  *)
    echo "usage: $0 start [DIR] | stop DIR | destroy DIR" >&2
    exit 2
    ;;
esac
