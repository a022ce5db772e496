#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-pcap.sh [TCPDUMP [OUT]]: runs inside the test VM, as root, on the
# patched kernel. Tests the patched tcpdump and libpcap (make pcap;
# TCPDUMP defaults to build/pcap/bin/tcpdump) against the stock
# /usr/bin/tcpdump (TPACKET_V3), on a veth pair tp4p0 <-> tp4p1 in a
# network namespace of its own, with pktgen sending from tp4p1:
#   - V4 (copy mode) and stock V3 capturing the same traffic at the same
#     time give the same packets byte for byte (scripts/pcap-compare.py,
#     time stamps aside), for 60 and 1500-byte packets, a capture filter,
#     -s 96, MTU 9000 packets (several frames each), VLAN-tagged packets,
#     -c N, nanosecond time stamps; the patched tcpdump without options
#     does the same as the stock one; a few packets, with -v's timer
#     signalling every second, come within the packet buffer timeout;
#   - zero-copy (--zerocopy=0) against V3 on the identical traffic sent
#     again (pktgen without time stamps, its counters reset);
#   - the statistics line adds up with what was sent, drops included;
#   - SIGINT ends an idle V4 capture; -v names the version;
#   - the refusals (lo, any, -Q, zero-copy with V3, on a
#     queue veth lacks or one already taken) and the memlock message for
#     a capture without CAP_IPC_LOCK;
#   - the stock tools are untouched.
# Prints TAP, also written to OUT/pcap.tap (with each test's files in OUT)
# when OUT is given, so that results.py counts them. Exits 0 if all pass.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
TD=$(realpath "${1:-$TOP/build/pcap/bin/tcpdump}")
OUT=${2:-}
STOCK=/usr/bin/tcpdump
CMP="python3 $TOP/scripts/pcap-compare.py"

# A network namespace of our own, so that nothing else crosses the pair.
if [ -z "${GUEST_PCAP_NETNS:-}" ]; then
	GUEST_PCAP_NETNS=1 exec unshare -n "$0" "$TD" "$OUT"
fi

work=$(mktemp -d /tmp/guest-pcap.XXXXXX)
results=()
# fd 3: the log, at once (check() keeps a check's own output until it
# ends, and a run killed at its time limit would lose it).
exec 3>&2
pg=/proc/net/pktgen
A=tp4p0		# captured on
B=tp4p1		# pktgen sends from here

# ---- reporting ----

ok() { results+=("ok|$1|"); echo "ok - $1"; }
notok() { results+=("not ok|$1|$2"); echo "not ok - $1"; printf '# %s\n' "$2"; }

# diag WHY: what the pair, pktgen and every tcpdump show now, into the log
# (a bound was hit: a stuck queue or process is seen while it is stuck).
diag() {
	local t
	{
		echo "# ---- diag at ${SECONDS}s: $1"
		grep -E 'Params|count|Current|pkts-sofar|errors|Result' $pg/$B
		ip -s link show $A
		cat /proc/net/packet
		# shellcheck disable=SC2046
		python3 "$TOP/scripts/tp4-ring.py" $(pgrep -x tcpdump)
		for t in $(pgrep -x tcpdump) $(pgrep kpktgend_); do
			echo "$t $(cut -d' ' -f2,3 /proc/$t/stat 2>/dev/null):"
			cat /proc/$t/stack 2>/dev/null
		done
		echo "# ---- end of diag"
	} >&3 2>&1
}

# check NAME CMD...: a test is the status of CMD; its output is the reason
# of a failure. With GUEST_PCAP_ONLY=REGEX, only the tests whose names
# match it run.
check() {
	local name=$1 msg rc
	shift
	[[ $name =~ ${GUEST_PCAP_ONLY:-.} ]] || return 0
	echo "# ${SECONDS}s: $name" >&3
	msg=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then ok "$name"; else notok "$name" "${msg:-exit $rc}"; fi
}

