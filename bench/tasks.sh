#!/usr/bin/env bash
# What tasks cost (issue 26), with bench-tasks (see its header): server
# instructions per call with callgrind, over HTTP, for a plain tool, a
# task-capable tool called without the extension, and a task created and
# read once; then the memory of live tasks and tasks/get at 1 and at N of
# them; then p50/p99 of the Redis and NATS stores across replicas (real
# redis-server and nats-server -js on loopback, started and stopped by
# bench-tasks).
#
#   bench/tasks.sh [N]     N calls profiled per mode (default 5000)
#
# Needs valgrind, redis-server and nats-server (scripts/scale-install).
# Builds bench-toolwire and bench-tasks (release) first.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
n="${1:-5000}"
(cd "$here" && nice -n 10 cargo build --release --quiet --bin bench-tasks --bin bench-toolwire)
rel="${CARGO_TARGET_DIR:-$here/target}/release"
out="$here/results/profile"; mkdir -p "$out"
base=1000

total() { grep -E '^(summary|totals):' "$1" | tail -1 | awk '{print $2}'; }
run() { # run MODE CALLS FILE: bench-toolwire --tasks under callgrind, driven
  local log; log="$(mktemp)"
  taskset -c 0 valgrind --tool=callgrind --dump-instr=no --collect-jumps=no \
    --callgrind-out-file="$3" "$rel/bench-toolwire" --http 127.0.0.1:0 --tasks >"$log" 2>/dev/null &
  local pid=$!
  for _ in $(seq 300); do grep -q listening "$log" && break; sleep 0.1; done
  local addr; addr="$(awk '/listening/{print $2}' "$log")"
  taskset -c 1 "$rel/bench-tasks" http "$addr" "$1" "$2" >/dev/null
  kill -TERM "$pid"; wait "$pid" || true  # callgrind writes its file on SIGTERM
  rm -f "$log"
}
profile() { # profile MODE -> server instructions per call
  local small="$out/tasks-$1-base.cg" big="$out/tasks-$1-big.cg"
  run "$1" "$base" "$small"
  run "$1" "$((base + n))" "$big"
  echo $(( ($(total "$big") - $(total "$small")) / n ))
}

plain=$(profile plain)
optional=$(profile optional)
task=$(profile task)
echo "server instructions per call (callgrind, HTTP, one connection, $n calls):"
echo "  plain tool (noop):                            $plain"
echo "  task-capable tool, extension not declared:    $optional ($(awk -v a="$optional" -v b="$plain" 'BEGIN{printf "%+.1f%%", (a-b)*100/b}') vs plain)"
echo "  task created + first tasks/get (2 requests):  $task ($(awk -v a="$task" -v b="$plain" 'BEGIN{printf "%.2f×", a/b}') a plain call)"
"$rel/bench-tasks" memory 100000
"$rel/bench-tasks" stores 1000
