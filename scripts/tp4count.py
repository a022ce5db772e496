#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tp4count.py: read the output of bench/tp4count.c, the instruction
counting plugin.

  tp4count.py windows FILE
      one line per window (a marker 1 and the next marker 2 or 130): its
      kernel and user instructions, and per vCPU where the plugin counted
      them (mode=cb)
  tp4count.py blocks FILE [SEQ]
      the blocks of profiled window SEQ (default: the last), kernel and
      user: address, length, instructions, most first
  tp4count.py profile FILE SYSTEM_MAP [SEQ] [TOP]
      the kernel functions of the profile record SEQ (default: the last),
      by instructions, the TOP (default 30) largest

As a module: windows(path) and profile(path, system_map, seq) for the
bench's report.
"""
import bisect
import sys


def records(path):
    """The plugin's records: (kind, fields) tuples, the header checked."""
    with open(path) as f:
        head = f.readline().split()
        if len(head) < 2 or head[0] != 'tp4count' or head[1] != '1':
            raise ValueError('%s: not a tp4count output' % path)
        for line in f:
            parts = line.split()
            if parts:
                yield parts[0], parts[1:]


def windows(path):
    """[{'seq', 'kernel', 'user', 'vcpus': [(k, u), ...]}]: each window
    from a marker 1 or 129 to the next marker 2 or 130 (the one that ends
    it; its seq is the profile's)."""
    out, start = [], None
    for kind, f in records(path):
        if kind != 'M':
            continue
        seq, mark = int(f[0]), int(f[1])
        counts = [int(x) for x in f[2:]]
        if mark in (1, 129):
            start = counts
        elif mark in (2, 130) and start is not None:
            d = [b - a for a, b in zip(start, counts)]
            out.append({'seq': seq, 'kernel': d[0], 'user': d[1],
                        'vcpus': [(d[i], d[i + 1])
                                  for i in range(2, len(d), 2)]})
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


def main(argv):
    if len(argv) >= 3 and argv[1] == 'windows':
        for w in windows(argv[2]):
            v = ' '.join('cpu%d %d/%d' % (i, k, u)
                         for i, (k, u) in enumerate(w['vcpus']))
            print('window %d: kernel %d user %d %s' %
                  (w['seq'], w['kernel'], w['user'], v))
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
