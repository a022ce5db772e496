#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-bench.sh BINDIR OUT: runs inside the bench VM (make bench). One boot,
# one veth pair (tp4a <-> tp4b), and the whole matrix, RUNS times, the modes
# of a row one after the other within each round so that a drift of the
# machine hits them alike:
#   rxdrop, l2fwd  pktgen (the kernel's) sends from tp4b on CPU 0, the
#                  benchmark receives on tp4a on CPU 1 (the receive path up
#                  to the socket's ring runs in pktgen's softirq, CPU 0);
#   txpush         the benchmark sends on tp4a from CPU 1;
#   rxdrop-poll    rxdrop with a reader that sleeps in poll() when idle;
#                  V4 asks to be woken once 64 frames wait (SO_RCVLOWAT)
#                  and polls with a 1 ms timeout: the batching and latency
#                  of V3's blocks (64 frames, 1 ms timer) in tpbench;
#   each at 64 and 1500 bytes, with tpbench V2, V3, V4 (and V4+ZC once the
#   kernel has it) and xskbench (AF_XDP, copy mode, veth's native XDP:
#   "xdp-drv");
#   pingpong       l2fwd-1 and l2fwd-64: tpbench on tp4a (CPU 0) and its
#                  peer on tp4b (CPU 1), V2, V3, V4 (and V4+ZC, both ends);
#                  xskbench the same (AF_XDP copy mode, native XDP on both
#                  ends); shmring, two processes and shared memory, the
#                  ceiling.
# Each run's JSON line goes to OUT/runs.jsonl (a failed run: a line with
# "failed" and its error); progress goes to stdout. BENCH_SECS (default 5)
# and BENCH_RUNS (default 3) set the length and the repetitions; BENCH_ROWS
# (default "rxdrop rxdrop-poll txpush l2fwd pingpong") and BENCH_MODES
# (default: all of this kernel's) a part of the matrix.
set -u
bin=$1
out=$2
secs=${BENCH_SECS:-5}
runs=${BENCH_RUNS:-3}
mkdir -p "$out"
runs_file=$out/runs.jsonl
: >"$runs_file"

tpbench=$bin/tpbench
xskbench=$bin/xskbench
shmring=$bin/shmring
pg=/proc/net/pktgen
pin=/sys/fs/bpf/tp4bench_xsks
# bpffs refuses names with a dot (EPERM).
pin_b=/sys/fs/bpf/tp4bench_xsks_b
rm -f "$pin" "$pin_b"

ip link add tp4a type veth peer name tp4b || exit 1
for d in tp4a tp4b; do
	echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6
	ip link set $d up
done

# Has this kernel zero-copy for V4? (tpbench says ENOPROTOOPT until then.)
modes="v2 v3 v4"
if "$tpbench" -i tp4a --txpush -v 4 -z 0 -d 1 -q >/dev/null 2>&1; then
	modes="$modes v4zc"
fi
# AF_XDP in copy mode with veth's native XDP. Not generic XDP: pktgen's skbs
# are shared (it holds a reference across the transmit) and 6.12's generic
# XDP hits BUG_ON(skb_shared()) in pskb_expand_head() on them (kernel BUG,
# panic); veth's native path copies a shared skb first.
modes="$modes xdp-drv"
rows=${BENCH_ROWS:-rxdrop rxdrop-poll txpush l2fwd pingpong}
if [ -n "${BENCH_MODES:-}" ]; then
	modes=$BENCH_MODES
fi

# pktgen_start SIZE / pktgen_stop: a flood from tp4b to tp4a, to a MAC
# address nobody has and of an ethertype nobody handles: the stack drops
# it at once, the taps and XDP see it.
pktgen_start() {
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device tp4b" >$pg/kpktgend_0
	echo "count 0" >$pg/tp4b
	echo "pkt_size $1" >$pg/tp4b
	echo "delay 0" >$pg/tp4b
	echo "dst_mac 02:00:00:00:00:99" >$pg/tp4b
	echo start >$pg/pgctrl &
	pktgen=$!
	sleep 0.5
}

pktgen_stop() {
	echo stop >$pg/pgctrl
	wait "$pktgen"
}

total=0
done_runs=0
failed=0

# record LABEL CMD...: run one benchmark, keep its JSON line. A run fails
# when the program fails, prints no result or counts no packet at all.
record() {
	local label=$1 line err rc pps
	shift
	done_runs=$((done_runs + 1))
	err=$(mktemp)
	line=$("$@" 2>"$err" | tail -n 1; exit "${PIPESTATUS[0]}")
	rc=$?
	pps=$(echo "$line" | sed -n 's/.*"pps":\([0-9.]*\).*/\1/p')
	if [ $rc = 0 ] && [ "${line:0:1}" = "{" ] && [ -n "$pps" ] &&
	   [ "${pps%%.*}" != 0 ]; then
		echo "$line" >>"$runs_file"
		printf '[%3d/%d] %-34s %10.0f pps\n' "$done_runs" "$total" \
			"$label" "$pps"
	else
		failed=$((failed + 1))
		[ $rc = 0 ] && [ -n "$pps" ] && echo "no packet counted" >>"$err"
		python3 -c 'import json, sys
print(json.dumps({"failed": True, "label": sys.argv[1], "exit": int(sys.argv[2]),
                  "error": open(sys.argv[3], errors="replace").read()[-500:]}))' \
			"$label" "$rc" "$err" >>"$runs_file"
		printf '[%3d/%d] %-34s FAILED (exit %d): %s\n' "$done_runs" \
			"$total" "$label" "$rc" "$(head -c 200 "$err")"
	fi
	rm -f "$err"
}

