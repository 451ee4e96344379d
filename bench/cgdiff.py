#!/usr/bin/env python3
"""Per-request cost of each function: (Ir in BIG - Ir in BASE) / N, from two
callgrind files of the same server and path that differ only in the number of
requests served (see profile.sh). Start-up and shutdown cancel out.

usage: cgdiff.py BASE.cg BIG.cg N [--self] [--crates] [--top 40] [--grep REGEX]

--crates groups self costs by crate (from the source file's path; libc and
the allocator count as "libc").
"""
import re, subprocess, sys

def crate_of(entry):
    m = re.search(r"/registry/src/[^/]+/([A-Za-z0-9_\-]+?)-\d+\.\d+[^/]*/", entry)
    if m:
        return m.group(1)
    m = re.search(r"/work/main/crates/([^/]+)/", entry)
    if m:
        return m.group(1)
    m = re.search(r"/library/(core|alloc|std)/", entry)
    if m:
        return "rust " + m.group(1)
    if "/work/main/bench/" in entry:
        return "bench"
    return "libc / malloc / other"

def costs(path, inclusive, by_crate=False):
    out = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}",
                          "--threshold=100", "--auto=no", path], capture_output=True, text=True).stdout
    table = {}
    started = False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        if not started:
            continue
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        name = re.sub(r"\s\[[^\]]*\]$", "", m.group(2))
        name = re.sub(r"\s\([\d,]+x\)$", "", name)
        if by_crate:
            name = crate_of(name)
            table[name] = table.get(name, 0) + ir
            continue
        name = re.sub(r"^.*?\.rs:", "", name)
        name = re.sub(r"^\./[^:]*:|^\?\?\?:", "", name)
        name = re.sub(r"'\d+$", "", name)  # recursion markers
        if inclusive:
            table[name] = max(table.get(name, 0), ir)
        else:
            table[name] = table.get(name, 0) + ir
    return table

def main():
    args = sys.argv[1:]
    base, big, n = args[0], args[1], int(args[2])
    inclusive = "--self" not in args
    top = int(args[args.index("--top") + 1]) if "--top" in args else 40
    pat = re.compile(args[args.index("--grep") + 1]) if "--grep" in args else None
    by_crate = "--crates" in args
    if by_crate:
        inclusive = False
    a, b = costs(base, inclusive, by_crate), costs(big, inclusive, by_crate)
    rows = []
    for name, ir in b.items():
        d = (ir - a.get(name, 0)) / n
        if d >= 1 and (pat is None or pat.search(name)):
            rows.append((d, name))
    rows.sort(reverse=True)
    total = sum(d for d, _ in rows) if not inclusive else None
    try:
        for d, name in rows[:top]:
            pct = f" {100*d/total:5.1f}%" if total else ""
            print(f"{d:9.0f}{pct}  {name[:170]}")
        if total:
            print(f"{total:9.0f}  (sum of the rows above and below the cut)")
    except BrokenPipeError:
        pass

main()
