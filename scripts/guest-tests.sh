#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-tests.sh BIN OUT: runs inside the test VM. Runs every tpacket4
# selftest, the tpbench checks (scripts/tpbench-check.py) and the upstream
# AF_PACKET regression tests found in BIN, each in a network namespace of
# its own, leaving their output in OUT:
#   OUT/<test>.tap  the TAP output of a kselftest-harness program
#   OUT/<test>.log  the output of a plain program
#   OUT/results     one line per plain program: PASS|FAIL|SKIP <name> <rc>
# Exits 0: the host reads the results and decides.
bin=$1
out=$2
mkdir -p "$out"
: >"$out/results"

# in_netns PROGRAM: run it in a new network namespace with lo up, for 10
# minutes at most.
in_netns() {
	timeout 600 unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
}

# report TAP: the results, with the reason of each failure (the harness's
# "# file.c:line:test:..." lines, tpbench-check's "# ...Error: ...").
report() {
	grep -E '^(not )?ok |^# [^ ]+\.c:[0-9]+:|^# [A-Za-z]+Error: ' "$1"
}

for t in "$bin"/tpacket4/tp4_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "# running $name"
	( cd "$bin/tpacket4" && in_netns "./$name" ) >"$out/$name.tap" 2>&1
	echo "# $name exited $?"
	report "$out/$name.tap"
done

# tpbench (samples/tpacket4): what it reports against what the peer saw.
if [ -x "$bin/samples/tpbench" ]; then
	echo "# running tpbench-check"
	in_netns python3 "$(dirname "$0")/tpbench-check.py" \
		"$bin/samples/tpbench" "$bin/samples/bench_all.sh" \
		>"$out/tpbench.tap" 2>&1
	echo "# tpbench-check exited $?"
	report "$out/tpbench.tap"
fi

for name in psock_tpacket psock_fanout txring_overwrite; do
	[ -x "$bin/net/$name" ] || continue
	echo "# running $name"
	( cd "$bin/net" && in_netns "./$name" ) >"$out/$name.log" 2>&1
	rc=$?
	case $rc in
	0) r=PASS ;;
	4) r=SKIP ;;
	*) r=FAIL ;;
	esac
	echo "$r $name $rc" | tee -a "$out/results"
done
exit 0
