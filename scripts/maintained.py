#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""maintained.py MAINTAINERS FILE...: each FILE must be named by an F: entry
at least as specific as its own directory (the file, its directory, or a
glob in that directory); broad entries such as net/ or
tools/testing/selftests/ do not count. Prints the files that are not, and
exits 1 if there is one."""
import fnmatch
import os
import sys


def specific(pattern, path):
    d = os.path.dirname(path)
    if pattern.endswith('/'):
        return pattern.rstrip('/') == d or (path + '/').startswith(pattern) and \
            pattern.rstrip('/').count('/') >= d.count('/')
    if not fnmatch.fnmatch(path, pattern):
        return False
    return os.path.dirname(pattern) == d


def main():
    pats = []
    with open(sys.argv[1], errors='replace') as f:
        for line in f:
            if line.startswith('F:'):
                pats.append(line[2:].strip())
    bad = [p for p in sys.argv[2:] if not any(specific(x, p) for x in pats)]
    for p in bad:
        print(p)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
