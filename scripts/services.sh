#!/usr/bin/env bash
# Makes sure the database servers the tests use are up on 127.0.0.1 (MariaDB and PostgreSQL,
# started if installed but stopped; the MongoDB-protocol test server, installed and started by
# scripts/mongodb-test-server.sh), and prints the environment the tests read.
#
#   eval "$(scripts/services.sh)"
#
# With CI=true a server that cannot be reached is an error; otherwise it is only reported, and
# the tests that need it say they are skipped.
set -euo pipefail

log() { printf '%s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    port_open "$1" && return 0
    sleep 0.1
  done
  return 1
}

ensure() { # name port start-command...
  local name=$1 port=$2
  shift 2
  if port_open "$port"; then
    log "services: $name is up on 127.0.0.1:$port"
    return 0
  fi
  log "services: starting $name"
  "$@" >&2 || true
  if wait_port "$port" 30; then
    log "services: $name is up on 127.0.0.1:$port"
    return 0
  fi
  log "services: $name is not reachable on 127.0.0.1:$port"
  return 1
}

missing=()

if command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then
  ensure MariaDB 3306 start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ||
    missing+=(MariaDB)
elif ! port_open 3306; then
  missing+=(MariaDB)
fi

if command -v pg_ctlcluster >/dev/null 2>&1; then
  ensure PostgreSQL 5432 bash -c 'pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start' ||
    missing+=(PostgreSQL)
elif ! port_open 5432; then
  missing+=(PostgreSQL)
fi

# MongoDB: the project's own test server (built once into a cache, then started in seconds),
# unless GDID_MONGODB_URI already names one (a genuine MongoDB, say).
if [ -z "${GDID_MONGODB_URI:-}" ]; then
  if mongodb_uri=$("$(dirname "$0")/mongodb-test-server.sh" start); then
    GDID_MONGODB_URI=$mongodb_uri
  else
    missing+=(MongoDB)
  fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
  log "services: not available: ${missing[*]}"
  if [ "${CI:-}" = "true" ]; then
    log "services: CI=true, so a missing server is a failure"
    exit 1
  fi
fi

echo "export GDID_MYSQL_URL=${GDID_MYSQL_URL:-mysql://root@127.0.0.1:3306/test}"
echo "export GDID_POSTGRES_URL=${GDID_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
if [ -n "${GDID_MONGODB_URI:-}" ]; then
  echo "export GDID_MONGODB_URI='$GDID_MONGODB_URI'"
fi
