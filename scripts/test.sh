#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test.sh: the project's test command (make test). From whatever state: deps,
# tree, check-series with the patched tcpdump (make pcap) and the debug
# kernel built beside it, the selftests, then one boot of the debug kernel
# that runs the KUnit suites built into it, the tpacket4 selftests, the
# tpbench checks, the upstream AF_PACKET selftests and the tcpdump checks
# (guest-pcap.sh; TEST_PCAP=0 leaves the tcpdump out).
# Fails on any failed test, on no test at all, and on any kernel splat. The
# last line is "N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"


"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"

# Jobs in the background (their pids in bg): should a step fail, or make
# test be stopped, they go with it, their children too (vm.sh stops its
# QEMU on TERM), and make test keeps its own exit status.
bg=()
tree_of() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1"); do tree_of "$c"; done
}
stop_bg() {
	local rc=$? p
	for p in "${bg[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		# shellcheck disable=SC2046 # a list of pids
		kill -TERM $(tree_of "$p") 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	return $rc
}
trap stop_bg EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

KIND=debug
# The patched libpcap and tcpdump (for guest-pcap.sh in the boot), then the
# debug kernel, beside check-series, which checks the prefixes out in a
# worktree of its own, at nice 10. Measured cold (session 24), this gains
# tcpdump's time only: both cores are busy during the prefixes, which take
# as much longer as the debug kernel gets done meanwhile.
export TEST_PCAP=${TEST_PCAP:-1}
(
	renice -n 10 -p $BASHPID >/dev/null
	if [ "$TEST_PCAP" = 1 ]; then
		say "test: building the patched tcpdump (make pcap), beside check-series"
		"$TOP/scripts/pcap.sh"
	fi
	build_kernel $KIND test
) &
builds=$!
bg+=("$builds")
"$TOP/scripts/check-series.sh"
say "test: series checked ($(elapsed))"
wait "$builds" || die "test: tcpdump or the debug kernel does not build (see above)"
say "test: the debug kernel built ($(elapsed))"

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
# bytes, which change with every relink (the build's timestamp and count:
# make tree moving the branch relinks the same source). The
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
bg+=("$timeouts")

say "test: building the selftests"
build_tests $KIND test

# The wire's swiotlb boot (lib.sh's wire_swiotlb, about 2 min alone),
# beside the counting plugin's boots; counted with the tests.
swiotlb=
if [[ " $TEST_WIRE " == *" iommu "* ]]; then
	say "test: the wire with swiotlb=force (a boot of its own, in the background)"
	wire_swiotlb $KIND &
	swiotlb=$!
	bg+=("$swiotlb")
fi

# The instruction counting plugin (bench/tp4count.c) on this kernel: two
# short boots with it (inline and per-vCPU counters); counted with the
# tests.
say "test: the instruction counting plugin (scripts/count-test.sh, about 3 min)"
harness_test "$TOP/scripts/count-test.sh" "$BUILD/vm/count" count.tap \
	"$TOP/scripts/count-test.sh" "$TOP/scripts/vm.sh" "$TOP/scripts/guest-run.sh" "$TOP/scripts/lib.sh" \
	"$TOP/scripts/tp4count-build.sh" "$TOP/bench/tp4count.c" "$TOP/scripts/tp4count.py" \
	"$TOP/bench/tp4mark.c" "$TOP/bench/tp4mark.h" "$kernel_id"

wait "$timeouts" || true
[ -z "$swiotlb" ] || wait "$swiotlb" ||
	warn "test: the swiotlb boot exited $? (its results below; $BUILD/vm/swiotlb.log)"
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
