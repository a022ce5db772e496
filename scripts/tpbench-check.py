#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tpbench-check.py TPBENCH BENCH_ALL: the tests of tpbench (samples/tpacket4).

And of tp4_echo, the example of Documentation/networking/packet_v4.rst,
where it sits beside TPBENCH.

Runs as root in a network namespace of its own (scripts/guest-tests.sh), on
a veth pair tpka <-> tpkb with IPv6 off so that nothing else crosses it.
Checks what tpbench reports against what the other end of the pair counted,
for TPACKET_V2, V3 and V4; its errors; and bench_all.sh. Prints TAP.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

TPBENCH, BENCH_ALL = (os.path.abspath(a) for a in sys.argv[1:3])
TP4_ECHO = os.path.join(os.path.dirname(TPBENCH), 'tp4_echo')
results = []


def sh(*cmd):
    subprocess.run(cmd, check=True)


def stats(dev):
    p = subprocess.run(['ip', '-j', '-s', 'link', 'show', 'dev', dev],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)[0]['stats64']


def rx_packets(dev):
    return stats(dev)['rx']['packets']


def tx_dropped(dev):
    """What veth_xmit() dropped: the peer's backlog was full."""
    return stats(dev)['tx']['dropped']


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


def popen_bound(dev, cmd):
    """@cmd started, returned once it bound a packet socket to @dev."""
    before = bound(dev)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    for _ in range(300):
        if bound(dev) > before or p.poll() is not None:
            break
        time.sleep(0.1)
    return p


def start(dev, *args):
    """tpbench on @dev for long, returned once its socket is bound."""
    return popen_bound(dev, [TPBENCH, '-i', dev, '-d', '60', '-q'] +
                       list(args))


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
# '4zc': V4 with PACKET_ZEROCOPY on queue pair 0 of the veth end tpbench
# uses (its other end stays a normal device).
for v in ('2', '3', '4', '4zc'):
    V = ['-v', v[0]] + (['-z', '0'] if v.endswith('zc') else [])

    @test('v%s txpush: the peer receives exactly what tpbench counts' % v)
    def _():
        before, dropped = rx_packets('tpkb'), tx_dropped('tpka')
        r = run('-i', 'tpka', '--txpush', *V, '-d', '2', '-q')
        eq('mode', r['mode'], 'v' + v)
        received = rx_packets('tpkb') - before
        dropped = tx_dropped('tpka') - dropped
        if r['packets'] <= 0:
            raise AssertionError('packets %d' % r['packets'])
        # When softirqs fall behind (ksoftirqd, under emulation), the
        # peer's backlog fills and veth_xmit() drops with NET_XMIT_DROP.
        # V4 completes those descriptors with ENOBUFS: tpbench counts
        # them as errors. V2/V3 cannot tell: the frame is just free.
        if v.startswith('4'):
            eq('peer rx_packets', received, r['packets'])
            eq('errors (tx_dropped)', r['errors'], dropped)
        else:
            eq('peer rx_packets + tx_dropped', received + dropped,
               r['packets'])
            eq('errors', r['errors'], 0)
        eq('samples', len(r['samples']), 2)
        if min(r['samples']) <= 0:
            raise AssertionError('samples %r' % r['samples'])

    @test('v%s rxdrop: received + dropped = sent (1500 bytes)' % v)
    def _():
        rx = start('tpkb', '--rxdrop', *V)
        lost = tx_dropped('tpka')
        tx = run('-i', 'tpka', '--txpush', '-v', '2', '-d', '1', '-s',
                 '1500', '-q')
        r = finish(rx)
        lost = tx_dropped('tpka') - lost
        eq('received + dropped + lost on the way', r['packets'] + r['drops'] +
           lost, tx['packets'])
        eq('bytes', r['bytes'], 1500 * r['packets'])

    @test('v%s l2fwd: forwarded + dropped = sent, all come back' % v)
    def _():
        fwd = start('tpka', '--l2fwd', *V)
        before = rx_packets('tpkb')
        lost_a, lost_b = tx_dropped('tpka'), tx_dropped('tpkb')
        tx = run('-i', 'tpkb', '--txpush', '-v', '2', '-d', '1', '-q')
        r = finish(fwd)
        lost_a = tx_dropped('tpka') - lost_a
        lost_b = tx_dropped('tpkb') - lost_b
        eq('forwarded + dropped + lost on the way',
           r['packets'] + r['drops'] + lost_b, tx['packets'])
        eq('back at the sender + lost on the way back',
           rx_packets('tpkb') - before + lost_a, r['packets'])
        eq('errors', r['errors'], lost_a if v.startswith('4') else 0)

    for n in ('1', '64'):
        @test('v%s ping-pong with %s in flight' % (v, n))
        def _():
            r = run('-i', 'tpka', '--pingpong', n, '--peer', 'tpkb', *V,
                    '-d', '2', '-q')
            # Round trips all along, not one burst: V3's come at its
            # block timer, one or two a jiffy.
            if r['packets'] < 10 * int(n) or len(r['samples']) != 2 or \
               min(r['samples']) <= 0:
                raise AssertionError('%d round trips, per second %r' %
                                     (r['packets'], r['samples']))