finish() {
	local i=0 r v name why tap
	tap=$work/pcap.tap
	{
		echo "TAP version 13"
		echo "1..${#results[@]}"
		for r in "${results[@]}"; do
			i=$((i + 1))
			IFS='|' read -r v name why <<<"$r"
			echo "$v $i $name"
			[ -n "$why" ] && printf '%s\n' "$why" | sed 's/^/# /'
		done
	} >"$tap"
	if [ -n "$OUT" ]; then
		mkdir -p "$OUT"
		cp -r "$work"/. "$OUT"/
	fi
	echo "# guest-pcap: $(grep -c '^ok' "$tap") passed, $(grep -c '^not ok' "$tap") failed"
	! grep -q '^not ok' "$tap"
}

# ---- the pair and pktgen ----

setup() {
	ip link set lo up
	ip link add $A type veth peer name $B || return 1
	for d in $A $B; do
		echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6
		ip link set $d up
	done
}

# rx_packets DEV: from /proc/net/dev, which is this namespace's (/sys is not).
rx_packets() { sed 's/:/ /' /proc/net/dev | awk -v d="$1" '$1 == d { print $3 }'; }

# send COUNT SIZE [pktgen commands...]: pktgen sends COUNT frames of SIZE
# bytes (its pkt_size: what a capture sees on veth) from B, without time stamps in
# them, to a MAC nobody has; waits until they are sent. The device is
# added afresh each time, so its sequence numbers and IP ids start over:
# the same call sends the same bytes. Sets $sent: the packets A received.
send() {
	local count=$1 size=$2 before c
	shift 2
	before=$(rx_packets $A)
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device $B" >$pg/kpktgend_0
	for c in "count $count" "pkt_size $size" "delay 200000" \
		 "dst_mac 02:00:00:00:00:99" "src_mac 02:00:00:00:00:01" \
		 "flag NO_TIMESTAMP" "$@"; do
		echo "$c" >$pg/$B || { echo "pktgen: $c: refused" >&2; return 1; }
	done
	# pktgen's start returns once COUNT were sent: a drop is not a send,
	# so a receive queue that is never drained again would keep it going
	# for ever. 60 s at most, then what the pair and pktgen show.
	echo start >$pg/pgctrl &
	local pgpid=$! i
	for i in $(seq 600); do
		kill -0 $pgpid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $pgpid 2>/dev/null; then
		echo "pktgen did not finish in 60 s: $(grep -E 'pkts-sofar' $pg/$B)"
		diag "pktgen did not finish in 60 s"
		echo stop >$pg/pgctrl
		reap $pgpid 10 || diag "pktgen's start did not end 10 s after stop"
		return 1
	fi
	wait $pgpid
	sent=$(( $(rx_packets $A) - before ))
}

# reap PID SECS: wait for a child to end, SECS at most; its status, or 124
# (it is left running: a bare wait on a process stuck in the kernel would
# never return).
reap() {
	local i
	for i in $(seq $(( $2 * 10 ))); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return; }
		sleep 0.1
	done
	return 124
}

# ---- tcpdump ----

# start NAME TCPDUMP ARGS...: a capture on A into $work/NAME.pcap (stderr
# in NAME.err), packet-buffered; returns once it listens. Sets $pid.
start() {
	local name=$1 bin=$2 i
	shift 2
	"$bin" -Z root -U -n -i $A -w "$work/$name.pcap" "$@" \
		>/dev/null 2>"$work/$name.err" &
	pid=$!
	for i in $(seq 300); do
		grep -q 'listening on' "$work/$name.err" && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	echo "$name did not start: $(cat "$work/$name.err")" >&2
	return 1
}

# records NAME: the whole records in NAME.pcap so far.
records() { $CMP --count "$work/$1.pcap" 2>/dev/null || echo 0; }

# await NAME N: wait (30 s at most) until NAME.pcap has N records: the
# packets still in a V3 block or below V4's wake-up mark come within the
# 1 s packet buffer timeout.
await() {
	local n
	n=$($CMP --wait "$2" 30 "$work/$1.pcap") && return 0
	diag "$1.pcap has $n records after 30 s, not $2"
	return 1
}

