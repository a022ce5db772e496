#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""docs-warnings.py LOG TREE BASE HEAD: the documentation build's new warnings.

LOG is the output of make htmldocs in TREE. A warning is the series' when it
names a file that BASE..HEAD adds, or a line that BASE..HEAD adds to a file
it changes (Sphinx and kernel-doc print "path:line: WARNING|warning: ...";
a warning without a line counts for any file of the series). The base's
own warnings, in files the series leaves alone or on lines it does not
touch (index.rst's labels outside networking/ when only networking/ is
built), are not. Prints the series' warnings; exits 1 if there are any.
"""
import re
import subprocess
import sys

log, tree, base, head = sys.argv[1:5]

# The lines of HEAD that BASE..HEAD adds, by file.
added = {}
cur = None
diff = subprocess.run(['git', '-C', tree, 'diff', '-U0', '--no-color',
                       '%s..%s' % (base, head)], capture_output=True,
                      text=True, check=True).stdout
for line in diff.splitlines():
    if line.startswith('+++ '):
        cur = line[6:] if line.startswith('+++ b/') else None
        if cur is not None:
            added.setdefault(cur, set())
        continue
    m = re.match(r'@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
    if m and cur is not None:
        start, n = int(m.group(1)), int(m.group(2) or 1)
        added[cur].update(range(start, start + n))

warn = re.compile(r'^(?P<path>/[^:\s]+):(?:[^:]*:)*?(?P<line>\d+)?:?\s*'
                  r'(?:WARNING|ERROR|CRITICAL|SEVERE|warning|error)\b')
prefix = tree.rstrip('/') + '/'
bad = []
with open(log, errors='replace') as f:
    for line in f:
        m = warn.match(line)
        if not m or not m.group('path').startswith(prefix):
            continue
        path = m.group('path')[len(prefix):]
        if path not in added:
            continue
        if m.group('line') is None or int(m.group('line')) in added[path]:
            bad.append(line.rstrip('\n'))
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
