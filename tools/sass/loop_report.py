#!/usr/bin/env python3
"""Static report of one kernel's SASS (from tools/sass/disasm.sh): its loops, and the control flow of a range.

  loop_report.py UNIT.sass KERNEL_SUBSTRING            the loops (backward branches) with their opcode histograms
  loop_report.py UNIT.sass KERNEL_SUBSTRING --flow A B  the flow from address A to B (hex): labels, branches,
                                                        barriers and copies' waits, and the opcode counts of the
                                                        straight runs between them
  loop_report.py UNIT.sass KERNEL_SUBSTRING --path A B --take C:3,D
                                                        the instructions one path from A to B executes: branches
                                                        at C (3 times) and D (once) taken, every other conditional
                                                        branch not taken (read them from --flow)

Counts are of instructions in the listing, not of instructions executed: a run that a branch skips on the hot path
still counts in a loop's histogram, so read the hot path from --flow. Opcodes are counted without their modifiers
(LDGSTS.E.BYPASS.128 is LDGSTS). No timing: see docs/perf/2026-11-29-sass for how the figures there were read.
"""

import argparse
import collections
import re
import signal
import sys

INS = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
LABEL = re.compile(r"\s*(\.L_x_\d+):")
FLOW = ("BRA", "BSSY", "BSYNC", "BAR", "EXIT", "WARPSYNC", "BREAK", "DEPBAR", "LDGDEPBAR", "CALL", "RET")


def kernel_lines(path, name):
    """The listing lines of the one kernel whose .text section name contains `name`."""
    lines, found, inside = [], [], False
    for ln in open(path, encoding="utf-8"):
        m = re.match(r"\s*\.text\.(\S+):", ln)
        if m:
            inside = name in m.group(1)
            if inside:
                found.append(m.group(1))
            continue
        if inside:
            lines.append(ln.rstrip("\n"))
    if len(found) != 1:
        sys.exit(f"{len(found)} kernels match {name!r}: {found[:8]}")
    return found[0], lines


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def parse(lines):
    ins, labels = [], {}
    for ln in lines:
        m = LABEL.match(ln)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = INS.match(ln)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins, labels


def histogram(ins):
    h = collections.Counter(opcode(t).split(".")[0] for _, t in ins)
    return " ".join(f"{k}:{v}" for k, v in h.most_common())


def loops(ins, labels):
    for i, (_, t) in enumerate(ins):
        if opcode(t).startswith("BRA"):
            m = re.search(r"\((\.L_x_\d+)\)", t)
            if m and labels.get(m.group(1), len(ins)) <= i:
                s = labels[m.group(1)]
                print(f"loop {ins[s][0]:05x}..{ins[i][0]:05x}: {i - s + 1} instructions: {histogram(ins[s:i + 1])}")


def flow(lines, lo, hi):
    run = []

    def flush():
        if run:
            print(f"    {len(run)}: {histogram(run)}")
            run.clear()

    for ln in lines:
        m = LABEL.match(ln)
        if m:
            flush()
            print(m.group(1))
            continue
        m = INS.match(ln)
        if not m:
            continue
        a, t = int(m.group(1), 16), m.group(2).strip()
        if not lo <= a <= hi:
            continue
        if opcode(t).startswith(FLOW):
            flush()
            print(f"  {a:05x} {t[:100]}")
        else:
            run.append((a, t))
    flush()


def path(ins, labels, start, stop, take):
    """Instructions executed from address `start` to address `stop` (inclusive): straight on, unconditional
    branches followed, a conditional branch taken when its address is in `take` (addr -> times; then it falls
    through). Prints the count per straight run and the total."""
    index = {a: i for i, (a, _) in enumerate(ins)}
    i, n, run, left = index[start], 0, [], dict(take)
    while True:
        a, t = ins[i]
        run.append((a, t))
        n += 1
        if a == stop:
            break
        op = opcode(t)
        target = re.search(r"\((\.L_x_\d+)\)", t)
        # BRA.DIV (taken when the warp has diverged) counts as conditional: a converged path does not take it.
        conditional = t.startswith("@") or op.startswith("BRA.DIV") or re.search(r"BRA\s+!?U?P\w+,", t)
        jump = op.startswith("BRA") and target and (not conditional or left.get(a, 0) > 0)
        if jump:
            if conditional:
                left[a] -= 1
            print(f"    {len(run)}: {histogram(run)}  -> {target.group(1)} from {a:05x}")
            run = []
            i = labels[target.group(1)]
        else:
            i += 1
        if n > 100000:
            sys.exit("no end: a loop is taken forever")
    print(f"    {len(run)}: {histogram(run)}")
    print(f"total {n} instructions executed from {start:05x} to {stop:05x}")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sass")
    ap.add_argument("kernel")
    ap.add_argument("--flow", nargs=2, metavar=("FROM", "TO"), help="hex addresses")
    ap.add_argument("--path", nargs=2, metavar=("FROM", "TO"), help="hex addresses: count one path's instructions")
    ap.add_argument("--take", default="", help="with --path: the conditional branches taken, ADDR[:TIMES],...")
    a = ap.parse_args()
    name, lines = kernel_lines(a.sass, a.kernel)
    ins, labels = parse(lines)
    print(f"{name}: {len(ins)} instructions")
    if a.path:
        take = {}
        for item in filter(None, a.take.split(",")):
            addr, _, times = item.partition(":")
            take[int(addr, 16)] = int(times or 1)
        path(ins, labels, int(a.path[0], 16), int(a.path[1], 16), take)
    elif a.flow:
        flow(lines, int(a.flow[0], 16), int(a.flow[1], 16))
    else:
        loops(ins, labels)


if __name__ == "__main__":
    main()
