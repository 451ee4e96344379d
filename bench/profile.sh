#!/usr/bin/env bash
# Instruction-level profile of one server on one path with callgrind: stable
# counts on a noisy machine. Needs valgrind; build first with bench/run.sh
# (or `cargo build --release` in bench/).
#
#   bench/profile.sh SERVER TRANSPORT PATH [N]
#     SERVER    floor | rmcp | toolwire | toolwire-plain | toolwire-auth (HTTP
#               only) | toolwire-layer (one pass-through middleware layer) | gateway (HTTP only: bench-gateway profiled, in front
#               of a bench-toolwire upstream that runs outside callgrind) |
#               proxy-floor (HTTP only, like gateway: the bare reverse proxy
#               bench-proxy-floor profiled)
#     TRANSPORT http (16 connections) | stdio (64 in flight)
#     PATH      echo | add | list
#     N         requests in the profiled run (default 10000)
#
#   CACHE=1 bench/profile.sh ...   also simulates the caches and the branch
#               predictor (callgrind --cache-sim --branch-sim, L1 at this
#               machine's 32 KiB, 8-way, 64-byte lines) and prints, per
#               request, the L1 instruction and data misses and the
#               mispredicted branches: what instructions alone miss when a
#               request's code or data does not fit in L1.
#
# It runs the server under callgrind twice, with 1000 and with 1000+N requests,
# and prints instructions per request from the difference (start-up and
# shutdown cancel out), then the top functions of the larger run (inclusive
# and self). The callgrind files stay in bench/results/profile/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rel="${CARGO_TARGET_DIR:-$here/target}/release"
server="${1:?server}"; transport="${2:?http|stdio}"; path="${3:?echo|add|list}"; n="${4:-10000}"
out="$here/results/profile"; mkdir -p "$out"
bin="$rel/bench-${server%-*}"; extra=()
[ "$server" = proxy-floor ] && bin="$rel/bench-proxy-floor"
[ "$server" = toolwire-plain ] && extra=(--plain-loop)
[ "$server" = toolwire-auth ] && extra=(--auth)
[ "$server" = toolwire-layer ] && extra=(--noop-layer)
if [ "$server" = gateway ] || [ "$server" = proxy-floor ]; then
  [ "$transport" = http ] || { echo "$server: HTTP only" >&2; exit 2; }
  ulog="$(mktemp)"
  taskset -c 0 "$rel/bench-toolwire" --http 127.0.0.1:0 >"$ulog" 2>/dev/null &
  upid=$!
  trap 'kill "$upid" 2>/dev/null || true; rm -f "$ulog"' EXIT
  for _ in $(seq 200); do grep -q listening "$ulog" && break; sleep 0.1; done
  extra=(--upstream "http://$(awk '/listening/{print $2}' "$ulog")/mcp")
fi
base=1000

run() { # run REQUESTS TAG -> callgrind file
  local reqs="$1" file="$out/$server-$transport-$path-$2.cg"
  rm -f "$file"
  local vg=(valgrind --tool=callgrind --callgrind-out-file="$file" --dump-instr=no --collect-jumps=no)
  [ "${CACHE:-0}" = 1 ] && vg+=(--cache-sim=yes --branch-sim=yes --I1=32768,8,64 --D1=32768,8,64)
  if [ "$transport" = http ]; then
    local log; log="$(mktemp)"
    taskset -c 0 "${vg[@]}" "$bin" --http 127.0.0.1:0 "${extra[@]}" >"$log" 2>/dev/null &
    local pid=$!
    for _ in $(seq 200); do grep -q listening "$log" && break; sleep 0.1; done
    local addr; addr="$(awk '/listening/{print $2}' "$log")"
    local auth=()  # the bearer token toolwire-auth prints after its address
    if [ "$server" = toolwire-auth ]; then
      for _ in $(seq 50); do grep -q '^bearer ' "$log" && break; sleep 0.1; done
      auth=(--bearer "$(awk '/^bearer /{print $2}' "$log")")
    fi
    taskset -c 1 "$rel/loadgen" http --addr "$addr" --conns 16 --warmup 0 --duration 900 \
      --max-requests "$reqs" --paths "$path" --name "$server" "${auth[@]}" >/dev/null 2>&1
    kill -TERM "$pid"; wait "$pid" || true  # callgrind writes its file on SIGTERM
    rm -f "$log"
  else
    taskset -c 1 "$rel/loadgen" stdio --inflight 64 --warmup 0 --duration 900 \
      --max-requests "$reqs" --paths "$path" --name "$server" -- \
      taskset -c 0 "${vg[@]}" "$bin" --stdio "${extra[@]}" >/dev/null 2>/dev/null
  fi
  echo "$file"
}

total() { grep -E '^(summary|totals):' "$1" | tail -1 | awk '{print $2}'; }

small="$(run "$base" base)"
big="$(run "$((base + n))" big)"
a="$(total "$small")"; b="$(total "$big")"
echo "$server $transport $path: $(( (b - a) / n )) instructions/request (callgrind, user space only; $n requests)"
if [ "${CACHE:-0}" = 1 ]; then
  # Every event of the summary line, per request (big minus base).
  python3 - "$small" "$big" "$n" <<'PY'
import sys
def events(path):
    names = vals = None
    for line in open(path):
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            vals = [int(v) for v in line.split()[1:]]
    return dict(zip(names, vals))
a, b, n = events(sys.argv[1]), events(sys.argv[2]), int(sys.argv[3])
per = {k: (b[k] - a.get(k, 0)) / n for k in b}
print("per request: L1i misses %.0f, L1d misses %.0f (read %.0f, write %.0f), "
      "mispredicted branches %.0f (conditional %.0f, indirect %.0f)" % (
      per["I1mr"], per["D1mr"] + per["D1mw"], per["D1mr"], per["D1mw"],
      per["Bcm"] + per["Bim"], per["Bcm"], per["Bim"]))
PY
fi
echo
echo "-- inclusive (top 40) --"
clean() { sed -E 's#  /[^ ]*\.rs:#  #; s#  \./[^ ]*:#  #; s# \[[^]]*\]$##' | cut -c1-200; }
{ callgrind_annotate --inclusive=yes "$big" 2>/dev/null || true; } | sed -n '/file:function/,$p' | sed -n '3,42p' | clean
echo
echo "-- self (top 40) --"
{ callgrind_annotate --inclusive=no "$big" 2>/dev/null || true; } | sed -n '/file:function/,$p' | sed -n '3,42p' | clean
