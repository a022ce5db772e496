#!/bin/bash
bin=/work/main/build/obj-bench/samples/tpacket4
pg=/proc/net/pktgen
modprobe pktgen 2>/dev/null
ip link add tp4a type veth peer name tp4b
for d in tp4a tp4b; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; ip link set $d up; done
for r in 1 2 3 4 5 6; do
for size in 1500 64; do
lw=$(( (131072 - 48) / ((82 + size + 15) / 16 * 16) ))
for m in "3 4" "4 4"; do
	set -- $m
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device tp4b" >$pg/kpktgend_0
	echo "count 0" >$pg/tp4b; echo "pkt_size $size" >$pg/tp4b; echo "delay 0" >$pg/tp4b
	echo "dst_mac 02:00:00:00:00:99" >$pg/tp4b
	echo start >$pg/pgctrl & pk=$!
	sleep 0.3
	x=; [ $1 = 4 ] && x="--lowat $lw"
	if [ $2 = 0 ]; then x=; else x="$x --poll -T $2"; fi
	$bin/tpbench -v $1 --rxdrop -i tp4a -s $size -d 4 -c 1 -q $x > /tmp/r.json
	echo stop >$pg/pgctrl; wait $pk
	echo "R$r v$1 T$2 $size $(grep -o '"pps":[0-9.]*,"drops":[0-9]*' /tmp/r.json) $(grep -o "\"sleeps\":[0-9]*,\"cpu\":[0-9.]*" /tmp/r.json)"
done; done; done
ip link del tp4a
