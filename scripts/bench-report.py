#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py RESULTS [--release R] [--secs S] [--runs N]

Reads RESULTS/vm/runs.jsonl (one JSON line per run, from tpbench, xskbench,
shmring and the capture row's tcpdump and pktgen runs, see
scripts/guest-bench.sh) and writes, in RESULTS:
  bench.json  every run, and per row and mode the median, min, max and the
              ratio of the median to V3's;
  bench.md    the same as markdown tables (rates, ratios of the medians to
              V3 and V2, and the median of the round-by-round ratios to V3;
              for the capture row, drops, what pktgen sent meanwhile and
              which limit V4+ZC reached);
  bench.png   the chart: rates (log scale, min-max bars) and ratios to V3,
              and instructions per packet where counted.
Prints bench.md. Rates are packets per second; each row is measured in the
same boot, so only ratios within it mean something.

With RESULTS/count.txt (the instruction counting plugin's output, make
bench), each run gets the instructions of its window (the Nth marker 4 is
the Nth line of runs.jsonl) and, divided by the packets it counted in that
window: "kernel" (both vCPUs), "user" (its turns that moved packets) and
"idle" (the user instructions of its turns that found nothing to do,
marked by the program; kept out of the work). "net": kernel less the
kernel instructions per packet of pktgen alone (the rxdrop row's "pktgen"
cell of the same size) where pktgen feeds the cell, plus user. Per cell:
the median over the rounds and the spread, (max - min) / median. Ratios
between modes from the counts: a mode's net instructions per packet over
V3's (below 1: cheaper).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp4count  # noqa: E402

# The goal for the counts: two make bench runs within this of each other.
SPREAD_GOAL = 0.02

MODES = [  # column id, heading
    ('v2', 'V2'), ('v3', 'V3'), ('v4', 'V4'), ('v4zc', 'V4+ZC'),
    ('xdp-drv', 'AF_XDP'), ('xdp-zc', 'AF_XDP ZC'),
    ('shm', 'shm ring (emulator check)'),
    # The capture row: pktgen alone, no capture: the ceiling.
    ('pktgen', 'pktgen'),
]
ROWS = [  # row id, bench, pkt_size, inflight, poll[, tpbench --xdp[, variant]]
    ('rxdrop 64B', 'rxdrop', 64, 0, False),
    ('rxdrop 1500B', 'rxdrop', 1500, 0, False),
    ('rxdrop-poll 64B', 'rxdrop', 64, 0, True),
    ('rxdrop-poll 1500B', 'rxdrop', 1500, 0, True),
    # A capture's settings: V4 as the project's libpcap sets it (SO_RCVLOWAT
    # 64, poll() 1 ms), V3 as the stock libpcap with tcpdump's 1000 ms.
    ('rxdrop-poll 64B libpcap', 'rxdrop', 64, 0, True, '', 'pcap'),
    ('rxdrop-poll 1500B libpcap', 'rxdrop', 1500, 0, True, '', 'pcap'),
    ('txpush 64B', 'txpush', 64, 0, False),
    ('txpush 1500B', 'txpush', 1500, 0, False),
    ('l2fwd 64B', 'l2fwd', 64, 0, False),
    ('l2fwd 1500B', 'l2fwd', 1500, 0, False),
    ('l2fwd-1 ping-pong', 'pingpong', 64, 1, False),
    ('l2fwd-64 ping-pong', 'pingpong', 64, 64, False),
    # XDP on zero-copy queues: the rate is what the program counted; V3
    # there is veth's native XDP path without zero-copy (the socket gets
    # nothing), V4+ZC the program on the zero-copy queue.
    ('rxdrop 64B XDP_DROP', 'rxdrop', 64, 0, False, 'drop'),
    # An XDP_PASS program on both ends: its cost is the ratio to the V4+ZC
    # of the row without it.
    ('l2fwd-64 ping-pong XDP_PASS', 'pingpong', 64, 64, False, 'pass'),
    # The copy modes with veth's NAPI (GRO) path on, as V4+ZC has it.
    ('rxdrop 64B GRO', 'rxdrop', 64, 0, False, '', 'gro'),
    ('l2fwd-64 ping-pong GRO', 'pingpong', 64, 64, False, '', 'gro'),
    # The rings' wake-up flags (tpbench --wakeup): V4 and V4+ZC, against
    # the same modes of the txpush and ping-pong rows without them.
    ('txpush 64B wake-up', 'txpush', 64, 0, False, '', 'wakeup'),
    ('txpush 1500B wake-up', 'txpush', 1500, 0, False, '', 'wakeup'),
    ('l2fwd-1 ping-pong wake-up', 'pingpong', 64, 1, False, '', 'wakeup'),
    ('l2fwd-64 ping-pong wake-up', 'pingpong', 64, 64, False, '',
     'wakeup'),
    ('capture 64B', 'capture', 64, 0, False),
    ('capture 1500B', 'capture', 1500, 0, False),
    # The wire: two virtio-net NICs back to back (QEMU's hub), pktgen on
    # one (CPU 0), the program on the other (CPU 1, with its interrupts).
    ('wire rxdrop 64B', 'rxdrop', 64, 0, False, '', 'wire'),
    ('wire rxdrop 1500B', 'rxdrop', 1500, 0, False, '', 'wire'),
    ('wire l2fwd 64B', 'l2fwd', 64, 0, False, '', 'wire'),
    ('wire l2fwd 1500B', 'l2fwd', 1500, 0, False, '', 'wire'),
    ('wire txpush 64B', 'txpush', 64, 0, False, '', 'wire'),
    ('wire txpush 1500B', 'txpush', 1500, 0, False, '', 'wire'),
]

# The capture row's goal: V4+ZC captures GOAL_X times what V3 captures, or
# all that pktgen sends with no drop (then pktgen is the limit).
GOAL_X = 10.0


