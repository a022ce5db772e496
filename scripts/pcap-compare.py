#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""pcap-compare.py: compare the packets of two pcap files, time stamps aside.

  pcap-compare.py [options] A B   compare A with B; exit 0 if the same
  pcap-compare.py --count FILE    print the number of whole records
  pcap-compare.py --wait N S FILE wait until FILE has N whole records, S
                                  seconds at most (exit 1 then); prints
                                  the number it has

A and B must have the same link-layer type, snapshot length and time
stamp precision, and records with the same captured length, length on
the wire and bytes, in the same order. Time stamps are not compared with
each other, but in each file they must not go backwards, and with
--ts-slack S the time stamps of a record in A and B must be less than S
seconds apart (a check that neither is garbage).

Options:
  --prefix       A may be shorter than B: it must be B's first records
  --records N    A (and B, without --prefix) must have exactly N records
  --caplen N     every record of A must have a captured length of N
  --wirelen N    every record of A must have a length on the wire of N
  --vlan ID      every record of A must carry an 802.1Q tag with VLAN ID

On a difference it says where, what differs and, for pktgen packets, the
pktgen sequence numbers around it (a gap means packets were lost rather
than corrupted). Exits 1 on a difference, 2 on an unreadable file.
"""
import argparse
import struct
import sys
import time

MAGICS = {
    0xa1b2c3d4: 'us',
    0xa1b23c4d: 'ns',
}
PKTGEN_MAGIC = b'\xbe\x9b\xe9\x55'


class PcapError(Exception):
    pass


def read_pcap(path):
    """(header dict, [(sec, frac, caplen, wirelen, data)]) of a pcap file.
    A record cut short at the end (a capture still being written) is
    left out."""
    with open(path, 'rb') as f:
        blob = f.read()
    if len(blob) < 24:
        raise PcapError('%s: %d bytes, no pcap header' % (path, len(blob)))
    for endian in ('<', '>'):
        magic = struct.unpack(endian + 'I', blob[:4])[0]
        if magic in MAGICS:
            break
    else:
        raise PcapError('%s: not a pcap file (magic %s)' %
                        (path, blob[:4].hex()))
    _, major, minor, _, _, snaplen, linktype = struct.unpack(
        endian + 'IHHiIII', blob[:24])
    hdr = {'precision': MAGICS[magic], 'version': (major, minor),
           'snaplen': snaplen, 'linktype': linktype & 0x0fffffff}
    recs = []
    off = 24
    while off + 16 <= len(blob):
        sec, frac, caplen, wirelen = struct.unpack(endian + 'IIII',
                                                   blob[off:off + 16])
        if off + 16 + caplen > len(blob):
            break
        recs.append((sec, frac, caplen, wirelen,
                     blob[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return hdr, recs


def seconds(hdr, rec):
    return rec[0] + rec[1] / (1e9 if hdr['precision'] == 'ns' else 1e6)


def pktgen_seq(data):
    """The sequence number of a pktgen packet (IPv4/UDP, VLAN tags
    allowed), or None."""
    off = 12
    while data[off:off + 2] in (b'\x81\x00', b'\x88\xa8'):
        off += 4
    if data[off:off + 2] != b'\x08\x00' or len(data) < off + 2 + 20:
        return None
    ihl = (data[off + 2] & 0x0f) * 4
    payload = off + 2 + ihl + 8
    if data[payload:payload + 4] != PKTGEN_MAGIC:
        return None
    return struct.unpack('>I', data[payload + 4:payload + 8])[0]


def around(recs, i):
    """The pktgen sequence numbers of the records around index i."""
    seqs = [pktgen_seq(r[4]) for r in recs[max(i - 2, 0):i + 3]]
    return ' '.join('-' if s is None else str(s) for s in seqs)


def first_diff(a, b):
    """Where two byte strings first differ."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def count_vlan(data):
    """The VLAN ID of the outer 802.1Q tag, or None."""
    if data[12:14] != b'\x81\x00' or len(data) < 16:
        return None
    return struct.unpack('>H', data[14:16])[0] & 0x0fff


