# The clean-up of a run of the fault suite's private servers (gdid-faults/src/server/private.rs).
#
#   bash -c "$(cat reap.sh)" reap now DIR       # stop the servers of DIR now, then remove DIR
#   bash -c "$(cat reap.sh)" reap on-eof DIR    # the same once stdin closes: when the suite's
#                                               # process ends, however it ends (even SIGKILL)
#
# Each server's folder in DIR holds `server.pid`: its process id and the signal that stops it
# cleanly. Only a process whose command line names DIR is signalled (never a reused id, never a
# machine's server); one that has not stopped after 30 s is killed.
set -u
mode=$1 dir=$2

runs_here() { grep -qaF -- "$dir" "/proc/$1/cmdline" 2>/dev/null; }

stop() { # a server.pid file
  local pid signal
  read -r pid signal <"$1" 2>/dev/null || return 0
  runs_here "$pid" || return 0
  kill "-${signal:-TERM}" "$pid" 2>/dev/null
  for _ in $(seq 1 300); do
    runs_here "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}

if [ "$mode" = on-eof ]; then
  trap '' INT TERM HUP
  while read -r _; do :; done
fi
for pid_file in "$dir"/*/server.pid; do
  [ -e "$pid_file" ] && stop "$pid_file" &
done
wait
rm -rf "$dir"