RATIO_TOP = 10.0


def load(path, count_path=None):
    """The runs and the failed ones; with @count_path, each run that has
    a window gets 'count': its instructions, and per packet."""
    runs, failed, lines = [], [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                failed.append({'label': 'unreadable line', 'error': line[:200]})
                continue
            lines.append(r)
            (failed if r.get('failed') else runs).append(r)
    if count_path and os.path.exists(count_path):
        attach_counts(lines, tp4count.windows(count_path))
    return runs, failed


def attach_counts(lines, windows):
    """Window of cell N (1-based) -> run N; per packet counted."""
    for w in windows:
        if not 1 <= w['cell'] <= len(lines):
            continue
        r = lines[w['cell'] - 1]
        n = r.get('packets') or 0
        c = {'kernel': w['kernel'], 'user': w['user'], 'idle': w['idle'],
             'vcpus': w['vcpus']}
        if n > 0:
            c.update(kpp=w['kernel'] / n, upp=w['user'] / n,
                     ipp=w['idle'] / n)
            # CPU 1's alone: the wire's rows run the program and the
            # receiving NIC's NAPIs there (pktgen on CPU 0).
            if len(w['vcpus']) > 1:
                k1, u1, _ = w['vcpus'][1]
                c.update(cpu1pp=(k1 + u1) / n, cpu1kpp=k1 / n)
        r['count'] = c


# The cells pktgen feeds: their generator is pktgen alone of that size.
FED = ('rxdrop', 'l2fwd')


def spread(v):
    m = abs(statistics.median(v))
    return (max(v) - min(v)) / m if m else 0.0


def count_cell(sel):
    """A cell's instructions per packet: median, min, max, spread of
    kernel, user and idle, over the runs that have them."""
    c = {}
    for k in ('kpp', 'upp', 'ipp', 'cpu1pp', 'cpu1kpp'):
        v = [r['count'][k] for r in sel if k in r.get('count', {})]
        if v:
            c[k] = {'median': statistics.median(v), 'min': min(v),
                    'max': max(v), 'spread': spread(v), 'runs': v}
    return c


def count_net(rows):
    """Less the generator: kernel per packet less pktgen alone's of the
    same size, where pktgen feeds the cell; net = that plus user work."""
    gen = {r['pkt_size']: r['cells']['pktgen']['count']['kpp']['median']
           for r in rows if r['bench'] == 'rxdrop' and not r['poll'] and
           not r['xdp'] and not r['variant'] and 'kpp' in
           r['cells'].get('pktgen', {}).get('count', {})}
    for r in rows:
        for m, c in r['cells'].items():
            k = c.get('count', {})
            if 'kpp' not in k or m == 'pktgen':
                continue
            # The wire's pktgen is not veth's: none is taken off (its
            # rows are reported per CPU, wire_tables()).
            fed = r['bench'] in FED and r['variant'] != 'wire'
            g = gen.get(r['pkt_size']) if fed else 0.0
            if g is None:
                continue
            k['generator'] = g
            k['knet'] = k['kpp']['median'] - g
            k['net'] = k['knet'] + k.get('upp', {}).get('median', 0.0)
            # The spread of the net work, run by run (a run has both
            # counts or neither): the user part spreads where the reader
            # takes what comes, a few packets a turn.
            user = k.get('upp', {}).get('runs') or [0.0] * len(k['kpp']['runs'])
            k['net_spread'] = spread([a - g + b for a, b in
                                      zip(k['kpp']['runs'], user)])
            k['knet_spread'] = spread([a - g for a in k['kpp']['runs']])
        ref = r['cells'].get('v3', {}).get('count', {})
        if r['bench'] == 'pingpong':
            # V3's ping-pong waits for its block timer: the cheaper of
            # V2 and V3, as for the rates.
            refs = [r['cells'].get(m, {}).get('count', {})
                    for m in ('v2', 'v3')]
            refs = [x for x in refs if x.get('net')]
            ref = min(refs, key=lambda x: x['net']) if refs else {}
        for m, c in r['cells'].items():
            k = c.get('count', {})
            if 'net' in k and ref.get('net', 0) > 0 and \
                    ref.get('knet', 0) > 0:
                k['ratio_ref'] = k['net'] / ref['net']
                # The noise rule: a ratio one of whose net counts
                # spread beyond the goal over the rounds is within
                # that noise (two make bench runs differ there).
                k['ratio_noisy'] = max(k['net_spread'],
                                       ref['net_spread']) > SPREAD_GOAL
                # The same for the kernel's work alone (less pktgen's).
                k['kratio_ref'] = k['knet'] / ref['knet']
                k['kratio_noisy'] = max(k['knet_spread'],
                                        ref['knet_spread']) > SPREAD_GOAL


def summarize(runs):
    rows = []
    for name, bench, size, inflight, poll, *rest in ROWS:
        prog = rest[0] if rest else ''
        variant = rest[1] if len(rest) > 1 else ''
        cells = {}
        for mode, _ in MODES:
            sel = [r for r in runs
                   if r['bench'] == bench and r['mode'] == mode and
                   r['pkt_size'] == size and r.get('inflight', 0) == inflight
                   and r.get('poll', False) == poll and
                   r.get('xdp', '') == prog and
                   r.get('variant', '') == variant]
            pps = [r['pps'] for r in sel]
            if pps:
                cells[mode] = {'median': statistics.median(pps),
                               'min': min(pps), 'max': max(pps),
                               'runs': pps}
                if bench == 'capture':
                    cells[mode].update(capture_cell(sel))
                cnt = count_cell(sel)
                if cnt:
                    cells[mode]['count'] = cnt
                # The receiver waited (idle turns) or got what pktgen
                # alone sends: its rate is its input's.
                sent = [r['packets'] / r['pktgen_sent'] for r in sel
                        if r.get('pktgen_sent')]
                if sent:
                    cells[mode]['of_sent'] = statistics.median(sent)
                drops = [r['drops'] for r in sel if 'drops' in r]
                if drops:
                    cells[mode]['drops'] = statistics.median(drops)
                # tpbench's kicks (sendto(), recvfrom()) per packet.
                kicks = [r['kicks'] / r['packets'] for r in sel
                         if 'kicks' in r and r['packets']]
                if kicks:
                    cells[mode]['kicks_pp'] = statistics.median(kicks)
            # For a --poll reader: how often it slept (tpbench's voluntary
            # context switches) per thousand packets received, and what it
            # cost its CPU (user and system time) per packet, microseconds.
            polled = [r for r in sel if poll and r['packets']]
            sleeps = [1e3 * r['sleeps'] / r['packets'] for r in polled
                      if r.get('sleeps', -1) >= 0]
            if sleeps:
                cells[mode]['sleeps_per_k'] = statistics.median(sleeps)
            cpu = [1e6 * r['cpu'] / r['packets'] for r in polled if 'cpu' in r]
            if cpu:
                cells[mode]['cpu_us'] = statistics.median(cpu)
        v2 = cells.get('v2', {}).get('median')
        v3 = cells.get('v3', {}).get('median')
        v4 = cells.get('v4', {}).get('median')
        xdp = cells.get('xdp-drv', {}).get('median')
        # V3's ping-pong waits for its block timer: its ratios say nothing
        # there, so the ping-pong rows compare with the better of V2 and V3.
        base = max(v2 or 0, v3 or 0) if bench == 'pingpong' else v3
        for c in cells.values():
            c['ratio_v3'] = c['median'] / v3 if v3 else None
            c['ratio_v2'] = c['median'] / v2 if v2 else None
            c['ratio_ref'] = c['median'] / base if base else None
            c['ratio_v4'] = c['median'] / v4 if v4 else None
            c['ratio_xdp'] = c['median'] / xdp if xdp else None
            # Run i of a mode and run i of V3 come from the same round,
            # minutes apart at most: their ratio cancels much of a slow
            # drift of the (emulating) host that the medians keep.
            ref = cells.get('v3', {}).get('runs', [])
            paired = [a / b for a, b in zip(c['runs'], ref) if b]
            if paired and len(ref) == len(c['runs']):
                c['paired_v3'] = {'median': statistics.median(paired),
                                  'min': min(paired), 'max': max(paired),
                                  'ratios': paired}
        if prog:
            # The same row without a program, measured in the same boot.
            plain = next((r for r in rows if r['bench'] == bench and
                          r['pkt_size'] == size and
                          r['inflight'] == inflight and
                          r['poll'] == poll and not r['xdp'] and
                          not r['variant']), None)
            for mode, c in cells.items():
                p = plain and plain['cells'].get(mode, {}).get('median')
                c['ratio_noxdp'] = c['median'] / p if p else None
        if cells:
            rows.append({'row': name, 'bench': bench, 'pkt_size': size,
                         'inflight': inflight, 'poll': poll, 'xdp': prog,
                         'variant': variant, 'cells': cells})
            if bench == 'capture':
                rows[-1]['capture'] = capture_goal(cells)
    count_net(rows)
    input_bound(rows)
    return rows


def input_bound(rows):
    """Marks the cells whose rate is their input's: a receiver fed by
    pktgen that spent more user instructions waiting than working, or
    that got at least 90 % of what pktgen alone sends of that size; an
    l2fwd whose rate is within 10 % of rxdrop's of the same mode."""
    alone = {r['pkt_size']: r['cells']['pktgen']['median'] for r in rows
             if r['bench'] == 'rxdrop' and 'pktgen' in r['cells'] and
             not r['variant']}
    rx = {(r['pkt_size'], m): c['median'] for r in rows
          if r['bench'] == 'rxdrop' and not r['poll'] and not r['xdp'] and
          not r['variant'] for m, c in r['cells'].items()}
    for r in rows:
        if r['bench'] not in FED or r['variant'] == 'wire':
            continue
        for m, c in r['cells'].items():
            if m == 'pktgen':
                continue
            why = []
            k = c.get('count', {})
            if k.get('ipp', {}).get('median', 0) > \
                    k.get('upp', {}).get('median', 0) > 0:
                why.append('waited')
            a = alone.get(r['pkt_size'])
            if a and c['median'] >= 0.9 * a:
                why.append('pktgen')
            x = rx.get((r['pkt_size'], m))
            if r['bench'] == 'l2fwd' and x and \
                    abs(c['median'] - x) <= 0.1 * x:
                why.append('rxdrop')
            if why:
                c['input_bound'] = why


def capture_cell(sel):
    """A capture cell's counts besides the rate: pktgen's rate meanwhile
    and its errors (what veth refused: its backlog or ring full), the share
    of what it sent that was captured, the drops, and in how many runs
    everything pktgen sent was captured with no drop."""
    med = statistics.median
    c = {'sent_pps': med([r['sent_pps'] for r in sel]),
         'pktgen_error_rate': med([
             r['pktgen_errors'] / (r['sent'] + r['pktgen_errors'])
             if r['sent'] + r['pktgen_errors'] else 0 for r in sel]),
         'buffer_kib': sel[0].get('buffer_kib')}
    tcpdump = [r for r in sel if r.get('tool') == 'tcpdump']
    if not tcpdump:
        return c
    c['captured_of_sent'] = med([r['packets'] / r['sent'] if r['sent'] else 0
                                 for r in tcpdump])
    c['drops'] = med([r['drops'] for r in tcpdump])
    c['drop_rate'] = med([r['drops'] / r['received'] if r['received'] else 0
                          for r in tcpdump])
    c['total_drops'] = [r['total_drops'] for r in tcpdump]
    c['runs_all_captured'] = sum(
        1 for r in tcpdump if r['total_drops'] == 0 and
        r['total_pktgen_errors'] == 0 and
        r['total_captured'] >= r['total_sent'] > 0)
    return c


def capture_goal(cells):
    """Which limit V4+ZC reached in a capture row: GOAL_X times V3's rate,
    or pktgen's (all it sent captured, no drop, in every run)."""
    zc, v3 = cells.get('v4zc'), cells.get('v3')
    g = {'goal_x': GOAL_X,
         'v4zc_to_v3': zc['median'] / v3['median'] if zc and v3 else None}
    g['goal_x_reached'] = g['v4zc_to_v3'] is not None and \
        g['v4zc_to_v3'] >= GOAL_X
    g['pktgen_limit'] = bool(zc) and \
        zc.get('runs_all_captured', 0) == len(zc['runs'])
    if not zc or not v3:
        g['verdict'] = 'not measured'
    elif g['goal_x_reached']:
        g['verdict'] = '%gx V3' % GOAL_X
    elif g['pktgen_limit']:
        g['verdict'] = 'pktgen'
    else:
        g['verdict'] = 'neither'
    return g


def columns(rows):
    return [(m, h) for m, h in MODES if any(m in r['cells'] for r in rows)]


def table(title, rows, cols, cell):
    """A markdown table: a row per benchmark, cell(c) per mode's cell."""
    out = ['', '## ' + title, '',
           '| benchmark | ' + ' | '.join(h for _, h in cols) + ' |',
           '|---|' + '---:|' * len(cols)]
    for r in rows:
        cells = [cell(r['cells'][m]) if m in r['cells'] else ''
                 for m, _ in cols]
        out.append('| %s | %s |' % (r['row'], ' | '.join(cells)))
    return out


def kpps(pps):
    """Thousands, with a decimal or two when that is all there is."""
    k = pps / 1e3
    return '%.0f' % k if k >= 10 else '%.2g' % k


def fmt_ratio(v):
    return '%.2f' % v if v is not None else ''


def ratio(ref):
    def cell(c):
        v = c.get('ratio_' + ref)
        return '%.2f' % v if v is not None else ''
    return cell


def measured_runs(rows):
    """The runs each cell has: "3", or "2-3" where some failed."""
    n = sorted({len(c['runs']) for r in rows for c in r['cells'].values()})
    if not n:
        return '0'
    return str(n[0]) if n[0] == n[-1] else '%d-%d' % (n[0], n[-1])


def markdown(rows, meta, failed):
    cols = columns(rows)
    # The shared-memory ring is a check of the emulator (no kernel), and
    # pktgen alone an input: neither is a mode to compare with.
    rcols = [c for c in cols if c[0] not in ('shm', 'pktgen')]
    out = ['# AF_PACKET V4 benchmark, %s' % meta['date'], '',
           'Kernel %s, %s; %s runs of %d s per cell (%d asked), all in one '
           'boot. Only the ratios mean something: the machine is emulated.' %
           (meta['release'], meta['machine'], measured_runs(rows),
            meta['secs'], meta['runs'])]
    out += table('Packets per second: median (min-max), thousands', rows,
                 cols, lambda c: '%s (%s-%s)' % (
                     kpps(c['median']), kpps(c['min']), kpps(c['max'])))
    out += table('Ratio of the medians to V3 (ping-pong rows: to the better '
                 'of V2 and V3)', rows, rcols, ratio('ref'))
    # The capture row has no V2.
    v2rows = [r for r in rows if r['bench'] != 'capture']
    if v2rows:
        out += table('Ratio of the medians to V2', v2rows, rcols,
                     ratio('v2'))
    zc = [r for r in rows if 'v4zc' in r['cells']]
    if zc:
        out += ['', '## V4+ZC: ratio of the medians to V4 copy mode and to '
                'AF_XDP', '', '| benchmark | V4+ZC / V4 | V4+ZC / AF_XDP |',
                '|---|---:|---:|']
        out += ['| %s | %s | %s |' % (
            r['row'], fmt_ratio(r['cells']['v4zc'].get('ratio_v4')),
            fmt_ratio(r['cells']['v4zc'].get('ratio_xdp'))) for r in zc]
    out += table('Ratio to V3 round by round: median (min-max)', rows, rcols,
                 lambda c: '%.2f (%.2f-%.2f)' % (
                     c['paired_v3']['median'], c['paired_v3']['min'],
                     c['paired_v3']['max']) if 'paired_v3' in c else '')
    xdps = [r for r in rows if r['xdp']]
    if xdps:
        out += ['', '## XDP: ratio to the same mode without a program, and '
                'V4+ZC to V3', '',
                'XDP_DROP row: V3 is veth\'s native XDP path (no zero-copy; '
                'the socket gets nothing), V4+ZC the same program on the '
                'zero-copy queue; the rate is what the program counted.', '',
                '| benchmark | mode | / same without XDP | / V3 |',
                '|---|---|---:|---:|']
        out += ['| %s | %s | %s | %s |' % (
            r['row'], dict(MODES).get(m, m),
            fmt_ratio(c.get('ratio_noxdp')), fmt_ratio(c.get('ratio_v3')))
            for r in xdps for m, c in r['cells'].items()]
    counted = [r for r in rows if r['variant'] != 'wire' and
               any('count' in c for c in r['cells'].values())]
    if counted:
        out += count_tables(counted, columns(counted),
                            [c for c in rcols if c in columns(counted)])
    wired = [r for r in rows if r['variant'] == 'wire']
    if wired:
        out += wire_tables(wired, [c for c in rcols
                                   if c in columns(wired)])
    woken = [r for r in rows if r['variant'] == 'wakeup']
    if woken:
        out += wakeup_table(rows, woken)
    bound = [(r['row'], dict(MODES).get(m, m), c['input_bound'])
             for r in rows for m, c in r['cells'].items()
             if c.get('input_bound')]
    if bound:
        out += ['', '## Rates bound by their input', '',
                'Cells whose rate says how fast the input came, not how '
                'fast the mode is: "waited": the receiver spent more user '
                'instructions in turns that found nothing than in turns '
                'that moved packets; "pktgen": it got 90 % or more of '
                'what pktgen alone sends; "rxdrop": l2fwd within 10 % of '
                'rxdrop\'s rate of the same mode.', '']
        out += ['- %s %s: %s' % (row, h, ', '.join(w)) for row, h, w in bound]
    caps = [r for r in rows if r['bench'] == 'capture']
    if caps:
        out += capture_tables(caps)
    slept = [r for r in rows
             if any('sleeps_per_k' in c for c in r['cells'].values())]
    if slept:
        out += table('Sleeps of the poll() reader per thousand packets '
                     '(median)', slept, cols,
                     lambda c: '%.1f' % c['sleeps_per_k']
                     if 'sleeps_per_k' in c else '')
    costly = [r for r in rows
              if any('cpu_us' in c for c in r['cells'].values())]
    if costly:
        out += table('CPU time of the poll() reader per packet, '
                     'microseconds (median)', costly, cols,
                     lambda c: '%.2f' % c['cpu_us'] if 'cpu_us' in c else '')
    out += ['', 'rxdrop/l2fwd: pktgen floods one end of a veth pair from CPU 0, '
            'the benchmark runs on the other end on CPU 1 (the receive path '
            'up to its ring runs in pktgen\'s softirq, CPU 0); rxdrop-poll: '
            'the same with a reader that sleeps in poll() when its ring is '
            'empty, as tcpdump does, instead of spinning (V3 wakes its '
            'reader once per block, 64 frames\' bytes: about 800 packets of '
            '64 bytes, 80 of 1500; V4 asks to be woken once as many frames '
            'wait, SO_RCVLOWAT 818 and 82; both wait 4 ms for a partial batch, '
            'V3\'s block timer and V4\'s poll() timeout, a jiffy at '
            'HZ=250, what V3\'s timer gives when asked for less). '
            'txpush: sends '
            'on a veth from CPU 1. '
            'l2fwd-N: N packets ping-ponged between two processes on the two '
            'ends of a veth pair; shm ring: the same between two processes '
            'over shared memory, no kernel at all. AF_XDP: copy mode (XDP_COPY) '
            'with veth\'s native XDP redirecting to it (ping-pong: on both '
            'ends). V4+ZC: PACKET_ZEROCOPY on queue pair 0 (ping-pong: both '
            'ends). V3 hands over whole '
            'blocks: with few packets in flight its ping-pong waits for the '
            'block timer, hence the ping-pong rows\' ratios to the better of '
            'V2 and V3.']
    out += COPIES
    if caps:
        out += ['', 'capture: tcpdump -w /dev/null -B %d on the receiving end '
                '(CPU 1) while pktgen floods as for rxdrop: V3 the stock '
                '/usr/bin/tcpdump, V4 and V4+ZC the patched one with '
                '--tpacket-version=4 and --zerocopy=0; the rate is what it '
                'captured between two statistics lines (SIGUSR1) %d s '
                'apart, the drops are the kernel\'s ("dropped by kernel"). '
                'pktgen: pktgen alone, nothing capturing, the ceiling (a '
                'capture slows pktgen down: the receive path runs in its '
                'softirq).' % (capture_buffer(caps), meta['secs'])]
    if failed:
        out += ['', '## Failed runs', '']
        out += ['- %s (exit %s): %s' % (f.get('label', '?'), f.get('exit', '?'),
                                        ' '.join(f.get('error', '').split())[:300])
                for f in failed]
    return '\n'.join(out) + '\n'


def stat(key):
    """A cell of a count table: the median of a count per packet and its
    spread over the rounds."""
    def cell(c):
        k = c.get('count', {}).get(key)
        if not k:
            return ''
        return '%.0f (%.1f%%)' % (k['median'], 100 * k['spread'])
    return cell


def wire_tables(rows, cols):
    """The wire's rows: instructions per packet on CPU 1 (the receiving
    NIC's NAPIs and the program; for txpush the sender and its NIC's
    completions), on both vCPUs, their ratios to V3, and V4+ZC to AF_XDP
    zero-copy."""
    def to(ref, key):
        def cell(c, r):
            a = c.get('count', {}).get(key, {}).get('median')
            b = r['cells'].get(ref, {}).get('count', {}).get(key, {}).get(
                'median')
            return '%.2f' % (a / b) if a and b else ''
        return cell

    def rtable(title, fn):
        out = ['', '### ' + title, '',
               '| benchmark | ' + ' | '.join(h for _, h in cols) + ' |',
               '|---|' + '---:|' * len(cols)]
        for r in rows:
            out.append('| %s | %s |' % (r['row'], ' | '.join(
                fn(r['cells'][m], r) if m in r['cells'] else ''
                for m, _ in cols)))
        return out
    out = ['', '## The wire: virtio-net to virtio-net', '',
           'pktgen sends out of one virtio-net NIC (CPU 0) to the other, '
           "promiscuous, through QEMU's hub; the program runs on that one "
           '(CPU 1), whose interrupts, hence NAPIs, are on CPU 1 too; '
           'l2fwd sends each packet back out of it, txpush sends out of '
           'it, to an address QEMU drops. Both NICs have the DMA API '
           '(iommu_platform=on), so that AF_XDP zero-copy runs. AF_XDP: '
           'native XDP redirecting to a copy-mode socket; AF_XDP ZC: to a '
           'zero-copy one. Instructions counted by the emulator in each '
           "run's window, per packet the run counted: median over the "
           'rounds (spread). What a received packet costs in copies and '
           'skbs (from the code): V2, V3 and V4 an skb that '
           'receive_mergeable() builds (64 bytes copied into its head; '
           '1500 bytes: the skb built around the buffer, or its Ethernet '
           'header copied and the rest a page fragment) and one copy into '
           'the ring; AF_XDP one copy (xsk_rcv()) from the RX buffer '
           'XDP ran on, no skb; V4+ZC and AF_XDP ZC none and none: the '
           'device writes into the frame. Sent: V4 one copy into an skb, '
           'AF_XDP one copy into an skb, V4+ZC and AF_XDP ZC none: the '
           'device reads the frame.']
    if any('cpu1pp' in c.get('count', {}) for r in rows
           for c in r['cells'].values()):
        out += rtable('CPU 1, kernel and user instructions per packet: '
                      'median (spread)',
                      lambda c, r: stat('cpu1pp')(c))
        out += rtable('CPU 1, kernel instructions per packet',
                      lambda c, r: stat('cpu1kpp')(c))
        out += rtable('CPU 1, kernel and user, ratio to V3 (below 1: '
                      'cheaper)', to('v3', 'cpu1pp'))
        out += rtable('CPU 1, kernel and user, ratio to AF_XDP ZC',
                      to('xdp-zc', 'cpu1pp'))
    # A copy mode can drop in the kernel after the driver's work (its
    # ring full), which its count per packet received then includes; a
    # zero-copy mode leaves what it cannot take in the device (the hub
    # holds pktgen back). What each received of what pktgen sent:
    fed = [r for r in rows if r['bench'] in FED]
    if any('of_sent' in c for r in fed for c in r['cells'].values()):
        out += ['', '### Received of what pktgen sent while the program '
                'ran (median; its set-up and teardown included, so below 1 '
                'even with no drop: compare the modes)', '',
                '| benchmark | ' + ' | '.join(h for _, h in cols) + ' |',
                '|---|' + '---:|' * len(cols)]
        for r in fed:
            out.append('| %s | %s |' % (r['row'], ' | '.join(
                '%.2f' % r['cells'][m]['of_sent']
                if 'of_sent' in r['cells'].get(m, {}) else ''
                for m, _ in cols)))
    out += rtable('Both vCPUs, kernel and user instructions per packet '
                  '(pktgen\'s included)',
                  lambda c, r: '%.0f' % (c['count']['kpp']['median'] +
                                         c['count'].get('upp', {}).get(
                                             'median', 0))
                  if 'kpp' in c.get('count', {}) else '')
    return out


def wakeup_table(rows, woken):
    """The wake-up flags: each V4 and V4+ZC cell with them beside the
    same cell of the row without them (the same rounds)."""
    out = ['', '## Wake-up flags (tpbench --wakeup)', '',
           'With: the program kicks (sendto() after posting TX frames, '
           'recvfrom() after posting RX frames) only when the ring\'s '
           'wake-up flag asks for it; without: V4 kicks with sendto() at '
           'every TX batch, none for RX. Rates, instructions per packet '
           '(both vCPUs, kernel and user: median, spread) and kicks per '
           'packet (median; ping-pong: the first end\'s); with / without: the ratio of the medians.',
           '', '| benchmark | mode | pps without | pps with | with / '
           'without | instr./packet without | with | with / without | '
           'kicks/packet without | with |',
           '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|']

    def instr(c):
        k = c.get('count', {})
        if 'kpp' not in k:
            return None, ''
        runs = [a + b for a, b in zip(
            k['kpp']['runs'],
            k.get('upp', {}).get('runs') or [0.0] * len(k['kpp']['runs']))]
        m = statistics.median(runs)
        return m, '%.0f (%.1f%%)' % (m, 100 * spread(runs))

    for r in woken:
        plain = next((p for p in rows if p['bench'] == r['bench'] and
                      p['pkt_size'] == r['pkt_size'] and
                      p['inflight'] == r['inflight'] and
                      not p['poll'] and not p['xdp'] and
                      not p['variant']), None)
        for m in ('v4', 'v4zc'):
            w = r['cells'].get(m)
            if not w:
                continue
            p = (plain or {}).get('cells', {}).get(m, {})
            pi, ps = instr(p) if p else (None, '')
            wi, ws = instr(w)
            out.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |'
                       % (r['row'], dict(MODES)[m],
                          kpps(p['median']) if p else '',
                          kpps(w['median']),
                          '%.2f' % (w['median'] / p['median'])
                          if p and p['median'] else '',
                          ps, ws, '%.2f' % (wi / pi) if pi and wi else '',
                          '%.3f' % p['kicks_pp'] if 'kicks_pp' in p else '',
                          '%.3f' % w['kicks_pp'] if 'kicks_pp' in w
                          else ''))
    return out


