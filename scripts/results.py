#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""results.py DMESG TESTDIR [CONSOLE] [--boot NAME DMESG TESTDIR CONSOLE]...:
the verdict of a test boot, and of other boots of the same run (make
test's swiotlb boot), whose results are named "NAME: ...".

Reads the KUnit results (KTAP) from the guest's kernel log, the TAP output of
each kselftest-harness program and the exit status of each plain test
program, and checks the kernel log for splats. Prints one line per test and
a last line "N passed, N failed, N skipped"; exits 1 when a test failed,
when no test ran, or when the kernel log has a splat. CONSOLE, the guest's
console (vm.sh's console.txt), is searched for splats too: what a panic
prints never reaches DMESG, which a program in the guest writes.

results.py --splats LOG: only the splat check, for any kernel log (make
bench's console); prints the first splats, exits 1 if there is one.
"""
import os
import re
import sys

SPLAT = re.compile(
    r'^(WARNING:|BUG:|Oops|kernel BUG at|UBSAN:|general protection fault'
    r'|Kernel panic|Unable to handle|INFO: task .* blocked'
    r'|rcu: INFO:|INFO: rcu_|.*detected stalls? on CPU'
    r'|Out of memory|.* invoked oom-killer)')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
TAP = re.compile(r'^(not )?ok (\d+) (.*?)(\s+#\s*(SKIP|skip)\b.*)?$')


def splats(path):
    """The splat lines of a kernel log (or console), stamps taken off."""
    with open(path, errors='replace') as f:
        lines = [STAMP.sub('', l.rstrip('\r\n')) for l in f]
    return [l for l in lines if SPLAT.match(l)]


# The first splat of each boot, as the kernel printed it (its call trace):
# main() prints them last, where a run's tail (CI's) shows them.
REPORTS = []


def splat_report(lines, limit=60):
    """The lines of the first splat in @lines (stamps off): from its first
    line to the report's end (KASAN's and UBSAN's closing rule, a trace's
    end marker), @limit lines at most; and the guest's markers before it
    (what ran then)."""
    for i, l in enumerate(lines):
        if SPLAT.match(l):
            break
    else:
        return []
    marks = [m for m in lines[:i]
             if re.match(r'^(guest-[a-z]+|tp4_zc_hw): ', m)][-3:]
    out = []
    for l in lines[i:i + limit]:
        out.append(l)
        if len(out) > 1 and (l.startswith('=====') or
                             l.startswith('---[ end trace')):
            break
    return marks + out


def console_splats(path, known):
    """The splats of a guest's console (serial: CRLF) that are not in
    @known (the kernel log's): its kernel lines only (stamped; the rest is
    the command's standard error and virtme's), each followed by the
    kernel RIP of its stack when one is printed."""
    out = []
    with open(path, errors='replace') as f:
        lines = [l.rstrip('\r\n') for l in f]
    for l in lines:
        if not STAMP.match(l):
            continue
        l = STAMP.sub('', l)
        if SPLAT.match(l) and l not in known and l not in out:
            out.append(l)
        elif out and re.match(r'^RIP: 0010:\S', l) and l not in out:
            out.append(l)
    return out


def boot_results(dmesg_path, testdir, console_path, prefix=''):
    """The results of one boot: (verdict, name, detail), each name
    prefixed with @prefix."""
    results = []  # (verdict, name, detail)

    def add(verdict, name, detail=''):
        results.append((verdict, prefix + name, detail))

    dmesg = []
    if os.path.exists(dmesg_path):
        with open(dmesg_path, errors='replace') as f:
            dmesg = [STAMP.sub('', l.rstrip('\r\n')) for l in f]

    # KUnit: suites at indent 0, their cases at indent 4, the parameters
    # of a parameterized case at indent 8 (each counted, not the case).
    suite = None
    param = None
    cases_in_suite = 0
    for line in dmesg:
        m = re.match(r'^    # Subtest: (\S+)', line)
        if m:
            suite, cases_in_suite = m.group(1), 0
            continue
        m = re.match(r'^        # Subtest: (\S+)', line)
        if m and suite:
            param = m.group(1)
            continue
        m = re.match(r'^        (not )?ok \d+ (.*?)(\s+# SKIP.*)?$', line)
        if m and param:
            cases_in_suite += 1
            v = 'SKIP' if m.group(3) else ('FAIL' if m.group(1) else 'PASS')
            add(v, 'kunit/%s: %s: %s' % (suite, param, m.group(2)))
            continue
        m = re.match(r'^    (not )?ok \d+ (.*?)(\s+# SKIP.*)?$', line)
        if m and suite:
            if param and m.group(2) == param:
                # The summary of the parameters just counted.
                param = None
                continue
            cases_in_suite += 1
            v = 'SKIP' if m.group(3) else ('FAIL' if m.group(1) else 'PASS')
            add(v, 'kunit/%s: %s' % (suite, m.group(2)))
            continue
        m = re.match(r'^(not )?ok \d+ (\S+)', line)
        if m and suite and m.group(2) == suite:
            if m.group(1) and cases_in_suite == 0:
                add('FAIL', 'kunit/%s' % suite, 'the suite failed to run')
            suite = None

    # kselftest-harness programs.
    for name in sorted(os.listdir(testdir)) if os.path.isdir(testdir) else []:
        if not name.endswith('.tap'):
            continue
        # A program run in parts: <program>@<part>.tap; a whole program
        # run again in another set-up: <program>@+<setup>.tap.
        prog, _, part = name[:-4].partition('@')
        if part.startswith('+'):
            prog += part
        # The patched tcpdump's checks (guest-pcap.sh) are not tpacket4's.
        label = {'pcap': 'pcap', 'vm-timeout': 'harness/vm-timeout',
                 'count': 'harness/count', 'wire': 'wire'}.get(
            prog, 'tpacket4/%s' % prog)
        plan, seen = None, 0
        with open(os.path.join(testdir, name), errors='replace') as f:
            for line in f:
                line = line.rstrip('\n')
                m = re.match(r'^1\.\.(\d+)$', line)
                if m:
                    plan = int(m.group(1))
                    continue
                m = TAP.match(line)
                if not m:
                    continue
                seen += 1
                v = 'SKIP' if m.group(4) else ('FAIL' if m.group(1) else 'PASS')
                add(v, '%s: %s' % (label, m.group(3)))
        if plan is None:
            add('FAIL', label, 'no TAP plan: the program did not run')
        elif seen < plan:
            add('FAIL', label,
                '%d of %d tests reported: the program died' % (seen, plan))

    # A stream of guest-tests.sh that did not end (the guest was stopped
    # on a timeout) leaves the name of its test in running.<stream>.
    for name in sorted(os.listdir(testdir)) if os.path.isdir(testdir) else []:
        if name.startswith('running.'):
            with open(os.path.join(testdir, name), errors='replace') as f:
                test = f.read().strip()
            add('FAIL', '%s' % test,
                'still running when the guest stopped (stream %s)' % name[8:])

    # Plain programs (the upstream AF_PACKET regression tests).
    rpath = os.path.join(testdir, 'results')
    if os.path.exists(rpath):
        with open(rpath) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    add(parts[0], 'net/%s' % parts[1],
                        'exit %s' % parts[2] if len(parts) > 2 else '')

    # The kernel log must be clean, and the console: a splat on it that is
    # not in the log (a panic) is named with where it happened (RIP).
    found = [l for l in dmesg if SPLAT.match(l)]
    console = []
    if console_path and os.path.exists(console_path):
        console = console_splats(console_path, set(found))
    if not dmesg:
        add('FAIL', 'kernel log', 'no kernel log from the guest')
    if console:
        add('FAIL', 'console: no splat', '; '.join(console[:5]))
        if not found:
            with open(console_path, errors='replace') as f:
                klines = [STAMP.sub('', l.rstrip('\r\n')) for l in f
                          if STAMP.match(l)]
            REPORTS.append((prefix, console_path, splat_report(klines)))
    if found:
        add('FAIL', 'kernel log: no splat', '; '.join(found[:5]))
        REPORTS.append((prefix, dmesg_path, splat_report(dmesg)))
    elif dmesg and not console:
        add('PASS', 'kernel log: no splat')

    # The least memory the guest had (guest-tests.sh's OUT/memory).
    mpath = os.path.join(testdir, 'memory')
    if os.path.exists(mpath):
        with open(mpath) as f:
            mem = [tuple(int(x) for x in l.split()) for l in f
                   if len(l.split()) == 2]
        if mem:
            t, least = min(mem, key=lambda x: x[1])
            print('# %sthe guest had %d MiB available at least (%d s into '
                  'the tests; %d samples)' % (prefix, least, t, len(mem)))
    return results


def main():
    if sys.argv[1] == '--splats':
        found = splats(sys.argv[2])
        print('\n'.join(found[:5]))
        return 1 if found else 0
    args = sys.argv[1:]
    boots = []
    while '--boot' in args:
        i = args.index('--boot')
        boots.append(args[i + 1:i + 5])
        del args[i:i + 5]
    results = boot_results(args[0], args[1],
                           args[2] if len(args) > 2 else None)
    for name, dmesg_path, testdir, console_path in boots:
        results += boot_results(dmesg_path, testdir, console_path,
                                name + ': ')
        if not (os.path.isdir(testdir) and
                any(f.endswith('.tap') for f in os.listdir(testdir))):
            results.append(('FAIL', '%s: boot' % name,
                            'no TAP output in %s' % testdir))

    n = {'PASS': 0, 'FAIL': 0, 'SKIP': 0}
    for v, name, detail in results:
        n[v] = n.get(v, 0) + 1
        print('%-4s %s%s' % (v, name, ' (%s)' % detail if detail else ''))
    # The log checks are not test runs.
    tests = sum(1 for _, name, _ in results
                if not name.split(': ')[-1].startswith(('kernel log', 'console')))
    if tests <= 0:
        print('FAIL no test ran')
        n['FAIL'] += 1
    for prefix, path, lines in REPORTS:
        print('# %sthe first splat of %s:' % (prefix, path))
        for l in lines:
            print('#   %s' % l)
    print('%d passed, %d failed, %d skipped' % (n['PASS'], n['FAIL'], n['SKIP']))
    return 1 if n['FAIL'] else 0


if __name__ == '__main__':
    sys.exit(main())
