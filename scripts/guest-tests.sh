#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-tests.sh BIN OUT: runs inside the test VM. Runs every tpacket4
# selftest, the tpbench checks (scripts/tpbench-check.py), the upstream
# AF_PACKET regression tests and the patched tcpdump's checks
# (scripts/guest-pcap.sh, with BIN/pcap/tcpdump) found in BIN, each in a
# network namespace of its own, in two streams (one per vCPU), leaving
# their output in OUT:
#   OUT/<test>.tap  the TAP output of a kselftest-harness program (or of a
#                   part of one: OUT/<test>@<part>.tap)
#   OUT/<test>.log  the output of a plain program
#   OUT/results     one line per plain program: PASS|FAIL|SKIP <name> <rc>
#   OUT/times       the wall time of each harness program
#   OUT/running.<stream>  while a stream (fg, bg) runs: the name of its
#                   current test (what vm.sh, guest-run.sh and results.py
#                   name when the guest is stopped before it ends)
# Exits 0: the host reads the results and decides.
bin=$1
out=$2
mkdir -p "$out"
: >"$out/results"

# in_netns PROGRAM: run it in a new network namespace with lo up, for 15
# minutes at most; with AS_UID=<uid>, as that user with every capability
# (a memlock charge is the user's: see below).
in_netns() {
	local as=()

	[ -n "${AS_UID:-}" ] &&
		as=(setpriv --reuid="$AS_UID" --regid="$AS_UID" --clear-groups
		    --inh-caps=+all --ambient-caps=+all --)
	"${as[@]}" timeout 900 unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
}

# report TAP: the results, with the reason of each failure (the harness's
# "# file.c:line:test:..." lines, tpbench-check's "# ...Error: ...").
report() {
	grep -E '^(not )?ok |^# [^ ]+\.c:[0-9]+:|^# [A-Za-z]+Error: ' "$1"
}

# kmark TEXT: TEXT in the kernel log (results.py prints the last marks
# before a splat: what ran then).
kmark() { echo "guest-tests: $*" >/dev/kmsg 2>/dev/null; }

# run_tap NAME DIR CMD...: a kselftest-harness program (or tpbench-check),
# its TAP output in OUT/NAME.tap and its wall time in OUT/times.
run_tap() {
	local name=$1 dir=$2 t0 rc
	shift 2
	t0=$(date +%s)
	echo "# running $name"
	echo "$name" >"$out/running.$STREAM"
	kmark "running $name"
	( cd "$dir" && in_netns "$@" ) >"$out/$name.tap" 2>&1
	rc=$?
	echo "$name $(( $(date +%s) - t0 ))s" >>"$out/times"
	echo "# $name exited $rc"
	report "$out/$name.tap"
}

# run_script NAME SECS SCRIPT ARGS...: one of our guest scripts, SECS
# seconds at most, its output in OUT/NAME.log, its wall time in OUT/times.
run_script() {
	local name=$1 secs=$2 script=$3 t0
	shift 3
	t0=$(date +%s)
	echo "# running guest-$name"
	echo "$name" >"$out/running.$STREAM"
	kmark "running guest-$name"
	timeout "$secs" "$(realpath "$(dirname "$0")")/$script" "$@" >"$out/$name.log" 2>&1
	echo "# guest-$name exited $?"
	echo "$name $(( $(date +%s) - t0 ))s" >>"$out/times"
}

# Two streams, one per vCPU, of about thirteen minutes each: in the
# background tp4_zc_veth's teardown loop (the longest test), its
# close/unregister races (the zcrace fixture) and the programs in BG; the
# rest here, then the tpbench checks and the tcpdump checks. (2026-11-29,
# on 7.3.4, cold: the background took 1010 s, 208 of them tpbench, tp4_rx
# and tp4_stack, which now run here, and the foreground about 610 s.)
# Each program has its own network namespace; none measures speed. The
# background stream runs as another user: the memlock charge of a packet
# buffer is its user's, and tests on both sides check that charge
# exactly. A part of a program writes OUT/<program>@<part>.tap.
# The background stream attaches no XDP program and no tc program: with
# CONFIG_JUMP_LABEL off the static keys are plain loads, but the XDP
# dispatcher is still a static_call the foreground's attach rewrites, and
# under QEMU's TCG another vCPU executing that text as it changes is the
# stale-int3 oops the debug config avoids (README, "int3").
LONG=teardown_under_traffic
RACES=zcrace
BG=""
slow() {
	local AS_UID=4242 STREAM=bg name
	[ -x "$bin/tpacket4/tp4_zc_veth" ] &&
		run_tap tp4_zc_veth@$LONG "$bin/tpacket4" ./tp4_zc_veth -t $LONG
	[ -x "$bin/tpacket4/tp4_zc_veth" ] &&
		run_tap tp4_zc_veth@$RACES "$bin/tpacket4" ./tp4_zc_veth -f $RACES
	for name in $BG; do
		[ -x "$bin/tpacket4/$name" ] &&
			run_tap "$name" "$bin/tpacket4" "./$name"
	done
	rm -f "$out/running.$STREAM"
	return 0
}
STREAM=fg
: >"$out/times"
# The guest's available memory every 10 s (OUT/memory: seconds, MiB
# MemAvailable), whose least the verdict names: a guest that runs out of
# memory may die with nothing in the log.
memory() {
	local t0
	t0=$(date +%s)
	while :; do
		echo "$(( $(date +%s) - t0 )) $(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)" >>"$out/memory"
		sleep 10
	done
}
memory &
memory_pid=$!
slow &
slow_pid=$!