# A run that could not start: the reason goes into the run's record.
say_failed() {
	echo "$*" >&2
	return 1
}

# one BENCH MODE SIZE: one run of a socket benchmark on tp4a. rxdrop-poll
# is rxdrop with a reader that sleeps in poll() when idle (tpbench only).
one() {
	local bench=$1 mode=$2 size=$3 cmd
	case $mode in
	v4zc) cmd=("$tpbench" -v 4 -z 0) ;;
	v*) cmd=("$tpbench" -v "${mode#v}") ;;
	xdp-*) [ "$bench" = rxdrop-poll ] && return
	       cmd=("$xskbench" "$bench" -m "${mode#xdp-}") ;;
	esac
	case $mode in
	v*) cmd+=("--${bench%-poll}" -q)
	    if [ "$bench" = rxdrop-poll ]; then
		    cmd+=(--poll)
		    [ "${mode:0:2}" = v4 ] && cmd+=(--lowat 64)
	    fi ;;
	*) cmd+=(-Q) ;;
	esac
	cmd+=(-i tp4a -s "$size" -d "$secs" -c 1)
	if [ "$bench" = txpush ]; then
		record "$bench $size B $mode" "${cmd[@]}"
		return
	fi
	# XDP goes on and off only while no traffic flows: attaching or
	# detaching patches the XDP dispatcher's code, and under TCG a vCPU
	# running it meanwhile can take a stale int3 (seen: "Oops: int3" in
	# bpf_dispatcher_xdp_func, a panic).
	if [ "${mode%-*}" = xdp ]; then
		if ! "$xskbench" attach -i tp4a -m "${mode#xdp-}" -M "$pin"; then
			record "$bench $size B $mode" \
				say_failed "xskbench attach failed (see above)"
			return
		fi
		cmd+=(-M "$pin")
	fi
	pktgen_start "$size"
	record "$bench $size B $mode" "${cmd[@]}"
	pktgen_stop
	if [ "${mode%-*}" = xdp ]; then
		# A program left on tp4a would change every later run's path.
		if ! "$xskbench" detach -i tp4a -m "${mode#xdp-}" -M "$pin"; then
			echo "bench: XDP detach failed: stopping"
			exit 1
		fi
	fi
}

# Zero-copy ping-pong: both ends ask for queue pair 0. AF_XDP: both ends
# with veth's native XDP.
pp_modes=
for m in v2 v3 v4 v4zc xdp-drv; do
	case " $modes " in
	*" $m "*) pp_modes="$pp_modes $m" ;;
	esac
done

# pingpong_one N MODE: one ping-pong run between tp4a (CPU 0) and tp4b.
pingpong_one() {
	local n=$1 mode=$2 v
	case $mode in
	xdp-*)
		if ! "$xskbench" attach -i tp4a -m "${mode#xdp-}" -M "$pin" ||
		   ! "$xskbench" attach -i tp4b -m "${mode#xdp-}" -M "$pin_b"; then
			record "l2fwd-$n ping-pong $mode" \
				say_failed "xskbench attach failed (see above)"
		else
			record "l2fwd-$n ping-pong $mode" "$xskbench" pingpong \
				-m "${mode#xdp-}" -i tp4a -P tp4b -n "$n" \
				-M "$pin" -N "$pin_b" -c 0 -C 1 -d "$secs" -Q
		fi
		for d in tp4a tp4b; do
			p=$pin
			[ $d = tp4b ] && p=$pin_b
			[ -e "$p" ] || continue
			if ! "$xskbench" detach -i $d -m "${mode#xdp-}" -M "$p"; then
				echo "bench: XDP detach failed: stopping"
				exit 1
			fi
		done
		return ;;
	v4zc) v=(-v 4 -z 0) ;;
	*) v=(-v "${mode#v}") ;;
	esac
	record "l2fwd-$n ping-pong $mode" "$tpbench" "${v[@]}" -i tp4a \
		--pingpong "$n" --peer tp4b -c 0 -C 1 -d "$secs" -q
}
# A round: each socket benchmark x 2 sizes x the modes (rxdrop-poll: the
# tpbench modes only), and 2 ping-pongs x (the ping-pong modes and shm).
total=0
for bench in $rows; do
	for mode in $modes; do
		case $bench-$mode in
		pingpong-*|rxdrop-poll-xdp-*) ;;
		*) total=$((total + 2)) ;;
		esac
	done
done
case " $rows " in
*" pingpong "*) total=$((total + 2 * ($(echo $pp_modes | wc -w) + 1))) ;;
esac
total=$((runs * total))
echo "bench: $runs rounds of $((total / runs)) runs of ${secs}s; modes: $modes; rows: $rows"
for round in $(seq "$runs"); do
	echo "bench: round $round of $runs"
	for bench in $rows; do
		[ "$bench" = pingpong ] && continue
		for size in 64 1500; do
			for mode in $modes; do
				one "$bench" "$mode" "$size"
			done
		done
	done
	case " $rows " in
	*" pingpong "*) ;;
	*) continue ;;
	esac
	for n in 1 64; do
		for mode in $pp_modes; do
			pingpong_one "$n" "$mode"
		done
		record "l2fwd-$n ping-pong shm" "$shmring" -n "$n" -c 0,1 \
			-d "$secs" -Q
	done
done
ip link del tp4a
echo "bench: $done_runs runs, $failed failed"
[ "$failed" = 0 ]
