#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-bench.sh BINDIR OUT: runs inside the bench VM (make bench). One boot,
# one veth pair (tp4a <-> tp4b), and the whole matrix, RUNS times, the modes
# of a row one after the other within each round so that a drift of the
# machine hits them alike:
#   rxdrop, l2fwd  pktgen (the kernel's) sends from tp4b on CPU 0, the
#                  benchmark receives on tp4a on CPU 1 (the receive path up
#                  to the socket's ring runs in pktgen's softirq, CPU 0);
#                  rxdrop also with no receiver at all ("pktgen"): the
#                  generator's own rate and cost, what the receive cells
#                  are bound by and what their counts less it leave;
#   txpush         the benchmark sends on tp4a from CPU 1;
#   rxdrop-poll    rxdrop with a reader that sleeps in poll() when idle;
#                  V4 asks to be woken once as many frames wait as V3's
#                  block holds packets (SO_RCVLOWAT: 818 at 64 bytes, 82
#                  at 1500; see v3_block_pkts); both wait 4 ms, a jiffy,
#                  for a partial batch (V3's block timer, V4's poll()
#                  timeout; see poll_ms);
#   rxdrop-pcap    rxdrop-poll with the settings of a capture: V4 as the
#                  project's libpcap (pcap/) sets it, SO_RCVLOWAT 64 and a
#                  1 ms poll() timeout, V3 as the stock libpcap with
#                  tcpdump's default 1000 ms timeout (its block timer);
#                  V3, V4 and V4+ZC ("variant":"pcap");
#   each at 64 and 1500 bytes, with tpbench V2, V3, V4 (and V4+ZC once the
#   kernel has it) and xskbench (AF_XDP, copy mode, veth's native XDP:
#   "xdp-drv");
#   pingpong       l2fwd-1 and l2fwd-64: tpbench on tp4a (CPU 0) and its
#                  peer on tp4b (CPU 1), V2, V3, V4 (and V4+ZC, both ends);
#                  xskbench the same (AF_XDP copy mode, native XDP on both
#                  ends); shmring, two processes and shared memory, the
#                  ceiling;
#   xdp            XDP on zero-copy queues (tpbench --xdp, a program that
#                  counts each packet): rxdrop 64 B with XDP_DROP, pktgen
#                  as for rxdrop, the program on a V4+ZC queue ("v4zc")
#                  and in veth's own native XDP path without zero-copy
#                  ("v3": a V3 socket that gets nothing), the rate being
#                  what the program counted; and l2fwd-64 ping-pong V4+ZC
#                  with an XDP_PASS program on both ends, against the
#                  pingpong row's V4+ZC without one;
#   gro            the copy modes (V2, V3, V4) with veth's NAPI path on,
#                  as V4+ZC always has it: GRO on and TSO off at both ends
#                  (veth takes a sender's skb to the receiver's NAPI only
#                  once GRO is on there and, unless the skb is a socket's
#                  with GRO_FRAGLIST or GRO_UDP_FWD on, TSO is off at the
#                  sender: veth_skb_is_eligible_for_gro(); zero-copy turns
#                  the peer's TSO off too): rxdrop 64 B and the l2fwd-64
#                  ping-pong ("variant":"gro");
#   capture        tcpdump -w /dev/null on tp4a (CPU 1) while pktgen floods
#                  from tp4b as for rxdrop, 64 and 1500 bytes: the stock
#                  /usr/bin/tcpdump (TPACKET_V3), the patched one (BINDIR/
#                  tcpdump, make pcap) with --tpacket-version=4 and with
#                  --zerocopy=0, and pktgen alone (no capture: its rate is
#                  the ceiling). The rate is what tcpdump captured between
#                  two SIGUSR1 statistics lines BENCH_SECS apart, pktgen
#                  running; then pktgen stops, tcpdump drains its ring and
#                  SIGINT gives the totals (drops, all that pktgen sent
#                  captured or not).
#   wakeup         the rings' wake-up flags (tpbench --wakeup: a kick only
#                  when the kernel asks for one): txpush at each size and
#                  the l2fwd-1 and l2fwd-64 ping-pongs, V4 and V4+ZC
#                  ("variant":"wakeup"), against the txpush and pingpong
#                  rows' V4 and V4+ZC without the flags (the same rounds);
#                  each run's JSON counts its kicks ("kicks");
#   wire-rxdrop, wire-l2fwd, wire-txpush  when the guest has the wire
#                  (make bench boots with VM_WIRE=iommu): rxdrop, l2fwd and
#                  txpush on two virtio-net NICs back to back, pktgen
#                  sending out of ia on CPU 0, the program receiving (and
#                  forwarding back out) on ib from CPU 1, where ib's
#                  interrupts go; txpush sends out of ib. V2, V3, V4, V4+ZC,
#                  AF_XDP in copy mode ("xdp-drv") and in zero-copy mode
#                  ("xdp-zc"), 64 and 1500 bytes ("variant":"wire");
# Each run's JSON line goes to OUT/runs.jsonl (a failed run: a line with
# "failed" and its error); progress goes to stdout. A run that pktgen feeds
# gets "pktgen_sent": what pktgen sent while the program ran, set-up and
# teardown included. The modes of a row run in an order rotated by one
# each round, so that none always follows the same one.
#
# With BENCH_COUNT=1 (make bench boots QEMU with the instruction counting
# plugin, bench/tp4count.c), BINDIR/tp4mark marks the start of each run
# (marker 4: the Nth such marker is the Nth line of runs.jsonl), the
# programs mark their own measured windows and idle turns, and pktgen
# alone runs in a window of BINDIR/tp4mark -w.
#
# BENCH_SECS (default 2) and BENCH_RUNS (default 5) set the length and
# the repetitions; BENCH_ROWS
# (default "rxdrop rxdrop-poll rxdrop-pcap txpush l2fwd pingpong xdp gro
# wakeup";
# "capture" runs only
# when asked for, see below) and
# BENCH_MODES (default: all of this kernel's) a part of the matrix (the
# capture row runs those of v3, v4 and v4zc that BENCH_MODES has, and
# pktgen alone always), BENCH_SIZES (default "64 1500") the packet sizes.
set -u
bin=$1
out=$2
secs=${BENCH_SECS:-2}
runs=${BENCH_RUNS:-5}
counting=${BENCH_COUNT:-}
mkdir -p "$out"
runs_file=$out/runs.jsonl
: >"$runs_file"