def compare(args):
    errors = []
    ha, ra = read_pcap(args.a)
    hb, rb = read_pcap(args.b)
    for key in ('linktype', 'snaplen', 'precision'):
        if ha[key] != hb[key]:
            errors.append('%s: %s has %r, %s has %r' %
                          (key, args.a, ha[key], args.b, hb[key]))
    for path, hdr, recs in ((args.a, ha, ra), (args.b, hb, rb)):
        for i in range(1, len(recs)):
            if seconds(hdr, recs[i]) < seconds(hdr, recs[i - 1]):
                errors.append('%s: record %d has a time stamp before '
                              'that of record %d' % (path, i + 1, i))
                break
    if args.records is not None:
        if len(ra) != args.records:
            errors.append('%s: %d records, want %d' %
                          (args.a, len(ra), args.records))
        if not args.prefix and len(rb) != args.records:
            errors.append('%s: %d records, want %d' %
                          (args.b, len(rb), args.records))
    if args.prefix:
        if len(ra) > len(rb):
            errors.append('%s has %d records, more than the %d of %s' %
                          (args.a, len(ra), len(rb), args.b))
    elif len(ra) != len(rb):
        errors.append('%s has %d records, %s has %d' %
                      (args.a, len(ra), args.b, len(rb)))
    for i, (x, y) in enumerate(zip(ra, rb)):
        what = []
        if x[2] != y[2]:
            what.append('caplen %d != %d' % (x[2], y[2]))
        if x[3] != y[3]:
            what.append('length %d != %d' % (x[3], y[3]))
        if x[4] != y[4]:
            what.append('bytes differ from offset %d' %
                        first_diff(x[4], y[4]))
        if args.ts_slack is not None:
            gap = abs(seconds(ha, x) - seconds(hb, y))
            if gap >= args.ts_slack:
                what.append('time stamps %.6f s apart' % gap)
        if what:
            errors.append('record %d: %s (pktgen seq around it: %s: %s; '
                          '%s: %s)' % (i + 1, ', '.join(what), args.a,
                                       around(ra, i), args.b, around(rb, i)))
            break
    for i, r in enumerate(ra):
        if args.caplen is not None and r[2] != args.caplen:
            errors.append('%s: record %d has caplen %d, want %d' %
                          (args.a, i + 1, r[2], args.caplen))
            break
        if args.wirelen is not None and r[3] != args.wirelen:
            errors.append('%s: record %d has length %d, want %d' %
                          (args.a, i + 1, r[3], args.wirelen))
            break
        if args.vlan is not None and count_vlan(r[4]) != args.vlan:
            errors.append('%s: record %d has no 802.1Q tag for VLAN %d' %
                          (args.a, i + 1, args.vlan))
            break
    for e in errors:
        print(e)
    if not errors:
        print('%s and %s: %d records, the same%s' %
              (args.a, args.b, len(ra),
               ' (the first of %d)' % len(rb) if args.prefix else ''))
    return 1 if errors else 0


def wait(want, secs, path):
    """Poll path (a capture being written) until it has want records,
    reading only what was added since the last look (under emulation,
    parsing the whole file ten times a second would cost a CPU)."""
    end = time.monotonic() + secs
    n, f, endian, buf = 0, None, None, b''
    while True:
        if f is None:
            try:
                f = open(path, 'rb')
            except OSError:
                pass
        if f is not None:
            buf += f.read()
            if endian is None and len(buf) >= 24:
                for e in ('<', '>'):
                    if struct.unpack(e + 'I', buf[:4])[0] in MAGICS:
                        endian = e
                        break
                else:
                    print(0)
                    return 2
                buf = buf[24:]
            while endian is not None and len(buf) >= 16:
                caplen = struct.unpack(endian + 'I', buf[8:12])[0]
                if len(buf) < 16 + caplen:
                    break
                buf = buf[16 + caplen:]
                n += 1
        if n >= want or time.monotonic() >= end:
            print(n)
            return 0 if n >= want else 1
        time.sleep(0.1)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--count':
        try:
            print(len(read_pcap(sys.argv[2])[1]))
        except (OSError, PcapError) as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == '--wait':
        return wait(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--prefix', action='store_true')
    p.add_argument('--records', type=int)
    p.add_argument('--caplen', type=int)
    p.add_argument('--wirelen', type=int)
    p.add_argument('--vlan', type=int)
    p.add_argument('--ts-slack', type=float)
    p.add_argument('a')
    p.add_argument('b')
    args = p.parse_args()
    try:
        return compare(args)
    except (OSError, PcapError) as e:
        print(e)
        return 2


if __name__ == '__main__':
    sys.exit(main())
