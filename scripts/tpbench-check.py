#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tpbench-check.py TPBENCH BENCH_ALL: the tests of tpbench (samples/tpacket4).

Runs as root in a network namespace of its own (scripts/guest-tests.sh), on
a veth pair tpka <-> tpkb with IPv6 off so that nothing else crosses it.
Checks what tpbench reports against what the other end of the pair counted,
for TPACKET_V2, V3 and V4; its errors; and bench_all.sh. Prints TAP.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TPBENCH, BENCH_ALL = (os.path.abspath(a) for a in sys.argv[1:3])
results = []


def sh(*cmd):
    subprocess.run(cmd, check=True)


def rx_packets(dev):
    p = subprocess.run(['ip', '-j', '-s', 'link', 'show', 'dev', dev],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)[0]['stats64']['rx']['packets']


def run(*args, check=True):
    p = subprocess.run([TPBENCH] + list(args), capture_output=True,
                       text=True, timeout=120)
    if not check:
        return p
    lines = p.stdout.strip().splitlines()
    if p.returncode or not lines or not lines[-1].startswith('{'):
        raise AssertionError('tpbench %s: exit %d: %s' %
                             (' '.join(args), p.returncode, p.stderr.strip()))
    return json.loads(lines[-1])


def bound(dev):
    """The packet sockets bound to @dev (/proc/net/packet, this netns)."""
    idx = json.loads(subprocess.run(['ip', '-j', 'link', 'show', 'dev', dev],
                                    capture_output=True, text=True,
                                    check=True).stdout)[0]['ifindex']
    with open('/proc/net/packet') as f:
        return sum(1 for l in f.readlines()[1:] if int(l.split()[4]) == idx)