# stop PID: SIGINT, and the exit status (124 if it did not exit in 20 s,
# 125 if not even 10 s after SIGKILL).
stop() {
	local p=$1 r
	kill -INT "$p" 2>/dev/null
	reap "$p" 20
	r=$?
	[ $r = 124 ] || return $r
	diag "tcpdump $p did not exit 20 s after SIGINT"
	kill -KILL "$p" 2>/dev/null
	reap "$p" 10
	[ $? = 124 ] || return 124
	diag "tcpdump $p did not die 10 s after SIGKILL"
	return 125
}

# stats NAME: "captured received dropped" from NAME.err's last lines
# (with -v -w, tcpdump's "Got N" counter shares a line with the first).
stats() {
	local what n line=
	for what in 'captured' 'received by filter' 'dropped by kernel'; do
		n=$(grep -ao "[0-9]\+ packets\? $what" "$work/$1.err" | tail -1 |
		    cut -d' ' -f1)
		line="$line${line:+ }${n:-none}"
	done
	echo "$line"
}

# same V4ARGS -- V3ARGS -- COUNT SIZE PKTGEN... : the patched tcpdump with
# V4ARGS and the stock one with V3ARGS capture what pktgen sends, at the
# same time; both must have every packet, none dropped, and the same
# records. Leaves $want (the records each should have) for more checks.
# Prints why it failed.
same() {
	local v4args=() v3args=() name=$1 p4 p3 r4 r3 s4 s3
	shift
	while [ "$1" != -- ]; do v4args+=("$1"); shift; done; shift
	while [ "$1" != -- ]; do v3args+=("$1"); shift; done; shift
	start "$name-v4" "$TD" "${v4args[@]}" || return 1
	p4=$pid
	start "$name-v3" "$STOCK" "${v3args[@]}" || { stop $p4; return 1; }
	p3=$pid
	send "$@" || { stop $p4; stop $p3; return 1; }
	want=${want_override:-$sent}
	await "$name-v4" "$want"
	await "$name-v3" "$want"
	sleep 0.3
	stop $p4; r4=$?
	stop $p3; r3=$?
	[ $r4 = 0 ] || { echo "patched tcpdump exited $r4: $(cat "$work/$name-v4.err")"; return 1; }
	[ $r3 = 0 ] || { echo "stock tcpdump exited $r3: $(cat "$work/$name-v3.err")"; return 1; }
	! grep -q 'not supported by this kernel' "$work/$name-v4.err" ||
		{ echo "no TPACKET_V4: $(cat "$work/$name-v4.err")"; return 1; }
	s4=$(stats "$name-v4"); s3=$(stats "$name-v3")
	# "received by filter": what passed the (kernel) filter.
	[ "$s4" = "$want $want 0" ] ||
		{ echo "patched tcpdump: captured/received/dropped $s4, want $want $want 0 ($1 sent)"; return 1; }
	[ "$s3" = "$want $want 0" ] ||
		{ echo "stock tcpdump: captured/received/dropped $s3, want $want $want 0 ($1 sent)"; return 1; }
	[ "$sent" = "$1" ] || { echo "pktgen sent $1, $A received $sent"; return 1; }
	$CMP --records "$want" --ts-slack 3 ${cmp_args:-} \
		"$work/$name-v4.pcap" "$work/$name-v3.pcap"
}

# ---- the tests ----

if [ ! -x "$TD" ] || ! "$TD" --version 2>&1 | grep -q TPACKET_V4; then
	notok "patched tcpdump present" "$TD: missing or not the patched one (make pcap)"
	finish
	exit 1
fi
setup || { notok "veth pair" "ip link add failed"; finish; exit 1; }
modprobe pktgen 2>/dev/null
[ -d $pg ] || { notok "pktgen" "no /proc/net/pktgen"; finish; exit 1; }