def count_tables(rows, cols, rcols):
    """The instruction counts: per packet, with their spread, and the
    ratios between modes computed from them."""
    def num(key, fmt='%.0f'):
        def cell(c):
            v = c.get('count', {}).get(key)
            return fmt % v if v is not None else ''
        return cell
    worst = max((k['spread'] for r in rows for c in r['cells'].values()
                 for n, k in c.get('count', {}).items()
                 if n == 'kpp' and isinstance(k, dict)), default=0)
    out = ['', '## Instructions per packet (counted by the emulator)', '',
           'Every instruction the guest executed in each run\'s measured '
           'window, both vCPUs, over the packets the run counted in it '
           '(rxdrop, l2fwd: received; txpush: sent and completed; '
           'ping-pong: round trips seen by the first end; pktgen: sent). '
           'Median over the rounds, and the spread, (max - min) / median; '
           'the largest spread of a kernel count here: %.1f%% (goal: two '
           'make bench runs within %.0f%% of each other).'
           % (100 * worst, 100 * SPREAD_GOAL)]
    out += table('Kernel instructions per packet: median (spread)', rows,
                 cols, stat('kpp'))
    out += table('Kernel instructions per packet less pktgen alone\'s '
                 '(rxdrop, rxdrop-poll, l2fwd, XDP_DROP: pktgen feeds '
                 'them)', rows, cols, num('knet'))
    out += table('User instructions per packet, turns that moved packets: '
                 'median (spread)', rows, cols, stat('upp'))
    out += table('User instructions per packet spent waiting (turns that '
                 'found nothing; not in the work)', rows, cols, stat('ipp'))
    out += table('Work per packet, net: kernel less pktgen\'s, plus user',
                 rows, cols, num('net'))
    def ratio_cell(key):
        def cell(c):
            k = c.get('count', {})
            if k.get(key + '_ref') is None:
                return ''
            return '%.2f%s' % (k[key + '_ref'],
                               '*' if k[key + '_noisy'] else '')
        return cell
    out += table('Kernel work per packet less pktgen\'s, ratio to V3 '
                 '(ping-pong: to the one of V2 and V3 with less net work; '
                 'below 1: cheaper)', rows, rcols, ratio_cell('kratio'))
    out += table('Work per packet, ratio to V3 (ping-pong: to the cheaper '
                 'of V2 and V3; below 1: cheaper)', rows, rcols,
                 ratio_cell('ratio'))
    out += ['', '*: the count of the cell or of its reference spread '
            'by more than %.0f %% over the rounds: the ratio is within that '
            'noise, and another make bench run may differ by as much (a '
            'reader that takes what has come, a few packets a turn at '
            'pktgen\'s pace, spends more user work a packet the fewer it '
            'finds; an l2fwd forwarder that pktgen outruns drops packets '
            'whose kernel work is counted; V2\'s poll() reader wakes per '
            'packet; V3\'s ping-pong waits for its block timer). The kernel '
            'counts alone are in the tables above, with their spread.'
            % (100 * SPREAD_GOAL)]
    return out


