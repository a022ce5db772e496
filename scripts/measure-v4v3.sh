#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# measure-v4v3.sh RATE_BIN [SECONDS] [RUNS]: runs inside the bench VM. The
# first V4-versus-V3 measurement of the data-path issue: 64-byte RX-drop
# (pktgen floods one end of a veth pair, tpacket_rate receives on the
# other) and TX-push (tpacket_rate sends 64-byte frames), V3 and V4 in
# turn, RUNS times each, in one boot. Prints "<mode> <version> <packets>
# <seconds> <pps>" lines.
set -eu
rate=$1
secs=${2:-5}
runs=${3:-3}

ip link add tp4ra type veth peer name tp4rb
for d in tp4ra tp4rb; do
	echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6
	ip link set $d up
done

pg=/proc/net/pktgen
echo rem_device_all >$pg/kpktgend_0
echo "add_device tp4ra" >$pg/kpktgend_0
echo "count 0" >$pg/tp4ra
echo "pkt_size 64" >$pg/tp4ra
echo "delay 0" >$pg/tp4ra
# Not for this host: the stack drops it at once, the taps see it.
echo "dst_mac 02:00:00:00:00:99" >$pg/tp4ra

for run in $(seq "$runs"); do
	for v in v3 v4; do
		echo start >$pg/pgctrl &
		sleep 0.5
		taskset -c 1 "$rate" rxdrop $v tp4rb "$secs" | sed "s/\$/ run$run/"
		echo stop >$pg/pgctrl
		wait
	done
done
for run in $(seq "$runs"); do
	for v in v3 v4; do
		taskset -c 1 "$rate" txpush $v tp4ra "$secs" | sed "s/\$/ run$run/"
	done
done
ip link del tp4ra