check "stock tcpdump is Debian's, with the system libpcap" sh -c "
	$STOCK --version 2>&1 | grep -qx 'libpcap version 1.10.3 (with TPACKET_V3)' &&
	ldd $STOCK | grep -q 'libpcap.so.0.8 => /lib/' &&
	dpkg -V tcpdump libpcap0.8 && echo ok"

check "V4 copy mode = stock V3, 60-byte packets" same b60 --tpacket-version=4 -- -- 2000 64
check "V4 copy mode = stock V3, 1500-byte packets, nanosecond time stamps" \
	same b1500 --tpacket-version=4 --nano -- --nano -- 1000 1504
check "patched tcpdump without options = stock" same default -- -- 1000 200

# A filter that keeps half of the packets: UDP ports 9 and 10 in turn.
want_override=500
check "V4 = V3 with a capture filter (udp dst port 10)" \
	same filter --tpacket-version=4 udp dst port 10 -- udp dst port 10 -- \
	1000 200 "udp_dst_min 9" "udp_dst_max 11"
unset want_override

cmp_args="--caplen 96 --wirelen 1504" \
check "V4 = V3 with -s 96 (caplen 96, length 1504)" \
	same snap --tpacket-version=4 -s 96 -- -s 96 -- 500 1504

ip link set $A mtu 9000 && ip link set $B mtu 9000
cmp_args="--wirelen 9000" \
check "V4 = V3 with MTU 9000 packets (5 frames each)" \
	same jumbo --tpacket-version=4 -B 16384 -- -B 16384 -- 500 9000
ip link set $A mtu 1500 && ip link set $B mtu 1500

cmp_args="--vlan 5" \
check "V4 = V3 with VLAN-tagged packets (tag 5 in the data)" \
	same vlan --tpacket-version=4 -- -- 500 200 "vlan_id 5"

# -c N: the patched tcpdump stops by itself after N packets, the first N
# of those the stock one captured.
count_test() {
	local p4 p3 r4 s4
	start count-v4 "$TD" --tpacket-version=4 -c 100 || return 1
	p4=$pid
	start count-v3 "$STOCK" || { stop $p4; return 1; }
	p3=$pid
	send 300 200 || return 1
	await count-v3 300
	for _ in $(seq 100); do kill -0 $p4 2>/dev/null || break; sleep 0.1; done
	kill -0 $p4 2>/dev/null && { stop $p4; echo "-c 100 did not exit after 300 packets"; stop $p3; return 1; }
	wait $p4; r4=$?
	stop $p3
	[ $r4 = 0 ] || { echo "exit $r4: $(cat "$work/count-v4.err")"; return 1; }
	! grep -q 'not supported by this kernel' "$work/count-v4.err" ||
		{ echo "no TPACKET_V4: $(cat "$work/count-v4.err")"; return 1; }
	s4=$(stats count-v4)
	[ "${s4%% *}" = 100 ] || { echo "captured/received/dropped: $s4, want 100 captured"; return 1; }
	$CMP --prefix --records 100 "$work/count-v4.pcap" "$work/count-v3.pcap"
}
check "V4 with -c 100: exits by itself, the first 100 packets" count_test

# With -v and -w, tcpdump's "Got N" timer interrupts poll() every second:
# packets below V4's wake-up mark (SO_RCVLOWAT 64) must still come within
# the 1 s packet buffer timeout, not wait in the ring for more traffic.
timeout_test() {
	local p n
	start timeout "$TD" --tpacket-version=4 -v || return 1
	p=$pid
	send 10 200 || { stop $p; return 1; }
	n=$($CMP --wait 10 5 "$work/timeout.pcap")
	stop $p
	[ "$n" = 10 ] || { echo "$n of 10 packets captured 5 s after they were sent"; return 1; }
}
check "V4 with -v: 10 packets (below the wake-up mark) within the timeout" timeout_test

