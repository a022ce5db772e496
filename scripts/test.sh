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

# harness_test <script> <out> <tap> <inputs...>: run a test of the harness
# itself, unless it passed before on the same inputs (its scripts, QEMU,
# the kernel): its TAP output stays in <out>/<tap> for the results.
harness_test() {
	local script=$1 out=$2 tap=$3 key
	shift 3
	key=$(cat "$@" <(qemu-system-x86_64 --version) | sha256sum | cut -c1-32)
	if [ "$(cat "$out/passed" 2>/dev/null)" = "$key" ] && [ -f "$out/$tap" ] &&
	   ! grep -q '^not ok' "$out/$tap"; then
		say "test: $(basename "$script") passed before on the same kernel, QEMU and scripts"
		return 0
	fi
	rm -f "$out/passed"
	if "$script" "$out" >/dev/null 2>&1 && [ -f "$out/$tap" ] &&
	   ! grep -q '^not ok' "$out/$tap"; then
		echo "$key" >"$out/passed"
	else
		warn "test: $(basename "$script") failed (the tests below say how)"
	fi
}
# The kernel, for harness_test: its config and its source, not the image's
# bytes, which change with every relink (the build's timestamp and count;
# check-series' prefix checkouts make make relink the same source). The
# selftests, samples and documentation are left out: those boots run none.
kernel_id=$BUILD/vm/kernel-id
mkdir -p "$BUILD/vm"
{ cat "$BUILD/obj-$KIND/.config"
  git -C "$TREE" ls-tree HEAD | grep -vP '\t(tools|samples|Documentation)$'
  git -C "$TREE" ls-tree HEAD tools/ | grep -vP '\ttools/testing$'
  git -C "$TREE" diff HEAD -- . ':!tools/testing' ':!samples' ':!Documentation'
} >"$kernel_id"

# vm.sh's own bounds (the host's and the guest's timeout), on this
# kernel: two short boots side by side, counted with the tests. Their
# guests sleep for most of their 5 minutes, so the builds below and the
# counting plugin's boots run meanwhile (each guest's bound counts from
# its own boot, which a busy host slows).
say "test: the VM's timeouts (scripts/vm-timeout-test.sh, about 5 min, in the background)"
harness_test "$TOP/scripts/vm-timeout-test.sh" "$BUILD/vm/timeout" vm-timeout.tap \
	"$TOP/scripts/vm-timeout-test.sh" "$TOP/scripts/vm.sh" "$TOP/scripts/guest-run.sh" "$TOP/scripts/lib.sh" "$kernel_id" &
timeouts=$!
# Should a step below fail (or make test be stopped), the background test
# and its guests go with it: vm.sh stops its QEMU on TERM.
tree_of() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1"); do tree_of "$c"; done
}
stop_timeouts() {
	local rc=$?
	if kill -0 "$timeouts" 2>/dev/null; then
		# shellcheck disable=SC2046 # a list of pids
		kill -TERM $(tree_of "$timeouts") 2>/dev/null || true
		wait "$timeouts" 2>/dev/null || true
	fi
	# make test's own status, not the killed job's.
	return $rc
}
trap stop_timeouts EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# The patched libpcap and tcpdump, for guest-pcap.sh in the boot.
export TEST_PCAP=${TEST_PCAP:-1}
if [ "$TEST_PCAP" = 1 ]; then
	say "test: building the patched tcpdump (make pcap)"
	"$TOP/scripts/pcap.sh"
fi

say "test: building the selftests"
build_tests $KIND test

# The instruction counting plugin (bench/tp4count.c) on this kernel: two
# short boots with it (inline and per-vCPU counters); counted with the
# tests.
say "test: the instruction counting plugin (scripts/count-test.sh, about 3 min)"
harness_test "$TOP/scripts/count-test.sh" "$BUILD/vm/count" count.tap \
	"$TOP/scripts/count-test.sh" "$TOP/scripts/vm.sh" "$TOP/scripts/guest-run.sh" "$TOP/scripts/lib.sh" \
	"$TOP/scripts/tp4count-build.sh" "$TOP/bench/tp4count.c" "$TOP/scripts/tp4count.py" \
	"$TOP/bench/tp4mark.c" "$TOP/bench/tp4mark.h" "$kernel_id"

wait "$timeouts" || true
trap - EXIT
# Both harness tests are counted with the guest's: a missing TAP file is a
# failure, not a test fewer.
for t in timeout/vm-timeout.tap count/count.tap; do
	[ -s "$BUILD/vm/$t" ] || die "test: $BUILD/vm/$t is missing: its harness test did not run"
done

rc=0
run_tests $KIND test || rc=$?
[ $rc = 0 ] && say "test: all passed in $(elapsed)" || warn "test: FAILED after $(elapsed)"
# The verdict is the last line.
tail -n 1 "$BUILD/vm/test/summary.txt"
exit $rc
