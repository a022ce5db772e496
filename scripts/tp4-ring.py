#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tp4-ring.py PID...: the TPACKET_V4 rings a process has mapped, read
from /proc/PID/mem (as root), summed up as runs of slots alike: whose
(K: the kernel's, U: user space's), with data or without (len 0), and the
error. For a capture that stops short: is the slot it waits at the
kernel's, and what the slots after it hold.

A ring is a mapping of a packet socket ("socket:[...]" in /proc/PID/maps)
whose size is a whole number of 16-byte descriptors; the packet buffer
is anonymous memory and is not looked at.
"""
import re
import struct
import sys

DESC = struct.Struct('<QIHBB')   # idx, len, offset, error, flags
KERNEL = 0x80
CONT = 0x01


def rings(pid):
    with open('/proc/%s/maps' % pid) as f:
        for line in f:
            m = re.match(r'([0-9a-f]+)-([0-9a-f]+) \S+ (\S+) .*socket:\[(\d+)\]',
                         line)
            if m:
                yield int(m.group(1), 16), int(m.group(2), 16), m.group(4)


def kind(d):
    idx, ln, off, err, flags = d
    who = 'K' if flags & KERNEL else 'U'
    what = 'len0' if ln == 0 else 'data'
    return '%s %s err=%d%s' % (who, what, err, ' cont' if flags & CONT else '')


def dump(pid):
    with open('/proc/%s/mem' % pid, 'rb') as mem:
        for start, end, inode in rings(pid):
            mem.seek(start)
            blob = mem.read(end - start)
            n = len(blob) // DESC.size
            descs = [DESC.unpack_from(blob, i * DESC.size) for i in range(n)]
            print('pid %s socket %s: %d slots at %#x' % (pid, inode, n, start))
            i = 0
            while i < n:
                j = i
                while j < n and kind(descs[j]) == kind(descs[i]):
                    j += 1
                print('  %5d-%-5d %s (idx %d..%d)' %
                      (i, j - 1, kind(descs[i]), descs[i][0], descs[j - 1][0]))
                i = j


def main():
    for pid in sys.argv[1:]:
        try:
            dump(pid)
        except OSError as e:
            print('pid %s: %s' % (pid, e))
    return 0


if __name__ == '__main__':
    sys.exit(main())
