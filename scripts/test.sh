#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test.sh: the project's test command (make test). From whatever state: deps,
# tree, check-series (which also builds the debug kernel), the selftests,
# then one boot of the debug kernel that runs the KUnit suites built into it,
# the tpacket4 selftests and the upstream AF_PACKET selftests. Fails on any
# failed test, on no test at all, and on any kernel splat. The last line is
# "N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"


"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
"$TOP/scripts/check-series.sh"
say "test: series checked ($(elapsed))"

KIND=debug
obj=$BUILD/obj-$KIND
build_kernel $KIND test

say "test: building the selftests"
bin=$BUILD/selftests
rm -rf "$bin"; mkdir -p "$bin/net" "$bin/tpacket4"
kmake $KIND -s headers >/dev/null
make -s -C "$TREE/tools/testing/selftests/net/tpacket4" OUTPUT="$bin/tpacket4" \
	KHDR_INCLUDES="-isystem $obj/usr/include" >/dev/null
# tpbench, built with the kernel (CONFIG_SAMPLE_TPACKET4), once the series
# has it; it must also build on its own against the installed headers.
if [ -f "$TREE/samples/tpacket4/Makefile" ]; then
	make -s -C "$TREE/samples/tpacket4" KHDR="$obj/usr/include" \
		CFLAGS="-O2 -Werror" >/dev/null ||
		die "test: tpbench does not build on its own"
	make -s -C "$TREE/samples/tpacket4" clean
fi
if [ -x "$obj/samples/tpacket4/tpbench" ]; then
	mkdir -p "$bin/samples"
	cp "$obj/samples/tpacket4/tpbench" "$TREE/samples/tpacket4/bench_all.sh" \
		"$bin/samples/"
fi
for t in psock_tpacket psock_fanout txring_overwrite; do
	gcc -Wall -O2 -isystem "$obj/usr/include" \
		-I"$TREE/tools/testing/selftests" -o "$bin/net/$t" \
		"$TREE/tools/testing/selftests/net/$t.c"
done

say "test: booting the $KIND kernel to run the tests ($(elapsed))"
out=$BUILD/vm/test
set +e
VM_OUT=$out KIND=$KIND VM_TIMEOUT=${VM_TIMEOUT:-2400} \
	"$TOP/scripts/vm.sh" "$TOP/scripts/guest-tests.sh $bin $out/tests"
vrc=$?
set -e
[ $vrc = 0 ] || warn "test: the test VM exited $vrc"

say "test: results ($(elapsed)); logs in $out"
set +e
python3 "$TOP/scripts/results.py" "$out/dmesg.txt" "$out/tests" | tee "$out/summary.txt"
rc=${PIPESTATUS[0]}
set -e
[ $vrc = 0 ] || rc=1
[ $rc = 0 ] && say "test: all passed in $(elapsed)" || warn "test: FAILED after $(elapsed)"
# The verdict is the last line.
tail -n 1 "$out/summary.txt"
exit $rc