def start(dev, *args):
    """tpbench on @dev for long, returned once its socket is bound."""
    before = bound(dev)
    p = subprocess.Popen([TPBENCH, '-i', dev, '-d', '60', '-q'] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    for _ in range(300):
        if bound(dev) > before or p.poll() is not None:
            break
        time.sleep(0.1)
    return p


def finish(p):
    """Stops a tpbench started by start() once the traffic has drained."""
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    lines = out.strip().splitlines()
    if p.returncode or not lines or not lines[-1].startswith('{'):
        raise AssertionError('tpbench: exit %d: %s' % (p.returncode,
                                                       err.strip()))
    return json.loads(lines[-1])


def test(name):
    def wrap(fn):
        try:
            fn()
            results.append((True, name, ''))
        except Exception as e:  # pylint: disable=broad-except
            results.append((False, name, '%s: %s' % (type(e).__name__, e)))
        return fn
    return wrap


def eq(what, got, want):
    if got != want:
        raise AssertionError('%s: got %r, want %r' % (what, got, want))


def setup():
    sh('ip', 'link', 'add', 'tpka', 'type', 'veth', 'peer', 'name', 'tpkb')
    for d in ('tpka', 'tpkb'):
        with open('/proc/sys/net/ipv6/conf/%s/disable_ipv6' % d, 'w') as f:
            f.write('1')
        sh('ip', 'link', 'set', d, 'up')


setup()
for v in ('2', '3', '4'):
    @test('v%s txpush: the peer receives exactly what tpbench counts' % v)
    def _():
        before = rx_packets('tpkb')
        r = run('-i', 'tpka', '--txpush', '-v', v, '-d', '2', '-q')
        eq('mode', r['mode'], 'v' + v)
        if r['packets'] <= 0 or r['errors']:
            raise AssertionError('packets %d errors %d' %
                                 (r['packets'], r['errors']))
        eq('peer rx_packets', rx_packets('tpkb') - before, r['packets'])
        eq('samples', len(r['samples']), 2)
        if min(r['samples']) <= 0:
            raise AssertionError('samples %r' % r['samples'])

    @test('v%s rxdrop: received + dropped = sent (1500 bytes)' % v)
    def _():
        rx = start('tpkb', '--rxdrop', '-v', v)
        tx = run('-i', 'tpka', '--txpush', '-v', '2', '-d', '1', '-s',
                 '1500', '-q')
        r = finish(rx)
        eq('received + dropped', r['packets'] + r['drops'], tx['packets'])
        eq('bytes', r['bytes'], 1500 * r['packets'])

    @test('v%s l2fwd: forwarded + dropped = sent, all come back' % v)
    def _():
        fwd = start('tpka', '--l2fwd', '-v', v)
        before = rx_packets('tpkb')
        tx = run('-i', 'tpkb', '--txpush', '-v', '2', '-d', '1', '-q')
        r = finish(fwd)
        eq('forwarded + dropped', r['packets'] + r['drops'], tx['packets'])
        eq('back at the sender', rx_packets('tpkb') - before, r['packets'])

    for n in ('1', '64'):
        @test('v%s ping-pong with %s in flight' % (v, n))
        def _():
            r = run('-i', 'tpka', '--pingpong', n, '--peer', 'tpkb', '-v', v,
                    '-d', '2', '-q')
            # Round trips all along, not one burst: V3's come at its
            # block timer, one or two a jiffy.
            if r['packets'] < 10 * int(n) or len(r['samples']) != 2 or \
               min(r['samples']) <= 0:
                raise AssertionError('%d round trips, per second %r' %
                                     (r['packets'], r['samples']))


@test('--zerocopy: refused with the reason and exit 1')
def _():
    p = run('-i', 'tpka', '--rxdrop', '-v', '4', '-z', '0', '-d', '1',
            check=False)
    eq('exit', p.returncode, 1)
    # ENOPROTOOPT until the kernel has zero-copy, EOPNOTSUPP until veth has.
    if not p.stderr.startswith('tpbench: PACKET_ZEROCOPY: ') or \
       not ('(ENOPROTOOPT)' in p.stderr or '(EOPNOTSUPP)' in p.stderr):
        raise AssertionError('stderr: %r' % p.stderr)


@test('--zerocopy needs version 4')
def _():
    p = run('-i', 'tpka', '--rxdrop', '-v', '3', '-z', '0', check=False)
    eq('exit', p.returncode, 1)
    eq('stderr', p.stderr.strip(), 'tpbench: --zerocopy needs --version 4')


@test('unknown interface: errno and step')
def _():
    p = run('-i', 'tpk-none', '--txpush', check=False)
    eq('exit', p.returncode, 1)
    eq('stderr', p.stderr.strip(),
       'tpbench: interface tpk-none: No such device (errno 19)')


@test('kernel errors name the step: a ring too large for memlock')
def _():
    # 2048 frames of 2048 bytes: 4 MiB to pin, over a 1 MiB limit for a
    # process without CAP_IPC_LOCK.
    p = subprocess.run(['capsh', '--drop=cap_ipc_lock', '--', '-c',
                        'ulimit -l 1024 && exec "$0" "$@"', TPBENCH,
                        '-i', 'tpka', '--rxdrop', '-v', '4', '-d', '1'],
                       capture_output=True, text=True, timeout=60)
    eq('exit', p.returncode, 1)
    eq('stderr', p.stderr.strip(),
       'tpbench: PACKET_MEMREG: No buffer space available (errno 105)')


@test('bench_all.sh: the V2/V3/V4 table')
def _():
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([BENCH_ALL, 'tpka', '', '1'], capture_output=True,
                           text=True, cwd=d, timeout=120,
                           env=dict(os.environ, TPBENCH=TPBENCH))
        with open(os.path.join(d, 'bench_all.json')) as f:
            modes = [json.loads(l)['mode'] for l in f]
    eq('exit', p.returncode, 0)
    lines = p.stdout.splitlines()
    eq('heading', lines[0].split(), ['benchmark', 'V2', 'V3', 'V4'])
    eq('rows', [l.split()[0] for l in lines[1:]], ['rxdrop', 'txpush', 'l2fwd'])
    tx = lines[2].split()[1:]
    if len(tx) != 3 or any(float(x) <= 0 for x in tx):
        raise AssertionError('txpush row: %r' % lines[2])
    eq('json modes', modes, ['v2', 'v3', 'v4'] * 3)


print('TAP version 13')
print('1..%d' % len(results))
for i, (ok, name, why) in enumerate(results, 1):
    print('%sok %d %s' % ('' if ok else 'not ', i, name))
    for line in why.splitlines():
        print('# ' + line)
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