for t in "$bin"/tpacket4/tp4_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case " $BG " in *" $name "*) continue ;; esac
	if [ "$name" = tp4_zc_veth ]; then
		run_tap "$name" "$bin/tpacket4" "./$name" -T $LONG -F $RACES
	else
		run_tap "$name" "$bin/tpacket4" "./$name"
	fi
done

# tp4_zc_hw is for a real NIC (the loop above ran it without one: its
# tests skipped); its checks themselves run here on the one device with
# zero-copy the guest has, a veth pair.
if [ -x "$bin/tpacket4/tp4_zc_hw" ]; then
	run_tap tp4_zc_hw@+veth "$bin/tpacket4" sh -c \
		'ip link add hwa type veth peer name hwb &&
		 echo 1 >/proc/sys/net/ipv6/conf/hwa/disable_ipv6 &&
		 echo 1 >/proc/sys/net/ipv6/conf/hwb/disable_ipv6 &&
		 TP4_ZC_IFNAME=hwa TP4_ZC_PEER=hwb exec ./tp4_zc_hw'
fi

# The wire (a boot with VM_WIRE, scripts/vm.sh): the virtio-net NICs QEMU
# connects back to back, and zero-copy on them (scripts/guest-wire.sh),
# here in the foreground: it attaches XDP programs.
if grep -qs '^52:54:00:74:70:' /sys/class/net/*/address; then
	run_script wire 1800 guest-wire.sh "$bin" "$out"
	[ -s "$out/wire.tap" ] ||
		printf '1..1\nnot ok 1 guest-wire did not finish (see wire.log)\n' >"$out/wire.tap"
	grep -E '^(not )?ok |^# [^ ]+\.c:[0-9]+:' "$out/wire.log"
fi

for name in psock_tpacket psock_fanout txring_overwrite; do
	[ -x "$bin/net/$name" ] || continue
	echo "# running $name"
	echo "net/$name" >"$out/running.$STREAM"
	kmark "running net/$name"
	( cd "$bin/net" && in_netns "./$name" ) >"$out/$name.log" 2>&1
	rc=$?
	case $rc in
	0) r=PASS ;;
	4) r=SKIP ;;
	*) r=FAIL ;;
	esac
	echo "$r $name $rc" | tee -a "$out/results"
done

# tpbench (samples/tpacket4): what it reports against what the peer saw.
[ -x "$bin/samples/tpbench" ] &&
	run_tap tpbench "$bin/samples" python3 "$(realpath "$(dirname "$0")")/tpbench-check.py" \
		"$bin/samples/tpbench" "$bin/samples/bench_all.sh"

# The patched tcpdump and libpcap (make pcap) against the stock ones, in a
# network namespace of their own (scripts/guest-pcap.sh): OUT/pcap.tap,
# the capture files in OUT/pcap/, its log (with what it saw when a bound
# was hit) in OUT/pcap.log. As root, as the other programs of this stream:
# its memlock checks charge root, as theirs do, and never at the same time.
if [ -x "$bin/pcap/tcpdump" ]; then
	run_script pcap 600 guest-pcap.sh "$bin/pcap/tcpdump" "$out/pcap"
	cp "$out/pcap/pcap.tap" "$out/pcap.tap" 2>/dev/null ||
		printf '1..1\nnot ok 1 guest-pcap did not finish (see pcap.log)\n' >"$out/pcap.tap"
	grep -E '^(not )?ok |^# ' "$out/pcap.log"
fi
rm -f "$out/running.$STREAM"
wait "$slow_pid"
kill "$memory_pid" 2>/dev/null
exit 0
