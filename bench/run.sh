#!/usr/bin/env bash
# The benchmark suite of issue 7: builds the floor, rmcp and toolwire servers,
# the load generator and the toolwire CLI in release, then runs them side by
# side.
#
#   bench/run.sh                 one round (~2.5 min): HTTP at 1/16/64 connections
#                                and stdio with 64 in flight, echo/add/list each
#   bench/run.sh --rounds 3      medians of three rounds (~7 min)
#   bench/run.sh --soak          10^6 requests over HTTP to toolwire; RSS before/after
#
# Any other option goes to `loadgen suite` (or `loadgen soak`), e.g.
#   --duration 3 --warmup 0.5 --conns 1,16,64 --inflight 64 --paths echo,add,list
#   --servers floor,rmcp,toolwire,toolwire-plain,toolwire-cli,proxy-haproxy --no-stdio --no-http
#   --driver loadgen,wrk   HTTP cells driven by loadgen, then by wrk (default: loadgen)
# The servers run pinned to CPU 0 (taskset -c 0), the load generator (and wrk)
# to CPU 1. toolwire-cli is `toolwire serve` with its defaults; proxy-haproxy
# needs haproxy, the wrk driver wrk (each is skipped, saying so, if missing).
# Results go to bench/results/ (report-*.md, cells-*.jsonl, latest.md).
# CARGO_TARGET_DIR, if set, is used instead of bench/target.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"

mode=suite
args=()
for a in "$@"; do
  case "$a" in
    --soak) mode=soak ;;
    -h|--help) sed -n '2,19p' "$here/run.sh"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

echo "== building (release)" >&2
nice -n 10 cargo build --release --bins 1>&2
# The `toolwire` CLI of the toolwire-cli server kind, from the main
# workspace (its own lock file), into the same target directory.
nice -n 10 cargo build --release --locked --manifest-path "$here/../Cargo.toml" -p toolwire-cli 1>&2
test -x "$CARGO_TARGET_DIR/release/loadgen" || { echo "build failed" >&2; exit 1; }
test -x "$CARGO_TARGET_DIR/release/toolwire" || { echo "build of the toolwire CLI failed" >&2; exit 1; }
# The CLI's code layout (crates/toolwire-cli/link-order.txt) names symbols
# of one toolchain and lock file: with others it has no effect, and
# toolwire-cli's peak RSS is about twice what it should be.
order="$here/../crates/toolwire-cli/link-order.txt"
stamp="# $(rustc --version), Cargo.lock $(sha256sum "$here/../Cargo.lock" | cut -c1-16)"
if [ "$(head -1 "$order" 2>/dev/null)" != "$stamp" ]; then
  echo "warning: $order was recorded with '$(head -1 "$order" 2>/dev/null)', not '$stamp': run bench/link-order.sh" >&2
fi
# Code changed since the list was recorded renames or adds functions on the
# path: each one left out lies elsewhere in the text and keeps its own pages
# of code resident (with large page-cache folios, up to megabytes of them).
if command -v nm >/dev/null && [ -f "$order" ]; then
  missing=$(comm -23 <(tail -n +2 "$order" | sort -u) \
    <(nm --defined-only "$CARGO_TARGET_DIR/release/toolwire" | awk '{print $3}' | sort -u) | wc -l)
  listed=$(($(wc -l <"$order") - 1))
  if [ "$missing" -gt $((listed / 50)) ]; then
    echo "warning: $missing of the $listed functions in $order are not in the toolwire binary: the code changed since it was recorded; run bench/link-order.sh" >&2
  fi
fi

{
  echo "== machine"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "kernel: $(uname -r)"
  echo "uptime: $(uptime)"
} >&2

pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin=(taskset -c 1)
else
  echo "warning: taskset or a second CPU is missing: nothing is pinned" >&2
fi

mkdir -p "$here/results"
exec "${pin[@]}" "$CARGO_TARGET_DIR/release/loadgen" "$mode" \
  --bin-dir "$CARGO_TARGET_DIR/release" --out "$here/results" "${args[@]}"
