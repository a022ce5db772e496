#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-perf-rx.sh: where CPU 0's time goes during rxdrop (run in the bench
# VM: make vm KIND=bench CMD="scripts/guest-perf-rx.sh"). pktgen floods
# tp4b -> tp4a from CPU 0, which also runs the whole receive path up to the
# socket's ring; tpbench reads on CPU 1; perf samples CPU 0 (cpu-clock: no
# PMU under TCG, whose timer interrupts land at translation-block ends, so
# shares lean toward long loops such as pktgen's). Per mode and size: the
# tpbench result and the top of the profile.
#   MODES="3 4" SIZES="64 1500" TOP=30 EXTRA="-b 64" (tpbench options)
#   POLL=1: the rxdrop-poll row's reader (--poll; V4 with --lowat 64)
bin=${BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/obj-bench/samples/tpacket4}
pg=/proc/net/pktgen
modprobe pktgen 2>/dev/null
ip link add tp4a type veth peer name tp4b
for d in tp4a tp4b; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; ip link set $d up; done
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
for size in ${SIZES:-64}; do
for v in ${MODES:-3 4}; do
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device tp4b" >$pg/kpktgend_0
	echo "count 0" >$pg/tp4b; echo "pkt_size $size" >$pg/tp4b; echo "delay 0" >$pg/tp4b
	echo "dst_mac 02:00:00:00:00:99" >$pg/tp4b
	echo start >$pg/pgctrl & pk=$!
	sleep 0.5
	poll=
	[ -n "${POLL:-}" ] && poll=--poll
	[ -n "$poll" ] && [ "$v" = 4 ] && poll="$poll --lowat ${LOWAT:-$(( (131072 - 48) / ((82 + size + 15) / 16 * 16) ))}"
	$bin/tpbench -v $v --rxdrop -i tp4a -s $size -d 7 -c 1 -q $poll $EXTRA > /tmp/r$v.json &
	tp=$!
	sleep 1.5
	perf record -q -e cpu-clock -F 2000 -C 0 ${CALLG} -o /tmp/p$v.data -- sleep 4 2>&1 | tail -2
	wait $tp
	echo stop >$pg/pgctrl; wait $pk
	echo "=== v$v $size B: $(tail -1 /tmp/r$v.json | cut -c1-40) $(grep -o '"pps":[0-9.]*,"drops":[0-9]*' /tmp/r$v.json) $(grep -o '"sleeps":[0-9]*' /tmp/r$v.json)"
	perf report -i /tmp/p$v.data --stdio --no-children --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -${TOP:-45}
done
done
ip link del tp4a