# Zero-copy takes queue pair 0 of A from the stack: compare with V3 on the
# identical traffic sent again.

# v3_again NAME WANT [FILTER...] -- COUNT SIZE [PKTGEN...]: the stock
# tcpdump (V3) with FILTER captures the traffic that the zero-copy capture
# NAME had, sent again: both must have the same WANT records.
v3_again() {
	local name=$1 want=$2 filter=() p
	shift 2
	while [ "$1" != -- ]; do filter+=("$1"); shift; done; shift
	start "$name-v3" "$STOCK" "${filter[@]}" || return 1
	p=$pid
	send "$@" || { stop $p; return 1; }
	await "$name-v3" "$want"
	sleep 0.3
	stop $p
	$CMP --records "$want" "$work/$name.pcap" "$work/$name-v3.pcap"
}

zc_test() {
	local p r s
	start zc "$TD" --zerocopy=0 -v || return 1
	p=$pid
	grep -q 'TPACKET_V4, zero-copy on queue 0' "$work/zc.err" ||
		{ stop $p; echo "-v does not say zero-copy: $(cat "$work/zc.err")"; return 1; }
	send 1000 200 || { stop $p; return 1; }
	await zc 1000
	sleep 0.3
	stop $p; r=$?
	[ $r = 0 ] || { echo "exit $r: $(cat "$work/zc.err")"; return 1; }
	s=$(stats zc)
	[ "$s" = "1000 1000 0" ] || { echo "zero-copy captured/received/dropped: $s, want 1000 1000 0"; return 1; }
	v3_again zc 1000 -- 1000 200
}
check "zero-copy capture = V3 capture of the same traffic sent again" zc_test

zc_filter_test() {
	local p
	start zcf "$TD" --zerocopy=0 udp dst port 10 || return 1
	p=$pid
	send 400 200 "udp_dst_min 9" "udp_dst_max 11" || { stop $p; return 1; }
	await zcf 200
	sleep 1.5
	stop $p || { echo "exit $?: $(cat "$work/zcf.err")"; return 1; }
	v3_again zcf 200 udp dst port 10 -- 400 200 "udp_dst_min 9" "udp_dst_max 11"
}
check "zero-copy with a filter (run in userland) = V3" zc_filter_test

# Drops: a stopped capture with a ring of 256 frames (-B 512) gets the
# first 256 of 1000 packets; the statistics line says 1000 received, 744
# dropped.
drops_test() {
	local p s
	start drops "$TD" --tpacket-version=4 -B 512 || return 1
	p=$pid
	kill -STOP $p
	send 1000 64 || { kill -CONT $p; stop $p; return 1; }
	kill -CONT $p
	await drops 256
	sleep 1.5
	stop $p || { echo "exit $?: $(cat "$work/drops.err")"; return 1; }
	s=$(stats drops)
	[ "$s" = "256 1000 744" ] ||
		{ echo "captured/received/dropped: $s, want 256 1000 744 ($sent sent)"; return 1; }
	[ "$sent" = 1000 ] || { echo "$A received $sent of 1000"; return 1; }
	echo ok
}
check "V4 statistics: captured + dropped = received = sent (full ring)" drops_test

sigint_test() {
	local p t0 r
	start idle "$TD" --tpacket-version=4 -v || return 1
	p=$pid
	grep -q 'snapshot length 262144 bytes, TPACKET_V4$' "$work/idle.err" ||
		{ stop $p; echo "-v does not say TPACKET_V4: $(cat "$work/idle.err")"; return 1; }
	t0=$(date +%s)
	stop $p; r=$?
	[ $r = 0 ] || { echo "exit $r"; return 1; }
	[ $(( $(date +%s) - t0 )) -le 3 ] || { echo "took $(( $(date +%s) - t0 )) s to exit"; return 1; }
	[ "$(stats idle)" = "0 0 0" ] || { echo "statistics $(stats idle)"; return 1; }
	echo ok
}
check "SIGINT ends an idle V4 capture at once, -v says TPACKET_V4" sigint_test

