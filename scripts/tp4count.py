#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tp4count.py: read the output of bench/tp4count.c, the instruction
counting plugin.

  tp4count.py windows FILE
      one line per window (a marker 1 and the next marker 2 or 130): its
      cell (the number of markers 4 before it: make bench marks each run
      so), its kernel, user and idle user instructions (see markers 5 and
      6 in bench/tp4count.c), and per vCPU where the plugin counted them
      (mode=cb)
  tp4count.py blocks FILE [SEQ]
      the blocks of profiled window SEQ (default: the last), kernel and
      user: address, length, instructions, most first
  tp4count.py profile FILE SYSTEM_MAP [SEQ] [TOP]
      the kernel functions of the profile record SEQ (default: the last),
      by instructions, the TOP (default 30) largest

  tp4count.py compare RESULTS SYSTEM_MAP ROW SIZE TOP MODE...
      make profile's report: for a make bench results folder whose
      windows were all profiled (BENCH_PROFILE=1), the kernel functions
      by instructions per packet of the cell ROW (rxdrop, rxdrop-poll,
      txpush, l2fwd, pingpong, xdp) and SIZE (pingpong: packets in
      flight), side by side for each MODE (its median run by kernel
      instructions per packet), the TOP largest of any

  tp4count.py spread RESULTS SYSTEM_MAP ROW SIZE MODE [TOP]
      where the runs of one cell differ: for a results folder as for
      compare, the kernel functions by the difference of their
      instructions per packet between the cell's cheapest and its
      dearest run, the TOP (default 15) largest

As a module: windows(path) and profile(path, system_map, seq) for the
bench's report.
"""
import bisect
import json
import os
import sys


def records(path):
    """The plugin's records: (kind, fields) tuples, the header checked."""
    with open(path) as f:
        head = f.readline().split()
        if len(head) < 2 or head[0] != 'tp4count' or head[1] != '2':
            raise ValueError('%s: not a tp4count output' % path)
        for line in f:
            parts = line.split()
            if parts:
                yield parts[0], parts[1:]


def windows(path):
    """[{'seq', 'cell', 'kernel', 'user', 'idle', 'vcpus': [(k, u, i),
    ...]}]: each window from a marker 1 or 129 to the next marker 2 or 130
    (the one that ends it; its seq is the profile's); cell: the markers 4
    before it (0: none)."""
    out, start, cell = [], None, 0
    for kind, f in records(path):
        if kind != 'M':
            continue
        seq, mark = int(f[0]), int(f[1])
        counts = [int(x) for x in f[2:]]
        if mark == 4:
            cell += 1
            start = None
        elif mark in (1, 129):
            start = counts
        elif mark in (2, 130) and start is not None:
            d = [b - a for a, b in zip(start, counts)]
            out.append({'seq': seq, 'cell': cell, 'kernel': d[0],
                        'user': d[1], 'idle': d[2],
                        'vcpus': [tuple(d[i:i + 3])
                                  for i in range(3, len(d), 3)]})
            start = None
    return out


def load_system_map(path):
    """Sorted text symbol addresses and their names."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in 'tTwW':
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def blocks(path, seq=None):
    """[(address, length, instructions)] of the blocks that ran in the
    profiled window ending at marker record @seq (default: the last)."""
    out = {}
    for kind, f in records(path):
        if kind == 'P':
            out.setdefault(int(f[0]), []).append(
                (int(f[1], 16), int(f[2]), int(f[3])))
    if not out:
        return []
    return out.get(max(out) if seq is None else seq, [])


def profile(path, system_map, seq=None):
    """{function: instructions} of the kernel in the profiled window
    ending at @seq (default: the last), each block counted in the function
    it starts in."""
    kblocks = [(a, n) for a, _, n in blocks(path, seq) if a >> 63]
    if not kblocks:
        return {}
    addrs, names = load_system_map(system_map)
    funcs = {}
    for vaddr, n in kblocks:
        i = bisect.bisect_right(addrs, vaddr) - 1
        name = names[i] if i >= 0 else '?'
        funcs[name] = funcs.get(name, 0) + n
    return funcs


def cell_runs(results, row, size, mode):
    """[(run, window)] of one cell of a make bench results folder: the
    runs of runs.jsonl that match, with their window (cell N = line N)."""
    lines = []
    with open(os.path.join(results, 'vm', 'runs.jsonl')) as f:
        for line in f:
            if line.strip():
                lines.append(json.loads(line))
    wins = {w['cell']: w for w in windows(os.path.join(results,
                                                       'count.txt'))}
    out = []
    for i, r in enumerate(lines, 1):
        if r.get('failed') or r.get('mode') != mode or i not in wins:
            continue
        poll, xdp = r.get('poll', False), r.get('xdp', '')
        if row == 'pingpong':
            ok = r['bench'] == 'pingpong' and r.get('inflight') == size \
                and not xdp
        elif row == 'xdp':
            ok = bool(xdp)
        else:
            ok = r['bench'] == row.replace('-poll', '') and \
                r['pkt_size'] == size and poll == row.endswith('-poll') \
                and not xdp
        if ok and r.get('packets'):
            out.append((r, wins[i]))
    return out


def per_packet(results, system_map, run, window):
    """{function: kernel instructions per packet} of a run's window."""
    funcs = profile(os.path.join(results, 'count.txt'), system_map,
                    window['seq'])
    return {f: v / run['packets'] for f, v in funcs.items()}


