#!/usr/bin/env python3
"""Calls per request to the functions matching REGEX, from two callgrind files
that differ only in the number of requests served (see profile.sh), and the
top callers of each (inclusive cost of the calls, per request), or what each
calls (--callees: the inclusive cost of each callee's calls from it).

usage: cgcalls.py BASE.cg BIG.cg N REGEX [--callers | --callees]
"""
import re, sys
from collections import defaultdict

def parse(path):
    names = {}
    calls = defaultdict(int)              # callee -> calls
    cost = defaultdict(int)               # (caller, callee) -> inclusive Ir of the calls
    ncalls = defaultdict(int)             # (caller, callee) -> calls
    fn = cfn = None
    pending = None
    def name(tok):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", tok)
        if not m:
            return tok
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), tok)
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name(line[3:])
            elif line.startswith("cfn="):
                cfn = name(line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif pending is not None and line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                calls[cfn] += pending
                cost[(fn, cfn)] += ir
                ncalls[(fn, cfn)] += pending
                pending = None
    return calls, cost, ncalls

def main():
    base, big, n, pat = sys.argv[1], sys.argv[2], int(sys.argv[3]), re.compile(sys.argv[4])
    show_callers = "--callers" in sys.argv
    show_callees = "--callees" in sys.argv
    a, ac, an = parse(base)
    b, bc, bn = parse(big)
    for callee in sorted(b, key=lambda k: -(b[k] - a.get(k, 0))):
        if not pat.search(callee):
            continue
        d = (b[callee] - a.get(callee, 0)) / n
        if d < 0.05:
            continue
        print(f"{d:8.2f} calls/request  {callee[:150]}")
        # Callers (whose calls to this function these are) or callees (what
        # this function calls): the same rows, keyed on the other end.
        if show_callers or show_callees:
            rows = []
            for (caller, c), ir in bc.items():
                if (c if show_callers else caller) != callee:
                    continue
                k = (bn[(caller, c)] - an.get((caller, c), 0)) / n
                if k >= 0.05:
                    other = caller if show_callers else c
                    rows.append((k, (ir - ac.get((caller, c), 0)) / n, other))
            order = (lambda r: (r[0], r[1])) if show_callers else (lambda r: r[1])
            way = "from" if show_callers else "to"
            for k, ir, other in sorted(rows, key=order, reverse=True)[:int(__import__("os").environ.get("TOP","15"))]:
                print(f"          {k:6.2f} calls {ir:8.0f} Ir  {way} {other[:140]}")

main()
