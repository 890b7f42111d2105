#!/usr/bin/env python3
"""The SASS instructions with the most warp-stall samples, from Nsight Compute's per-instruction page.

    ncu -i REPORT --page source --csv --print-source sass > page.csv
    tools/gpu/ncu_top_stalls.py page.csv [N]

Prints, per kernel in the page, the N instructions with the most samples (address, samples, share of the kernel's,
the instruction) and the samples summed by opcode. The column is the first whose name holds "All Samples" (ncu's
"Warp Stall Sampling (All Samples)"), else the first that holds "Sampling"; a page without one is echoed (its head),
so that a change in ncu's layout shows rather than hides. Reads only; used by tools/gpu/ncu_cases.sh.
"""
import collections
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def report(rows, header, top):
    col = next((i for i, h in enumerate(header) if "All Samples" in h), None)
    if col is None:
        col = next((i for i, h in enumerate(header) if "Sampling" in h), None)
    src = next((i for i, h in enumerate(header) if h.strip() == "Source"), None)
    addr = next((i for i, h in enumerate(header) if h.strip() == "Address"), None)
    if col is None or src is None:
        print("no sample column in:", header)
        return
    picked = [(number(r[col]), r[addr] if addr is not None else "", r[src].strip()) for r in rows if len(r) > col]
    total = sum(p[0] for p in picked) or 1.0
    print(f"-- {header[col]}: {total:.0f} samples over {len(picked)} instructions")
    for samples, where, text in sorted(picked, key=lambda p: -p[0])[:top]:
        print(f"{where:>8} {samples:8.0f} {100 * samples / total:5.1f}%  {text}")
    by_op = collections.Counter()
    for samples, _, text in picked:
        words = [w for w in text.split() if not w.startswith("@")]
        by_op[words[0].split(".")[0] if words else "?"] += samples
    print("-- by opcode: " + ", ".join(f"{op} {100 * s / total:.1f}%" for op, s in by_op.most_common(16)))


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="", errors="replace") as f:
        lines = list(csv.reader(f))
    header, rows, found = None, [], False
    for r in lines:
        if any(c.strip() == "Source" for c in r):  # a kernel's page starts with its header row
            if header is not None:
                report(rows, header, top)
            header, rows, found = r, [], True
        elif header is not None:
            rows.append(r)
        elif r:
            print(" ".join(r))  # ncu's lines before the page (the kernel's name)
    if header is not None:
        report(rows, header, top)
    if not found:
        print("no per-instruction page; its head:")
        for r in lines[:20]:
            print(",".join(r))


if __name__ == "__main__":
    main()
