#!/usr/bin/env python3
"""Markdown tables from baracuda-profiler CSV output (tools/gpu/device_suite.sh's profile.csv: several CSV
blocks, each headed by a '# command' line). Usage: perf_tables.py CSV... [--ops op1,op2] [--shapes s1,s2]
Prints one table per op: kinds, shape, median time, GB/s, TOPS (when the op counts flops), the cuBLAS
baseline and speedup (when timed), status."""
import csv
import sys


def rows_of(path):
    header = None
    for line in open(path).read().splitlines():
        if not line or line.startswith('#'):
            continue
        if line.startswith('device,'):
            header = line.split(',')
            continue
        yield dict(zip(header, next(csv.reader([line]))))


def main(argv):
    ops = shapes = None
    paths = []
    it = iter(argv)
    for a in it:
        if a == '--ops':
            ops = next(it).split(',')
        elif a == '--shapes':
            shapes = next(it).split(',')
        else:
            paths.append(a)
    by_op = {}
    for p in paths:
        for r in rows_of(p):
            if (ops and r['op'] not in ops) or (shapes and r['shape'] not in shapes):
                continue
            by_op.setdefault(r['op'], []).append(r)
    for op in (ops or by_op):
        rs = by_op.get(op, [])
        if not rs:
            continue
        flops = any(float(r['flops']) > 0 for r in rs)
        base = any(float(r['baseline_us'] or 0) > 0 for r in rs if 'baseline_us' in r)
        head = ['kinds', 'shape', 'time (µs)', 'GB/s'] + (['TOPS'] if flops else []) + \
               (['cuBLAS f16 (µs)', 'speedup'] if base else []) + ['status']
        print(f'\n**{op}**\n')
        print('| ' + ' | '.join(head) + ' |')
        print('|' + '---|' * len(head))
        for r in rs:
            c = [r['kinds'], r['shape'], f"{float(r['time_us']):.1f}", f"{float(r['gbps']):.0f}"]
            if flops:
                c.append(f"{float(r['tflops']):.1f}")
            if base:
                b = float(r.get('baseline_us') or 0)
                c += [f'{b:.1f}' if b else '-', f"{float(r['speedup']):.2f}×" if b else '-']
            c.append(r['status'])
            print('| ' + ' | '.join(c) + ' |')


if __name__ == '__main__':
    main(sys.argv[1:])
