#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test.sh: the project's test command (make test). From whatever state: deps,
# tree, check-series (which also builds the debug kernel), the selftests, the
# patched tcpdump (make pcap), then one boot of the debug kernel that runs
# the KUnit suites built into it, the tpacket4 selftests, the tpbench checks,
# the upstream AF_PACKET selftests and the tcpdump checks (guest-pcap.sh;
# TEST_PCAP=0 leaves the tcpdump out).
# Fails on any failed test, on no test at all, and on any kernel splat. The
# last line is "N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"


"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
"$TOP/scripts/check-series.sh"
say "test: series checked ($(elapsed))"

KIND=debug
build_kernel $KIND test

# The patched libpcap and tcpdump, for guest-pcap.sh in the boot.
export TEST_PCAP=${TEST_PCAP:-1}
if [ "$TEST_PCAP" = 1 ]; then
	say "test: building the patched tcpdump (make pcap)"
	"$TOP/scripts/pcap.sh"
fi

say "test: building the selftests"
build_tests $KIND test

# vm.sh's own bounds (the host's and the guest's timeout), on this
# kernel: two short boots side by side; counted with the tests.
say "test: the VM's timeouts (scripts/vm-timeout-test.sh, about 5 min)"
"$TOP/scripts/vm-timeout-test.sh" "$BUILD/vm/timeout" >/dev/null 2>&1 ||
	warn "test: vm-timeout-test.sh failed (the tests below say how)"

# The instruction counting plugin (bench/tp4count.c) on this kernel: two
# short boots with it (inline and per-vCPU counters); counted with the
# tests.
say "test: the instruction counting plugin (scripts/count-test.sh, about 3 min)"
"$TOP/scripts/count-test.sh" "$BUILD/vm/count" >/dev/null 2>&1 ||
	warn "test: count-test.sh failed (the tests below say how)"

rc=0
run_tests $KIND test || rc=$?
[ $rc = 0 ] && say "test: all passed in $(elapsed)" || warn "test: FAILED after $(elapsed)"
# The verdict is the last line.
tail -n 1 "$BUILD/vm/test/summary.txt"
exit $rc
