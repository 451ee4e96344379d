#!/usr/bin/env bash
# Writes crates/toolwire-cli/link-order.txt: the functions `toolwire serve`
# runs from its start through a few requests on stdio and on HTTP, which the
# CLI's build script hands to the linker (LLD's --symbol-ordering-file) so
# that they sit together in the binary's text.
#
#   bench/link-order.sh           builds the CLI in release (CARGO_TARGET_DIR
#                                 or bench/target), then records
#   bench/link-order.sh bench-toolwire
#                                 the same for the library's benchmark server,
#                                 into bench/results/link-order-bench-toolwire.txt,
#                                 then links an ordered copy of it beside the
#                                 plain one (release/bench-toolwire-ordered, its
#                                 relocations packed too where glibc >= 2.36): what
#                                 a server built on the library gets by taking
#                                 the same two steps (BENCHMARKS.md)
#
# Why: a page fault on the binary's code maps the 64 KB around it (the
# kernel's fault-around), and the code a request needs was spread over the
# whole 20 MB text, so `toolwire serve` held 7-11 MB of code pages for about
# 2 MB of code it ran (BENCHMARKS.md, "Where toolwire serve's memory is").
# The names carry the hashes of this toolchain, lock file and profile: after
# a dependency update or a new Rust, run this again (an outdated list only
# loses its effect; the linker skips names it does not find).
# Needs valgrind (callgrind) and curl.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
out="$root/crates/toolwire-cli/link-order.txt"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

which="${1:-cli}"
case "$which" in
  cli)
    nice -n 10 cargo build --release --locked --manifest-path "$root/Cargo.toml" -p toolwire-cli 1>&2
    bin="$CARGO_TARGET_DIR/release/toolwire"
    stdio_args=(serve)
    http_args=(serve --http 127.0.0.1:0)
    ;;
  bench-toolwire)
    out="$here/results/link-order-bench-toolwire.txt"
    mkdir -p "$here/results"
    (cd "$here" && nice -n 10 cargo build --release --locked --bin bench-toolwire 1>&2)
    bin="$CARGO_TARGET_DIR/release/bench-toolwire"
    stdio_args=(--stdio)
    http_args=(--http 127.0.0.1:0)
    ;;
  *) echo "usage: bench/link-order.sh [cli|bench-toolwire]" >&2; exit 2 ;;
esac

meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
list="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$meta}}"
echo_call="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{$meta,\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}"
add_call="{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{$meta,\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}"

grind() { # output-file, then the command
  local file="$1"
  shift
  valgrind --tool=callgrind --demangle=no --compress-strings=no \
    --callgrind-out-file="$file" "$@"
}

echo "== stdio" >&2
printf '%s\n%s\n%s\n' "$list" "$echo_call" "$add_call" |
  grind "$work/stdio.cg" "$bin" "${stdio_args[@]}" >/dev/null 2>"$work/stdio.log"

echo "== http" >&2
# valgrind itself in the background (not a function's subshell), so that
# SIGTERM reaches the server, which shuts down and lets callgrind write.
valgrind --tool=callgrind --demangle=no --compress-strings=no \
  --callgrind-out-file="$work/http.cg" "$bin" "${http_args[@]}" >"$work/http.out" 2>"$work/http.log" &
server=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's|.*serving MCP at \(http:[^ ]*/mcp\).*|\1|p' "$work/http.log" | head -1)
  [ -n "$url" ] || url=$(awk '/^listening /{print "http://" $2 "/mcp"}' "$work/http.out" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/http.log" >&2; echo "no URL from toolwire serve --http" >&2; exit 1; }
post() { # method name body
  curl -sS --fail -o /dev/null "$url" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    --data "$3"
}
for _ in 1 2 3; do
  post tools/list "" "$list"
  post tools/call echo "$echo_call"
  post tools/call add "$add_call"
done
# Connections at once, as under load: what a busy server runs besides.
export -f post
export url echo_call
seq 1 64 | xargs -P 32 -I{} bash -c 'post tools/call echo "$echo_call"'
kill -TERM "$server"
wait "$server" || true

# What the names were taken from: bench/run.sh warns when it differs.
stamp="# $(rustc --version), Cargo.lock $(sha256sum "$root/Cargo.lock" | cut -c1-16)"
python3 - "$bin" "$out" "$stamp" "$work/stdio.cg" "$work/http.cg" <<'EOF'
import re, sys
binary, out, stamp, *files = sys.argv[1:]
names, seen = [], set()
for path in files:
    ob = None
    for line in open(path):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn=") and ob == binary:
            # Callgrind marks a recursion level as name'2; an address or
            # "(below main)" is no symbol.
            name = re.sub(r"'\d+$", "", line[3:].strip())
            if name.startswith(("0x", "(")) or " " in name:
                continue
            if name not in seen:
                seen.add(name)
                names.append(name)
if len(names) < 500:
    sys.exit(f"only {len(names)} functions recorded: did the runs fail?")
# LLD reads "#" as a comment (and a mangled name has none).
open(out, "w").write(stamp + "\n" + "\n".join(names) + "\n")
print(f"{out}: {len(names)} functions", file=sys.stderr)
EOF

if [ "$which" = bench-toolwire ]; then
  # Only the benchmark binary's own link gets the option: its dependencies
  # are reused as built.
  # And its relocations packed, as the CLI's are where glibc loads them
  # (2.36 and later): 1 MB of relocations read at start becomes 16 KB.
  packed=()
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -n "$glibc" ] && [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -1)" = 2.36 ]; then
    packed=(-C link-arg=-Wl,-z,pack-relative-relocs)
  fi
  (cd "$here" && nice -n 10 cargo rustc --release --locked --bin bench-toolwire -- \
    -C link-arg=-Wl,--symbol-ordering-file="$out" -C link-arg=-Wl,--no-warn-symbol-ordering \
    "${packed[@]}" 1>&2)
  mv "$bin" "$bin-ordered"
  # The plain binary back, as bench/run.sh measures it.
  (cd "$here" && nice -n 10 cargo build --release --locked --bin bench-toolwire 1>&2)
  echo "ordered copy: $bin-ordered" >&2
fi