# What a packet costs in each mode, read from the code (the base + the
# series): copies of its data and skbs allocated, per packet.
COPIES = ['', '## Copies and skbs per packet, by mode (from the code)', '',
          '| mode | rxdrop (from pktgen) | txpush | ping-pong, each hop |',
          '|---|---|---|---|',
          '| V2, V3 | 1 copy (tpacket_rcv), pktgen\'s skb | 1 copy: the '
          'frame goes as a zero-copy page fragment, which veth copies '
          '(skb_copy_ubufs, pages allocated), 1 skb | 3 copies (tpbench '
          'from the RX to the TX ring, veth\'s skb_copy_ubufs, into the '
          'peer\'s RX ring), 1 skb |',
          '| V4 | 1 copy (tpacket4_rcv), pktgen\'s skb | 1 copy, 1 skb | 2 '
          'copies (into the skb, out of it into the RX ring), 1 skb |',
          '| V4+ZC | 1 copy (veth_tp4_rcv_one, in veth\'s NAPI), pktgen\'s '
          'skb | 1 copy, 1 skb (built for the peer\'s stack) | 1 copy '
          '(TX frame to the peer\'s RX frame), no skb |',
          '| AF_XDP (copy mode) | 2 copies (veth\'s skb_pp_cow_data, '
          'xsk_rcv), 2 skbs | 1 copy, 1 skb | 3 copies, 2 skbs |',
          '', 'pktgen\'s skb (shared: it holds a reference) is its own, '
          'counted in the pktgen cell. GRO row: the copy modes with veth\'s '
          'NAPI path, as V4+ZC has it; the copies and skbs are those above.']


