#!/usr/bin/env bash
# Cost as the work grows (issue 27): the curves of bench-scale (see the
# header of bench/src/bin/bench-scale.rs) and of bench-tasks, and the cold
# start of `toolwire serve`.
#
#   bench/scale.sh                  everything (~5 min)
#   bench/scale.sh tools listen     some of: tools listen gateway tasks cold
#
# The servers run pinned to CPU 0 (bench-scale starts them with taskset -c 0),
# the drivers on CPU 1. `cold` builds the toolwire CLI (release, --locked)
# from the main workspace into the same target directory.
# CARGO_TARGET_DIR, if set, is used instead of bench/target.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
rel="$CARGO_TARGET_DIR/release"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tools listen gateway tasks cold)

(cd "$here" && nice -n 10 cargo build --release --quiet --bin bench-scale --bin bench-tasks)
# 10,000 streams are 10,000 sockets on each side.
ulimit -n "$(ulimit -Hn)"
pin=(taskset -c 1)

step() { echo; echo "== $1 ($(date -u +%H:%M:%S))"; }
for part in "${parts[@]}"; do
  case "$part" in
    tools | listen | gateway)
      step "$part"
      "${pin[@]}" "$rel/bench-scale" "$part"
      ;;
    tasks)
      step "tasks: live tasks and tasks/get"
      for n in 10000 100000; do "${pin[@]}" "$rel/bench-tasks" memory "$n"; done
      ;;
    cold)
      step "cold start"
      nice -n 10 cargo build --release --quiet --locked --manifest-path "$here/../Cargo.toml" -p toolwire-cli
      "${pin[@]}" "$rel/bench-scale" cold 50 -- "$rel/toolwire" serve
      "${pin[@]}" "$rel/bench-scale" cold 50 -- "$rel/bench-scale" serve-tools 1000 --stdio
      ;;
    *) echo "unknown part $part: tools listen gateway tasks cold" >&2; exit 2 ;;
  esac
done