tpbench=$bin/tpbench
xskbench=$bin/xskbench
shmring=$bin/shmring
tcpdump=$bin/tcpdump
stock_tcpdump=/usr/bin/tcpdump
mark=$bin/tp4mark
if [ -n "$counting" ] && [ ! -x "$mark" ]; then
	echo "bench: BENCH_COUNT without $mark"
	exit 1
fi
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
# ---- the wire ----
# make bench boots with the wire's iommu pair (scripts/vm.sh, VM_WIRE=iommu):
# two virtio-net NICs that QEMU connects back to back through a hub, with
# the DMA API (ACCESS_PLATFORM), so that AF_XDP zero-copy runs on them
# too. The wire's rows: pktgen (CPU 0) sends out of ia, ib receives
# (promiscuous, for QEMU's filter), the measured program runs on ib from
# CPU 1 and ib's interrupts, hence its NAPIs, go to CPU 1 too: CPU 1's
# instructions are the driver's receive path and the program, what
# bench-report.py's wire table reports per packet. pktgen's source
# address is one nobody has, so that what l2fwd sends back out of ib is
# dropped by QEMU at ia (not promiscuous), as is what txpush sends.
wire_find() {
	local f
	for f in /sys/class/net/*/address; do
		[ "$(cat "$f")" = "$1" ] && { basename "$(dirname "$f")"; return 0; }
	done
	return 1
}
# wire_irqs DEV CPU: DEV's virtio interrupts (its queues' vectors) to CPU;
# fails if it has none of its own.
wire_irqs() {
	local v n got=
	v=$(basename "$(readlink -f "/sys/class/net/$1/device")")
	for n in $(awk -v v="$v" '$NF ~ "^" v "-(input|output)" { sub(":", "", $1); print $1 }' /proc/interrupts); do
		echo "$2" >"/proc/irq/$n/smp_affinity_list" || return 1
		got=1
	done
	[ -n "$got" ]
}
wire=
pin_w=/sys/fs/bpf/tp4bench_xsks_w
rm -f "$pin_w"
wa_dev=$(wire_find 52:54:00:74:70:10) && wb_dev=$(wire_find 52:54:00:74:70:11) && wire=1
if [ -n "$wire" ]; then
	for d in "$wa_dev:ia" "$wb_dev:ib"; do
		ip link set "${d%:*}" down
		[ "${d%:*}" = "${d#*:}" ] || ip link set "${d%:*}" name "${d#*:}"
		echo 1 >"/proc/sys/net/ipv6/conf/${d#*:}/disable_ipv6"
		ip link set "${d#*:}" up
	done
	ip link set ib promisc on
	if ! wire_irqs ib 1 || ! wire_irqs ia 0; then
		echo "bench: the wire's interrupts cannot be placed: no wire rows"
		wire=
	fi
fi
# The wire's modes: those of the veth rows, and AF_XDP zero-copy.
wire_modes=
if [ -n "$wire" ]; then
	wire_modes="v2 v3 v4"
	"$tpbench" -i ib --txpush -v 4 -z 0 -d 1 -q >/dev/null 2>&1 &&
		wire_modes="$wire_modes v4zc"
	wire_modes="$wire_modes xdp-drv xdp-zc"
fi

rows=${BENCH_ROWS:-rxdrop rxdrop-poll rxdrop-pcap txpush l2fwd pingpong xdp gro wakeup${wire:+ wire-rxdrop wire-l2fwd wire-txpush}}
if [ -n "${BENCH_MODES:-}" ]; then
	modes=$BENCH_MODES
	w=
	for m in $wire_modes; do
		case " $BENCH_MODES " in *" $m "*) w="$w $m" ;; esac
	done
	wire_modes=${w# }
fi

# pktgen_start SIZE / pktgen_stop: a flood from $pg_dev (tp4b; the wire's
# rows: ia) to tp4a (ib), UDP to a MAC address nobody has: the stack drops
# it at once (PACKET_OTHERHOST), the taps and XDP see it. The wire's
# rows also set its source address ($pg_src) to one nobody has, so that
# what l2fwd sends back is dropped by QEMU before the guest's ia sees it.
pg_dev=tp4b
pg_src=
pktgen_start() {
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device $pg_dev" >$pg/kpktgend_0
	echo "count 0" >$pg/$pg_dev
	echo "pkt_size $1" >$pg/$pg_dev
	echo "delay 0" >$pg/$pg_dev
	echo "dst_mac 02:00:00:00:00:99" >$pg/$pg_dev
	[ -z "$pg_src" ] || echo "src_mac $pg_src" >$pg/$pg_dev
	echo start >$pg/pgctrl &
	pktgen=$!
	pg_running=1
	sleep 0.5
}

pktgen_stop() {
	echo stop >$pg/pgctrl
	wait "$pktgen"
	pg_running=
}
pg_running=

# pktgen_alone: the rxdrop row's "pktgen" mode, pktgen with no receiver
# (started by one()): the JSON line of what it sent in a window of $secs,
# counted (tp4mark -w) or not.
pktgen_alone() {
	local w
	if [ -n "$counting" ]; then
		# On CPU 1, which pktgen leaves idle: on pktgen's CPU, the
		# scheduler could stop it between reading pktgen's count and
		# marking the window (seen: 10 % of the packets in a window
		# counted but not in it).
		w=$(taskset -c 1 "$mark" -w "$secs" $pg/tp4b) || return 1
	else
		w="T ${EPOCHREALTIME/,/.}
$(cat $pg/tp4b)"
		sleep "$secs"
		w="$w
T ${EPOCHREALTIME/,/.}
$(cat $pg/tp4b)"
	fi
	echo "$w" | awk -v size="$size" '
		/^T / { t[++n] = $2 }
		$1 == "pkts-sofar:" { s[n] = $2; e[n] = $4 }
		END {
			if (n != 2 || !(2 in s)) exit 1
			dt = t[2] - t[1]; p = s[2] - s[1]
			printf "{\"tool\":\"pktgen\",\"bench\":\"rxdrop\",\"mode\":\"pktgen\",\"ifname\":\"tp4b\",\"pkt_size\":%d,\"duration\":%.3f,\"packets\":%d,\"pps\":%.1f,\"errors\":%d}\n", size, dt, p, p / dt, e[2] - e[1]
		}'
}

total=0
done_runs=0
failed=0

# record LABEL CMD...: run one benchmark, keep its JSON line. A run fails
# when the program fails, prints no result or counts no packet at all.
record() {
	local label=$1${variant:+ ($variant)} line err rc pps sent=
	shift
	done_runs=$((done_runs + 1))
	[ -z "$counting" ] || "$mark" 4
	if [ -n "$pg_running" ]; then
		pg_counters
		sent=$pg_sofar
	fi
	err=$(mktemp)
	# The run being made, for vm.sh's and guest-run.sh's timeout
	# messages; each run bounded on its own (the program's own -d
	# seconds and a minute), so that one that hangs fails alone (124).
	echo "$label" >"$out/running.bench"
	local bound=(timeout -k 10 $(( secs + 60 )))
	# (A shell function, such as xdp_drop_run, bounds what it runs.)
	! declare -F "$1" >/dev/null || bound=()
	line=$("${bound[@]}" "$@" 2>"$err" | tail -n 1; exit "${PIPESTATUS[0]}")
	rc=$?
	rm -f "$out/running.bench"
	if [ -n "$sent" ] && [ "${line: -1}" = "}" ]; then
		pg_counters
		line="${line%\}},\"pktgen_sent\":$((pg_sofar - sent))}"
	fi
	if [ -n "${variant:-}" ] && [ "${line: -1}" = "}" ]; then
		line="${line%\}},\"variant\":\"$variant\"}"
	fi
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

# How long rxdrop-poll's readers wait for a batch that is not whole: one
# jiffy of the bench kernel (HZ=250). V3's block timer counts in jiffies,
# so asked for 1 ms it hands a partial block over after 4; a V4 reader
# polling with a 1 ms timeout woke three times as often (3.3 against 1.2
# sleeps per thousand packets of 64 bytes, results/2026-11-26-tcg-s12-poll).
poll_ms=4

# v3_block_pkts SIZE: how many packets of SIZE bytes V3's reader gets per
# wake-up when its blocks fill: tpbench's block of 64 2048-byte frames
# (128 KB, less its 48-byte header) over the space V3 gives each packet
# (TPACKET3_HDRLEN and sockaddr_ll, the MAC header before a 16-byte
# aligned network header, the packet, 16-byte aligned): 818 packets of
# 64 bytes, 82 of 1500. The V4 reader of rxdrop-poll asks for as many
# (SO_RCVLOWAT), so that both sleep about as often when the flood keeps
# up.
v3_block_pkts() {
	echo $(( (131072 - 48) / ((82 + $1 + 15) / 16 * 16) ))
}

# one BENCH MODE SIZE: one run of a socket benchmark on tp4a. rxdrop-poll
# is rxdrop with a reader that sleeps in poll() when idle (tpbench only).
one() {
	local bench=$1 mode=$2 size=$3 cmd variant=${variant:-}
	[ "$bench" = rxdrop-pcap ] && variant=pcap
	case $mode in
	pktgen)
		[ "$bench" = rxdrop ] || return 0
		pktgen_start "$size"
		record "$bench $size B $mode" pktgen_alone
		pktgen_stop
		return ;;
	v4zc) cmd=("$tpbench" -v 4 -z 0) ;;
	v*) cmd=("$tpbench" -v "${mode#v}") ;;
	xdp-*) case $bench in rxdrop-*) return ;; esac
	       cmd=("$xskbench" "$bench" -m "${mode#xdp-}") ;;
	esac
	[ "$bench-$mode" = rxdrop-pcap-v2 ] && return
	case $mode in
	v*) cmd+=("--${bench%%-*}" -q)
	    case $bench in
	    rxdrop-poll)
		    # Both wait $poll_ms for a partial batch: V3's block
		    # timer, V4's poll() timeout.
		    cmd+=(--poll -T "$poll_ms")
		    [ "${mode:0:2}" = v4 ] && cmd+=(--lowat "$(v3_block_pkts "$size")") ;;
	    rxdrop-pcap)
		    cmd+=(--poll)
		    if [ "${mode:0:2}" = v4 ]; then
			    cmd+=(--lowat 64 -T 1)
		    else
			    cmd+=(-T 1000)
		    fi ;;
	    esac ;;
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
	# bpf_dispatcher_xdp_func, a panic). The emulator's: the base kernel
	# without the series panics the same way (scripts/int3-repro.sh).
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

# wire_one BENCH MODE SIZE: one run of a wire row (BENCH rxdrop, l2fwd or
# txpush), the program on ib from CPU 1, pktgen sending out of ia.
wire_one() {
	local bench=$1 mode=$2 size=$3 variant=wire cmd label="wire-$1 $3 B $2"
	if [ -z "$wire" ]; then
		record "$label" say_failed "the guest has no wire (VM_WIRE=iommu)"
		return
	fi
	case $mode in
	v4zc) cmd=("$tpbench" -v 4 -z 0 "--$bench" -q) ;;
	v*) cmd=("$tpbench" -v "${mode#v}" "--$bench" -q) ;;
	xdp-drv) cmd=("$xskbench" "$bench" -m drv -Q) ;;
	xdp-zc) cmd=("$xskbench" "$bench" -m drv -Z -Q) ;;
	*) return ;;
	esac
	cmd+=(-i ib -s "$size" -d "$secs" -c 1)
	if [ "$bench" = txpush ]; then
		record "$label" "${cmd[@]}"
		return
	fi
	# XDP on and off while no traffic flows (see one()).
	if [ "${mode%-*}" = xdp ]; then
		if ! "$xskbench" attach -i ib -m drv -M "$pin_w"; then
			record "$label" say_failed "xskbench attach failed (see above)"
			return
		fi
		cmd+=(-M "$pin_w")
	fi
	pg_dev=ia pg_src=02:00:00:00:00:98
	pktgen_start "$size"
	record "$label" "${cmd[@]}"
	pktgen_stop
	pg_dev=tp4b pg_src=
	if [ "${mode%-*}" = xdp ] &&
	   ! "$xskbench" detach -i ib -m drv -M "$pin_w"; then
		echo "bench: XDP detach failed on ib: stopping"
		exit 1
	fi
}

# wakeup_row: the wake-up flags' cells of a round (see the head).
wakeup_row() {
	local variant=wakeup mode size n v
	for mode in $wakeup_modes; do
		v=(-v 4 --wakeup)
		[ "$mode" = v4zc ] && v+=(-z 0)
		for size in $sizes; do
			record "txpush $size B $mode" "$tpbench" "${v[@]}" \
				--txpush -q -i tp4a -s "$size" -d "$secs" -c 1
		done
		for n in 1 64; do
			record "l2fwd-$n ping-pong $mode" "$tpbench" "${v[@]}" \
				-i tp4a --pingpong "$n" --peer tp4b -c 0 -C 1 \
				-d "$secs" -q
		done
	done
}
wakeup_modes=
for m in v4 v4zc; do
	case " $modes " in
	*" $m "*) wakeup_modes="$wakeup_modes $m" ;;
	esac
done

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
# The XDP row's modes: the program in veth's native path (v3) and on a
# zero-copy queue (v4zc), those BENCH_MODES has.
xdp_modes=
for m in v3 v4zc; do
	case " $modes " in
	*" $m "*) xdp_modes="$xdp_modes $m" ;;
	esac
done

# xdp_attached DEV: wait (20 s at most) until DEV has an XDP program.
xdp_attached() {
	for _ in $(seq 200); do
		ip link show dev "$1" | grep -q 'prog/xdp' && return 0
		sleep 0.1
	done
	return 1
}

# xdp_drop_run CMD...: CMD is tpbench --rxdrop --xdp drop, which measures
# from the first packet on: pktgen starts once its program is attached (XDP
# goes on and off only while no traffic flows, see one()).
xdp_drop_run() {
	local p rc
	timeout -k 10 $(( secs + 60 )) "$@" &
	p=$!
	if ! xdp_attached tp4a; then
		kill "$p"
		wait "$p"
		echo "the XDP program was not attached" >&2
		return 1
	fi
	pktgen_start 64
	wait "$p"
	rc=$?
	pktgen_stop
	return $rc
}

# xdp_one MODE: one run of the XDP row's rxdrop and, for v4zc, ping-pong.
xdp_one() {
	local v
	case $1 in
	v4zc) v=(-v 4 -z 0) ;;
	*) v=(-v "${1#v}") ;;
	esac
	record "rxdrop 64 B $1 XDP_DROP" xdp_drop_run "$tpbench" "${v[@]}" \
		--rxdrop --xdp drop -q -i tp4a -s 64 -d "$secs" -c 1
	[ "$1" = v4zc ] || return 0
	record "l2fwd-64 ping-pong $1 XDP_PASS" "$tpbench" "${v[@]}" -i tp4a \
		--pingpong 64 --peer tp4b -c 0 -C 1 -d "$secs" -q --xdp pass
}

# The capture row: the stock tcpdump (V3), the patched one in V4 copy mode
# and with zero-copy (those BENCH_MODES has), and pktgen alone.
cap_modes=
for m in v3 v4 v4zc; do
	case " $modes " in
	*" $m "*) cap_modes="$cap_modes $m" ;;
	esac
done
cap_modes="${cap_modes# } pktgen"
# The capture buffer (-B, KiB), the same for all: V3's ring, V4's packet
# buffer (8192 frames of 2 KiB at 16 MiB).
cap_buf=${BENCH_CAPTURE_BUF:-16384}
# Why the patched tcpdump cannot run, if it cannot: its runs fail with it.
cap_missing=
if [ ! -x "$tcpdump" ]; then
	cap_missing="$tcpdump: missing (make pcap; make bench copies build/pcap/bin/tcpdump there)"
elif ! "$tcpdump" --version 2>&1 | grep -q TPACKET_V4; then
	cap_missing="$tcpdump: not the patched tcpdump (its libpcap has no TPACKET_V4)"
fi

# td_stats FILE [N]: "captured received dropped" from tcpdump's statistics
# in FILE: the Nth line that a SIGUSR1 made it print ("tcpdump: 5 packets
# captured, 7 packets received by filter, 0 packets dropped by kernel"),
# or without N those it printed on exit (one a line: "5 packets
# captured"). Fails if FILE has no such statistics.
td_stats() {
	local line what v out=
	if [ -n "${2:-}" ]; then
		line=$(grep -a '^tcpdump: [0-9]* packets\? captured, ' "$1" |
		       sed -n "${2}p")
	else
		line=$(grep -aE '^[0-9]+ packets? (captured|received by filter|dropped by kernel)$' "$1" |
		       tr '\n' ' ')
	fi
	for what in 'captured' 'received by filter' 'dropped by kernel'; do
		v=$(echo "$line" | grep -o "[0-9]\+ packets\? $what" | tail -n 1 |
		    cut -d' ' -f1)
		[ -n "$v" ] || return 1
		out="$out${out:+ }$v"
	done
	echo "$out"
}

# pg_counters: pktgen's packets sent so far and errors on $pg_dev, in
# $pg_sofar and $pg_errors (read without a fork, to time them closely).
pg_counters() {
	local k v e rest
	pg_sofar='' pg_errors=''
	while read -r k v e rest; do
		if [ "$k" = pkts-sofar: ]; then
			pg_sofar=$v
			[ "$e" = errors: ] && pg_errors=${rest%% *}
			break
		fi
	done <$pg/$pg_dev
}

# cap_mark N: the Nth point of a capture run's window: the time, pktgen's
# counters and, with a capture ($td), its Nth statistics line (SIGUSR1)
# into $cap_last: "time sent errors [captured received dropped]".
cap_mark() {
	local n=$1 t st=
	[ -n "$td" ] && kill -USR1 "$td"
	t=${EPOCHREALTIME/,/.}
	pg_counters
	if [ -n "$td" ]; then
		for _ in $(seq 200); do
			st=$(td_stats "$td_err" "$n") && break
			kill -0 "$td" 2>/dev/null || break
			sleep 0.05
		done
		[ -n "$st" ] || return 1
	fi
	cap_last="$t ${pg_sofar:-?} ${pg_errors:-?} $st"
}

# td_stop: SIGINT to the capture, its exit status in $td_rc (124 if it
# did not exit in 20 s: then SIGKILL).
td_stop() {
	td_rc=124
	kill -INT "$td" 2>/dev/null
	for _ in $(seq 200); do
		if ! kill -0 "$td" 2>/dev/null; then
			wait "$td"
			td_rc=$?
			return
		fi
		sleep 0.1
	done
	kill -KILL "$td" 2>/dev/null
	wait "$td" 2>/dev/null
}

# cap_fail MSG: end a failed capture run (pktgen and tcpdump stopped), MSG
# and tcpdump's messages as its reason.
cap_fail() {
	[ -n "$pg_on" ] && pktgen_stop
	[ -n "$td" ] && kill -0 "$td" 2>/dev/null && td_stop
	echo "$1"
	[ -n "$td_err" ] && tail -n 8 "$td_err"
	rm -f "$td_err"
	return 1
}

# capture_run SIZE MODE [TCPDUMP...]: one run of the capture row (run by
# record): the capture TCPDUMP (none: pktgen alone) on tp4a (CPU 1), pktgen
# flooding from tp4b. After pktgen's 0.5 s start, BENCH_SECS between two
# statistics lines (SIGUSR1) give the rate; then pktgen stops, the capture
# has 1.5 s (more than its 1 s packet buffer timeout) to empty its ring,
# and SIGINT gives the totals. Prints the run's JSON line: "packets" and
# "pps" what was captured in the window (pktgen alone: what it sent),
# "received" and "drops" the socket's counts in it, "sent" and "sent_pps"
# pktgen's, and "total_*" the counts of the whole run.
capture_run() {
	local size=$1 mode=$2 fin='' a b
	shift 2
	td='' td_err='' pg_on=''
	if [ $# -gt 0 ]; then
		td_err=$(mktemp)
		taskset -c 1 "$@" -Z root -n -i tp4a -B "$cap_buf" -w /dev/null \
			>/dev/null 2>"$td_err" &
		td=$!
		for _ in $(seq 300); do
			grep -q 'listening on' "$td_err" && break
			kill -0 "$td" 2>/dev/null || break
			sleep 0.1
		done
		grep -q 'listening on' "$td_err" ||
			{ cap_fail "tcpdump did not start"; return 1; } >&2
		# The patched tcpdump falls back to V3 with a warning.
		! grep -q 'not supported by this kernel' "$td_err" ||
			{ cap_fail "no TPACKET_V4 in this kernel"; return 1; } >&2
	fi
	pktgen_start "$size"
	pg_on=1
	cap_mark 1 || { cap_fail "no statistics line after SIGUSR1"; return 1; } >&2
	a=$cap_last
	sleep "$secs"
	cap_mark 2 || { cap_fail "no statistics line after SIGUSR1"; return 1; } >&2
	b=$cap_last
	pktgen_stop
	pg_on=
	pg_counters
	if [ -n "$td" ]; then
		sleep 1.5
		td_stop
		[ "$td_rc" = 0 ] ||
			{ cap_fail "tcpdump exited $td_rc"; return 1; } >&2
		fin=$(td_stats "$td_err") ||
			{ cap_fail "no statistics at tcpdump's exit"; return 1; } >&2
		rm -f "$td_err"
	fi
	python3 -c 'import json, sys
mode, size, buf, prog = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tool = "pktgen" if prog == "pktgen" else "tcpdump"
a = sys.argv[5].split()
b = sys.argv[6].split()
total = [int(x) for x in (sys.argv[7] + " " + sys.argv[8]).split()]
dt = float(b[0]) - float(a[0])
sent, errors = int(b[1]) - int(a[1]), int(b[2]) - int(a[2])
r = {"tool": tool, "bench": "capture", "mode": mode, "ifname": "tp4a",
     "pkt_size": size, "inflight": 0, "poll": False, "buffer_kib": buf,
     "duration": round(dt, 3)}
if tool == "pktgen":
    r.update(packets=sent, pps=round(sent / dt, 1))
else:
    r["program"] = prog
    c, rcv, d = (int(y) - int(x) for x, y in zip(a[3:6], b[3:6]))
    r.update(packets=c, pps=round(c / dt, 1), received=rcv, drops=d)
r.update(sent=sent, sent_pps=round(sent / dt, 1), pktgen_errors=errors,
         total_sent=total[0], total_pktgen_errors=total[1])
if tool != "pktgen":
    r.update(total_captured=total[2], total_received=total[3],
             total_drops=total[4])
print(json.dumps(r, separators=(",", ":")))' "$mode" "$size" "$cap_buf" "${1:-pktgen}" \
		"$a" "$b" "$pg_sofar $pg_errors" "$fin"
}

# capture_one MODE SIZE: one run of the capture row.
capture_one() {
	local mode=$1 size=$2 label="capture $2 B $1"
	case $mode in
	v3) record "$label" capture_run "$size" "$mode" "$stock_tcpdump" ;;
	v4|v4zc)
		if [ -n "$cap_missing" ]; then
			record "$label" say_failed "$cap_missing"
		elif [ "$mode" = v4 ]; then
			record "$label" capture_run "$size" "$mode" "$tcpdump" \
				--tpacket-version=4
		else
			record "$label" capture_run "$size" "$mode" "$tcpdump" \
				--zerocopy=0
		fi ;;
	pktgen) record "$label" capture_run "$size" "$mode" ;;
	esac
}

# The gro row's modes: the copy modes.
gro_modes=
for m in v2 v3 v4; do
	case " $modes " in
	*" $m "*) gro_modes="$gro_modes $m" ;;
	esac
done

# gro_row: the gro row, veth's NAPI (GRO) path on at both ends meanwhile.
gro_row() {
	local d mode variant=gro
	for d in tp4a tp4b; do
		if ! ethtool -K $d gro on tso off >/dev/null; then
			for mode in $gro_modes; do
				record "rxdrop 64 B $mode" say_failed "ethtool -K $d gro on tso off failed"
				record "l2fwd-64 ping-pong $mode" say_failed "ethtool -K $d gro on tso off failed"
			done
			return
		fi
	done
	for mode in $gro_modes; do
		one rxdrop "$mode" 64
	done
	for mode in $gro_modes; do
		pingpong_one 64 "$mode"
	done
	for d in tp4a tp4b; do
		ethtool -K $d gro off tso on >/dev/null ||
			{ echo "bench: ethtool -K $d gro off tso on failed: stopping"; exit 1; }
	done
}

# The packet sizes of the rows that have two (BENCH_SIZES: one of them).
sizes=${BENCH_SIZES:-64 1500}
nsizes=$(echo $sizes | wc -w)

# A round: each socket benchmark x 2 sizes x the modes (rxdrop-poll: the
# tpbench modes only), 2 ping-pongs x (the ping-pong modes and shm), and
# the capture row x 2 sizes x its modes.
total=0
for bench in $rows; do
	if [ "$bench" = capture ]; then
		total=$((total + nsizes * $(echo "$cap_modes" | wc -w)))
		continue
	fi
	if [ "$bench" = xdp ]; then
		total=$((total + $(echo "$xdp_modes" | wc -w)))
		case " $xdp_modes " in
		*" v4zc "*) total=$((total + 1)) ;;
		esac
		continue
	fi
	if [ "$bench" = gro ]; then
		total=$((total + 2 * $(echo "$gro_modes" | wc -w)))
		continue
	fi
	if [ "$bench" = wakeup ]; then
		total=$((total + (nsizes + 2) * $(echo $wakeup_modes | wc -w)))
		continue
	fi
	case $bench in
	wire-*) total=$((total + nsizes * $(echo $wire_modes | wc -w)))
		continue ;;
	esac
	for mode in $modes; do
		case $bench-$mode in
		pingpong-*|rxdrop-poll-xdp-*|rxdrop-pcap-xdp-*|rxdrop-pcap-v2) ;;
		*) total=$((total + nsizes)) ;;
		esac
	done
	[ "$bench" = rxdrop ] && total=$((total + nsizes))
done
case " $rows " in
*" pingpong "*) total=$((total + 2 * ($(echo $pp_modes | wc -w) + 1))) ;;
esac
total=$((runs * total))
echo "bench: $runs rounds of $((total / runs)) runs of ${secs}s; modes: $modes; rows: $rows${wire:+; wire modes: $wire_modes}${counting:+; counting instructions}"

# rotate N WORD...: the words, the first N mod their number moved last.
rotate() {
	local n=$1
	shift
	[ $# -gt 0 ] || return 0
	n=$((n % $#))
	echo "${@:n+1}" "${@:1:n}"
}

all_modes=$modes all_pp_modes=$pp_modes all_xdp_modes=$xdp_modes
all_cap_modes=$cap_modes all_gro_modes=$gro_modes all_wire_modes=$wire_modes
all_wakeup_modes=$wakeup_modes
for round in $(seq "$runs"); do
	echo "bench: round $round of $runs"
	modes=$(rotate $((round - 1)) $all_modes)
	pp_modes=$(rotate $((round - 1)) $all_pp_modes)
	xdp_modes=$(rotate $((round - 1)) $all_xdp_modes)
	cap_modes=$(rotate $((round - 1)) $all_cap_modes)
	gro_modes=$(rotate $((round - 1)) $all_gro_modes)
	wire_modes=$(rotate $((round - 1)) $all_wire_modes)
	wakeup_modes=$(rotate $((round - 1)) $all_wakeup_modes)
	for bench in $rows; do
		[ "$bench" = pingpong ] && continue
		if [ "$bench" = gro ]; then
			gro_row
			continue
		fi
		if [ "$bench" = wakeup ]; then
			wakeup_row
			continue
		fi
		if [ "$bench" = xdp ]; then
			for mode in $xdp_modes; do
				xdp_one "$mode"
			done
			continue
		fi
		for size in $sizes; do
			case $bench in
			wire-*)
				for mode in $wire_modes; do
					wire_one "${bench#wire-}" "$mode" "$size"
				done
				continue ;;
			esac
			if [ "$bench" = capture ]; then
				for mode in $cap_modes; do
					capture_one "$mode" "$size"
				done
				continue
			fi
			rx_modes=$modes
			[ "$bench" = rxdrop ] &&
				rx_modes=$(rotate $((round - 1)) $all_modes pktgen)
			for mode in $rx_modes; do
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