# refused NAME WANT ARGS...: the patched tcpdump exits 1 saying WANT.
refused() {
	local want=$1 err rc
	shift
	err=$(timeout 20 "$TD" -Z root -w /dev/null "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc = 1 ] || { echo "exit $rc, want 1: $err"; return 1; }
	[ "$err" = "$want" ] || { echo "said: $err"; echo "want: $want"; return 1; }
}
check "V4 refused on lo" refused \
	"tcpdump: TPACKET_V4 capture isn't supported on the loopback device lo" \
	-i lo --tpacket-version=4
check "V4 refused on any" refused \
	"tcpdump: TPACKET_V4 capture isn't supported on the \"any\" device" \
	-i any --tpacket-version=4
check "V4 refused with -Q in" refused \
	"tcpdump: $A: pcap_setdirection() failed: Capturing only incoming or only outgoing packets isn't supported with TPACKET_V4" \
	-i $A --tpacket-version=4 -Q in
check "zero-copy refused on a queue veth lacks" refused \
	"tcpdump: $A has no queue 7 for zero-copy capture" -i $A --zerocopy=7
check "zero-copy refused with TPACKET_V3" refused \
	"tcpdump: Zero-copy capture needs TPACKET_V4, not TPACKET_V3" \
	-i $A --zerocopy=0 --tpacket-version=3

busy_test() {
	local p r
	start busy "$TD" --zerocopy=0 || return 1
	p=$pid
	refused "tcpdump: Queue 0 of $A is already in zero-copy use" -i $A --zerocopy=0
	r=$?
	stop $p
	return $r
}
check "zero-copy refused on a queue already taken" busy_test

# Without CAP_IPC_LOCK, RLIMIT_MEMLOCK applies: over it even at 256
# frames (512 KiB), an error that says so; between, a smaller buffer and a
# warning.
check "memlock: the error for a capture without CAP_IPC_LOCK" sh -c "
	err=\$(timeout 30 capsh --drop=cap_ipc_lock --delamb=cap_ipc_lock -- -c 'ulimit -l 256 && exec \"\$0\" \"\$@\"' \
		$TD -Z root -i $A --tpacket-version=4 -w /dev/null 2>&1 >/dev/null)
	rc=\$?
	want=\"tcpdump: can't lock the TPACKET_V4 packet buffer in memory: its smallest size, 512 KiB, is over the locked-memory limit (256 KiB); raise the limit (ulimit -l) or capture with CAP_IPC_LOCK\"
	[ \$rc = 1 ] && [ \"\$err\" = \"\$want\" ] || { echo \"exit \$rc: \$err\"; exit 1; }"
check "memlock: a smaller buffer and a warning under the limit" sh -c "
	err=\$(timeout 30 capsh --drop=cap_ipc_lock --delamb=cap_ipc_lock -- -c 'ulimit -l 1536 && exec timeout -s INT 3 \"\$0\" \"\$@\"' \
		$TD -Z root -i $A --tpacket-version=4 -B 4096 -w /dev/null 2>&1 >/dev/null)
	echo \"\$err\" | grep -qx \"tcpdump: WARNING: The TPACKET_V4 packet buffer is 1024 KiB rather than 4096 KiB, because of the locked-memory limit (ulimit -l)\" ||
		{ echo \"\$err\"; exit 1; }"

stock_test() {
	local p i
	start stock "$STOCK" -c 5 || return 1
	p=$pid
	send 5 100 || { stop $p; return 1; }
	for i in $(seq 100); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
	kill -0 $p 2>/dev/null && { stop $p; echo "-c 5 did not exit"; return 1; }
	wait $p || { echo "exit $?: $(cat "$work/stock.err")"; return 1; }
	[ "$(records stock)" = 5 ] || { echo "$(records stock) records"; return 1; }
	echo ok
}
check "stock tcpdump still captures by itself (V3, -c 5)" stock_test

finish
