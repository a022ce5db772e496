#!/bin/bash
bin=${BIN:-/work/main/build/obj-bench/samples/tpacket4}
pg=/proc/net/pktgen
modprobe pktgen 2>/dev/null
ip link add tp4a type veth peer name tp4b
for d in tp4a tp4b; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; ip link set $d up; done
run() { # size label args...
	local size=$1 label=$2; shift 2
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device tp4b" >$pg/kpktgend_0
	echo "count 0" >$pg/tp4b; echo "pkt_size $size" >$pg/tp4b; echo "delay 0" >$pg/tp4b
	echo "dst_mac 02:00:00:00:00:99" >$pg/tp4b
	echo start >$pg/pgctrl & pk=$!
	sleep 0.3
	$bin/tpbench --rxdrop -i tp4a -s $size -d ${SECS:-4} -c 1 -q "$@" > /tmp/r.json
	echo stop >$pg/pgctrl; wait $pk
	echo "$size $label $(grep -o '"pps":[0-9]*' /tmp/r.json | cut -d: -f2) $(grep -o '"drops":[0-9]*' /tmp/r.json) $(grep -o '"sleeps":[0-9]*' /tmp/r.json)"
}
for round in $(seq ${ROUNDS:-3}); do
for size in ${SIZES:-64 1500}; do
	run $size v3poll -v 3 --poll
	run $size v4poll64 -v 4 --poll --lowat 64
	run $size v4poll256 -v 4 --poll --lowat 256 -b 256
	run $size v4poll1024 -v 4 --poll --lowat 1024 -b 256
	run $size v3spin -v 3
	run $size v4spin -v 4
done
done
ip link del tp4a