def compare(results, system_map, row, size, top, modes):
    """make profile's table (markdown) of one cell for @modes."""
    cols = []
    for m in modes:
        runs = sorted(cell_runs(results, row, size, m),
                      key=lambda x: x[1]['kernel'] / x[0]['packets'])
        if not runs:
            cols.append((m, None, None, {}))
            continue
        r, w = runs[len(runs) // 2]
        cols.append((m, r, w, per_packet(results, system_map, r, w)))
    names = {}
    for _, _, _, per in cols:
        for f, v in per.items():
            names[f] = max(names.get(f, 0), v)
    order = sorted(names, key=lambda f: -names[f])[:top]
    out = ['# make profile: %s, %s%s' % (
        row, size, ' in flight' if row == 'pingpong' else ' B'), '',
        'Kernel instructions per packet by function (each block counted in '
        'the function it starts in), both vCPUs, in the window of each '
        'mode\'s median run (by kernel instructions per packet); the '
        '%d largest of any mode. %s' % (top, results), '',
        '| function | ' + ' | '.join(m for m, *_ in cols) + ' |',
        '|---|' + '---:|' * len(cols)]
    for f in order:
        out.append('| %s | %s |' % (f, ' | '.join(
            '%.0f' % per[f] if f in per else '' for _, _, _, per in cols)))
    for label, key in (('**kernel, all**', 'kernel'),
                       ('**user, work**', 'user'),
                       ('**user, waiting**', 'idle')):
        out.append('| %s | %s |' % (label, ' | '.join(
            '%.0f' % (w[key] / r['packets']) if r else 'no run'
            for _, r, w, _ in cols)))
    out.append('| packets in the window | %s |' % ' | '.join(
        str(r['packets']) if r else '' for _, r, _, _ in cols))
    return '\n'.join(out) + '\n'


def spread_report(results, system_map, row, size, mode, top):
    """Where the runs of one cell differ: the functions by the difference
    of their instructions per packet between the cell's cheapest and its
    dearest run (by kernel instructions per packet), largest first."""
    runs = sorted(cell_runs(results, row, size, mode),
                  key=lambda x: x[1]['kernel'] / x[0]['packets'])
    if len(runs) < 2:
        return 'spread: fewer than two profiled runs of the cell\n'
    (ra, wa), (rb, wb) = runs[0], runs[-1]
    a = per_packet(results, system_map, ra, wa)
    b = per_packet(results, system_map, rb, wb)
    diff = sorted(set(a) | set(b), key=lambda f: -abs(b.get(f, 0) -
                                                        a.get(f, 0)))
    out = ['# %s %s %s: the cheapest run against the dearest' % (
        row, size, mode), '',
        'Kernel instructions per packet: %.1f (window %d) and %.1f (window '
        '%d), %d runs. %s' % (wa['kernel'] / ra['packets'], wa['seq'],
                              wb['kernel'] / rb['packets'], wb['seq'],
                              len(runs), results), '',
        '| function | cheapest | dearest | difference |', '|---|---:|---:|---:|']
    for f in diff[:top]:
        out.append('| %s | %.1f | %.1f | %+.1f |' % (
            f, a.get(f, 0), b.get(f, 0), b.get(f, 0) - a.get(f, 0)))
    return '\n'.join(out) + '\n'


def main(argv):
    if len(argv) >= 7 and argv[1] == 'spread':
        top = int(argv[7]) if len(argv) > 7 else 15
        sys.stdout.write(spread_report(argv[2], argv[3], argv[4],
                                       int(argv[5]), argv[6], top))
        return 0
    if len(argv) >= 7 and argv[1] == 'compare':
        sys.stdout.write(compare(argv[2], argv[3], argv[4], int(argv[5]),
                                 int(argv[6]), argv[7:]))
        return 0
    if len(argv) >= 3 and argv[1] == 'windows':
        for w in windows(argv[2]):
            v = ' '.join('cpu%d %d/%d/%d' % (i, k, u, n)
                         for i, (k, u, n) in enumerate(w['vcpus']))
            print('window %d: kernel %d user %d idle %d cell %d %s' %
                  (w['seq'], w['kernel'], w['user'], w['idle'],
                   w['cell'], v))
        return 0
    if len(argv) >= 3 and argv[1] == 'blocks':
        seq = int(argv[3]) if len(argv) > 3 else None
        for a, length, n in sorted(blocks(argv[2], seq), key=lambda x: -x[2]):
            print('%016x %3d %d' % (a, length, n))
        return 0
    if len(argv) >= 4 and argv[1] == 'profile':
        seq = int(argv[4]) if len(argv) > 4 else None
        top = int(argv[5]) if len(argv) > 5 else 30
        funcs = profile(argv[2], argv[3], seq)
        total = sum(funcs.values()) or 1
        for name, n in sorted(funcs.items(), key=lambda x: -x[1])[:top]:
            print('%12d %5.1f%% %s' % (n, 100.0 * n / total, name))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