def capture_buffer(rows):
    """The capture buffer (tcpdump -B, KiB) of the runs."""
    return next((c['buffer_kib'] for r in rows for c in r['cells'].values()
                 if c.get('buffer_kib')), 0)


def capture_tables(rows):
    """The capture row: per mode the rate, what pktgen sent meanwhile, the
    share captured and dropped; then which limit V4+ZC reached."""
    k = lambda v: kpps(v) if v is not None else ''
    share = lambda v: '%.2f' % v if v is not None else ''
    out = ['', '## Capture: tcpdump -w /dev/null against pktgen', '',
           '| benchmark | mode | captured/s, thousands: median (min-max) | '
           'pktgen sent/s meanwhile | pktgen errors / tried | '
           'captured / sent | dropped / received | '
           'runs with all sent captured, no drop or error | to V3 |',
           '|---|---|---:|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        for m, h in MODES:
            c = r['cells'].get(m)
            if not c:
                continue
            if m == 'pktgen':
                out.append('| %s | pktgen alone (sent/s) | %s (%s-%s) | | %s '
                           '| | | | %s |' % (
                               r['row'], k(c['median']), k(c['min']),
                               k(c['max']), share(c['pktgen_error_rate']),
                               fmt_ratio(c['ratio_v3'])))
                continue
            out.append('| %s | %s | %s (%s-%s) | %s | %s | %s | %s | %d of %d '
                       '| %s |'
                       % (r['row'], h, k(c['median']), k(c['min']),
                          k(c['max']), k(c.get('sent_pps')),
                          share(c.get('pktgen_error_rate')),
                          share(c.get('captured_of_sent')),
                          share(c.get('drop_rate')),
                          c.get('runs_all_captured', 0), len(c['runs']),
                          fmt_ratio(c['ratio_v3'])))
    out += ['', 'pktgen errors: what veth refused (its backlog or ring '
            'full), lost before any socket. Goal: V4+ZC captures %gx what V3 '
            'captures, or all that pktgen sends with no drop and no pktgen '
            'error (pktgen is then the limit).' % GOAL_X, '']
    for r in rows:
        g, cells = r['capture'], r['cells']
        zc = cells.get('v4zc')
        if g['verdict'] == 'not measured':
            out.append('- %s: not measured (no V4+ZC or no V3 run).' % r['row'])
            continue
        line = '- %s: V4+ZC captures %.2fx what V3 captures' % (
            r['row'], g['v4zc_to_v3'])
        if g['goal_x_reached']:
            line += ': **the %gx goal is reached**' % GOAL_X
        if g['pktgen_limit']:
            line += ('%s it captured all that pktgen sent, no drop, no pktgen '
                     'error, in every run: **pktgen is the limit** (%s '
                     'thousand/s with the capture' % (
                         ';' if g['goal_x_reached'] else ':',
                                  kpps(zc['sent_pps'])))
            if 'pktgen' in cells:
                line += ', %s alone' % kpps(cells['pktgen']['median'])
            line += ')'
        if not g['goal_x_reached'] and not g['pktgen_limit']:
            line += (': **neither limit reached** (not %gx V3; all that '
                     'pktgen sent captured with no drop and no pktgen error '
                     'in %d of %d runs; %.2f of what pktgen sent captured, '
                     '%.2f of what the socket received dropped, %.2f of '
                     'what pktgen tried refused)' % (
                         GOAL_X, zc.get('runs_all_captured', 0),
                         len(zc['runs']), zc.get('captured_of_sent', 0),
                         zc.get('drop_rate', 0),
                         zc.get('pktgen_error_rate', 0)))
        out.append(line + '.')
    return out


def chart(rows, meta, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    cols = columns(rows)
    counted = any('net' in c.get('count', {}) for r in rows
                  for c in r['cells'].values())
    if counted:
        fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(13, 13))
    else:
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(13, 9))
        ax3 = None
    n = len(cols)
    width = 0.8 / n
    xs = range(len(rows))
    for i, (m, h) in enumerate(cols):
        pos = [x - 0.4 + width * (i + 0.5) for x in xs]
        med, lo, hi, rat = [], [], [], []
        for r in rows:
            c = r['cells'].get(m)
            med.append(c['median'] / 1e3 if c else 0)
            lo.append((c['median'] - c['min']) / 1e3 if c else 0)
            hi.append((c['max'] - c['median']) / 1e3 if c else 0)
            rat.append(c['ratio_ref'] if c and c['ratio_ref'] is not None
                       else 0)
        ax1.bar(pos, med, width, yerr=[lo, hi], capsize=2, label=h)
        # Ratios beyond the axis (V3's ping-pong is timer-bound) are cut
        # at its top; every bar carries its value.
        ax2.bar(pos, [min(r, RATIO_TOP) for r in rat], width, label=h)
        if ax3 is not None:
            ax3.bar(pos, [r['cells'].get(m, {}).get('count', {}).get('net', 0)
                          for r in rows], width, label=h)
        for x, r in zip(pos, rat):
            if r:
                ax2.text(x, min(r, RATIO_TOP) * 1.03, '%.2f' % r,
                         ha='center', va='bottom', rotation=90, fontsize=6)
    for ax in (ax1, ax2, ax3):
        if ax is None:
            continue
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r['row'] for r in rows], fontsize=8)
        ax.grid(axis='y', alpha=0.3)
    ax1.set_yscale('log')
    ax1.set_ylabel('thousand packets/s (median, min-max)')
    ax1.legend(fontsize=8, ncol=n)
    ax1.set_title('AF_PACKET V2/V3/V4 vs AF_XDP and a shared-memory ring: '
                  '%s, %s, %d x %d s' % (meta['release'], meta['machine'],
                                         meta['runs'], meta['secs']),
                  fontsize=10)
    ax2.axhline(1.0, color='black', linewidth=0.8)
    ax2.set_yscale('log')
    ax2.set_ylim(0.1, RATIO_TOP * 3)
    ax2.set_ylabel('ratio of medians to V3; ping-pong: to the better of '
                   'V2 and V3 (log, cut at %g)' % RATIO_TOP, fontsize=8)
    if ax3 is not None:
        ax3.set_yscale('log')
        ax3.set_ylabel('instructions per packet, net (median)', fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('results')
    ap.add_argument('--release')
    ap.add_argument('--secs', type=int)
    ap.add_argument('--runs', type=int)
    ap.add_argument('--machine')
    ap.add_argument('--date', help='the heading, default: the folder name')
    a = ap.parse_args()

    meta = {'date': os.path.basename(os.path.normpath(a.results)),
            'release': '?', 'machine': 'QEMU TCG, 2 vCPUs', 'secs': 0,
            'runs': 0}
    path = os.path.join(a.results, 'vm', 'runs.jsonl')
    if os.path.exists(path):
        runs, failed = load(path, os.path.join(a.results, 'count.txt'))
    else:
        # A kept result (results/): render it again from its bench.json.
        with open(os.path.join(a.results, 'bench.json')) as f:
            kept = json.load(f)
        runs, failed = kept['runs'], kept['failed']
        meta.update(kept.get('meta', {}))
    for k in meta:
        if getattr(a, k) is not None:
            meta[k] = getattr(a, k)
    rows = summarize(runs)
    with open(os.path.join(a.results, 'bench.json'), 'w') as f:
        json.dump({'meta': meta, 'rows': rows, 'runs': runs,
                   'failed': failed}, f, indent=1)
    md = markdown(rows, meta, failed)
    with open(os.path.join(a.results, 'bench.md'), 'w') as f:
        f.write(md)
    if rows:
        chart(rows, meta, os.path.join(a.results, 'bench.png'))
    sys.stdout.write(md)
    return 0 if rows else 1


if __name__ == '__main__':
    sys.exit(main())
