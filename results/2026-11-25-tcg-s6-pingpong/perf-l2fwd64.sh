#!/bin/bash
# Where the time goes in the l2fwd-64 ping-pong: V2 and V4+ZC, both CPUs.
bin=/work/main/build/obj-bench/samples/tpacket4
ip link add tp4a type veth peer name tp4b
for d in tp4a tp4b; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; ip link set $d up; done
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
for v in "2" "4 -z 0"; do
	$bin/tpbench -v $v -i tp4a --pingpong 64 --peer tp4b -c 0 -C 1 -d 7 -q > /tmp/r.json &
	tp=$!
	sleep 1.5
	perf record -q -e cpu-clock -F 2000 -a -o /tmp/p.data -- sleep 4 2>&1 | tail -2
	wait $tp
	echo "=== v$v: $(grep -o '"pps":[0-9.]*' /tmp/r.json)"
	perf report -i /tmp/p.data --stdio --no-children --sort comm,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
done
ip link del tp4a
