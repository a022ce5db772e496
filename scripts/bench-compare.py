#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-compare.py A B: two make bench results folders (their bench.json)
side by side: per cell, the median kernel instructions per packet of each
and their difference, (B - A) / A; the cells whose difference is beyond
2 % (the goal for two runs on one build) listed last. Exit status 0.

Kernel counts only: they are what the report's ratios rest on, and what a
user-space spin does not touch.
"""
import json
import os
import sys

GOAL = 0.02


def cells(path):
    with open(os.path.join(path, 'bench.json')) as f:
        d = json.load(f)
    out = {}
    for r in d['rows']:
        for m, c in r['cells'].items():
            k = c.get('count', {}).get('kpp')
            if k:
                out[(r['row'], m)] = k['median']
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = cells(argv[1]), cells(argv[2])
    keys = [k for k in a if k in b]
    print('| cell | mode | A | B | (B - A) / A |')
    print('|---|---|---:|---:|---:|')
    off = []
    for k in keys:
        d = (b[k] - a[k]) / a[k] if a[k] else 0.0
        print('| %s | %s | %.0f | %.0f | %+.2f%% |' % (k[0], k[1], a[k], b[k],
                                                     100 * d))
        if abs(d) > GOAL:
            off.append((k, d))
    print()
    print('%d cells in both; %d beyond %.0f%%%s' % (
        len(keys), len(off), 100 * GOAL, ':' if off else '.'))
    for k, d in sorted(off, key=lambda x: -abs(x[1])):
        print('- %s %s: %+.2f%%' % (k[0], k[1], 100 * d))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