# Refusals at bind(): the errno, said in words, exit 1.
for name, ifname, qp, said in (
        ('a queue pair veth does not have: EINVAL', 'tpka', '7',
         'tpka has no queue pair 7 (EINVAL)'),
        ('a device without zero-copy (lo): EOPNOTSUPP', 'lo', '0',
         'lo has no zero-copy support (EOPNOTSUPP)')):
    @test('--zerocopy: %s, exit 1' % name)
    def _(ifname=ifname, qp=qp, said=said):
        p = run('-i', ifname, '--rxdrop', '-v', '4', '-z', qp, '-d', '1',
                check=False)
        eq('exit', p.returncode, 1)
        eq('stderr', p.stderr.strip(), 'tpbench: PACKET_ZEROCOPY: ' + said)


@test('--zerocopy: a queue pair in use by another tpbench: EBUSY, exit 1')
def _():
    holder = start('tpka', '--rxdrop', '-v', '4', '-z', '0')
    try:
        p = run('-i', 'tpka', '--rxdrop', '-v', '4', '-z', '0', '-d', '1',
                check=False)
    finally:
        r = finish(holder)
    eq('exit', p.returncode, 1)
    eq('stderr', p.stderr.strip(),
       'tpbench: PACKET_ZEROCOPY: queue pair 0 of tpka is in use (EBUSY)')
    eq('holder mode', r['mode'], 'v4zc')


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
    # process without CAP_IPC_LOCK (not in the bounding set: root's; nor in
    # the ambient set: a user's with ambient capabilities, guest-tests.sh).
    p = subprocess.run(['capsh', '--drop=cap_ipc_lock', '--delamb=cap_ipc_lock',
                        '--', '-c',
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


def mtu(dev, n):
    sh('ip', 'link', 'set', 'dev', dev, 'mtu', str(n))


if os.path.exists(TP4_ECHO):
    @test('tp4_echo: each packet back, addresses swapped, one or two frames')
    def _():
        # Ethernet frames of 60 to 3014 bytes (3014: two 2048-byte frames,
        # TP4_PKT_CONT on RX and TX), a local experimental EtherType.
        a, b = bytes.fromhex('020000000001'), bytes.fromhex('020000000002')
        sizes = (60, 1514, 3014)
        sent = [a + b + bytes.fromhex('88b5') +
                bytes((i * 7 + n) & 0xff for i in range(n - 14))
                for n in sizes]
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(0x88b5))
        try:
            for d in ('tpka', 'tpkb'):
                mtu(d, 3000)
            s.bind(('tpkb', 0x88b5))
            s.settimeout(10)
            p = popen_bound('tpka', [TP4_ECHO, 'tpka', str(len(sent))])
            back = []
            for f in sent:
                s.send(f)
                while True:     # the socket sees tpkb's own sends too
                    data, addr = s.recvfrom(65536)
                    if addr[2] != socket.PACKET_OUTGOING:
                        break
                back.append(data)
            out, err = p.communicate(timeout=30)
        finally:
            s.close()
            for d in ('tpka', 'tpkb'):
                mtu(d, 1500)
        eq('exit', (p.returncode, err), (0, ''))
        eq('stdout', out, ''.join('%d bytes\n' % n for n in sizes) +
           'echoed %d packets\n' % len(sizes))
        eq('echoed frames', back, [f[6:12] + f[:6] + f[12:] for f in sent])

    @test('tp4_echo: a device that does not exist: exit 1')
    def _():
        p = subprocess.run([TP4_ECHO, 'tpk-none', '1'], capture_output=True,
                           text=True, timeout=30)
        eq('exit', p.returncode, 1)
        eq('stderr', p.stderr, 'tp4_echo: tpk-none: No such device\n')


print('TAP version 13')
print('1..%d' % len(results))
for i, (ok, name, why) in enumerate(results, 1):
    print('%sok %d %s' % ('' if ok else 'not ', i, name))
    for line in why.splitlines():
        print('# ' + line)
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
