#!/usr/bin/env bash
# A MongoDB-protocol server for the tests: SecantusDB's `secantusd-rs` (crates.io `secantus-mdb`,
# GPL-2.0, used as a test tool only, never linked). See shared/MONGODB.md.
#
#   scripts/mongodb-test-server.sh start   # install if needed, start, wait; prints the URI
#   scripts/mongodb-test-server.sh stop
#   scripts/mongodb-test-server.sh uri
#   scripts/mongodb-test-server.sh bin     # install if needed; prints the server binary's path
#                                          # (the fault suite starts private instances of it)
#   scripts/mongodb-test-server.sh path    # prints where the binary is (or will be), installs nothing
#
# The binary is built once into $GDID_CACHE (default ~/.cache/gdid, a few minutes on 2 cores;
# needs cmake, installed from Debian's packages when missing) and reused afterwards. The server
# listens on 127.0.0.1:$GDID_MONGODB_PORT (default 27018) with its data in $GDID_CACHE/mongodb-data
# (on another port: mongodb-data-PORT, and its own pid and log files).
set -euo pipefail

cache=${GDID_CACHE:-$HOME/.cache/gdid}
port=${GDID_MONGODB_PORT:-27018}
version=0.5.3-beta.196
root=$cache/secantus-$version
bin=$root/bin/secantusd-rs
suffix=$([ "$port" = 27018 ] || echo "-$port")
data=$cache/mongodb-data$suffix
pidfile=$cache/mongodb$suffix.pid
logfile=$cache/mongodb$suffix.log
uri="mongodb://127.0.0.1:$port/?directConnection=true"

log() { printf 'mongodb-test-server: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

install() {
  [ -x "$bin" ] && return 0
  mkdir -p "$cache"
  # One build at a time: the others wait for it and use its binary.
  (
    flock 9
    [ -x "$bin" ] && exit 0
    if ! command -v cmake >/dev/null 2>&1; then
      log "installing cmake"
      (apt-get update -qq && apt-get install -y -qq cmake) >&2
    fi
    log "building secantus-mdb $version into $root (once; a few minutes)"
    # Optimised, but without its manifest's thin LTO and single codegen unit: they lengthen the
    # build, and a test server needs neither.
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      cargo install secantus-mdb --version "=$version" --locked --ignore-rust-version --root "$root" >&2
  ) 9>"$cache/install.lock"
}

start() {
  install
  if port_open; then
    if ! { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
      log "127.0.0.1:$port is taken by another process, not a server this script started"
      exit 1
    fi
    log "already listening on 127.0.0.1:$port"
  else
    mkdir -p "$data"
    nohup "$bin" --host 127.0.0.1 --port "$port" --storage-path "$data" --cache-size 256M \
      >"$logfile" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 300); do
      port_open && break
      kill -0 "$(cat "$pidfile")" 2>/dev/null || break # it exited: no use waiting
      sleep 0.1
    done
    port_open || { log "did not start; see $logfile"; exit 1; }
    log "listening on 127.0.0.1:$port (pid $(cat "$pidfile"))"
  fi
  echo "$uri"
}

stop() {
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    kill -TERM "$(cat "$pidfile")"
    for _ in $(seq 1 100); do
      kill -0 "$(cat "$pidfile")" 2>/dev/null || break
      sleep 0.1
    done
    log "stopped"
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  uri) echo "$uri" ;;
  bin) install && echo "$bin" ;;
  path) echo "$bin" ;;
  *) echo "usage: $0 start|stop|uri|bin|path" >&2; exit 2 ;;
esac
