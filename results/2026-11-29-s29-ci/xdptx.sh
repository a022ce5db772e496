#!/bin/bash
# stress: AF_XDP ZC XDP_TX on ib unpaced (drops), with xsk rebinds under flood
bin=$1; out=$2; mkdir -p $out
xsk=$bin/bench/xskbench; pg=/proc/net/pktgen; pin=/sys/fs/bpf/stress_xsks
wire_find() { local f; for f in /sys/class/net/*/address; do [ "$(cat "$f")" = "$1" ] && { basename "$(dirname "$f")"; return 0; }; done; return 1; }
wire_take() { local dev; dev=$(wire_find "$1") || return 1; ip link set "$dev" down; [ "$dev" = "$2" ] || ip link set "$dev" name "$2"; echo 1 >"/proc/sys/net/ipv6/conf/$2/disable_ipv6"; ip link set "$2" up; }
ethstat() { ethtool -S "$1" | awk -v k="$2:" '$1 == k { print $2 }'; }
modprobe pktgen
[ -e /sys/class/net/ia ] || { wire_take 52:54:00:74:70:10 ia; wire_take 52:54:00:74:70:11 ib; }
ip link set ia promisc on
echo "# ib queues: $(ls /sys/class/net/ib/queues)"
$xsk attach -i ib -m drv -M $pin -X || echo "attach failed"
mac=$(cat /sys/class/net/ib/address)
echo rem_device_all >$pg/kpktgend_0
echo "add_device ia" >$pg/kpktgend_0
echo "count 0" >$pg/ia; echo "pkt_size 64" >$pg/ia; echo "delay 0" >$pg/ia; echo "dst_mac $mac" >$pg/ia
echo start >$pg/pgctrl &
fpid=$!
for i in $(seq ${ROUNDS:-30}); do
	$xsk rxdrop -i ib -m drv -Z -d 1 -c 1 -M $pin > $out/x.$i 2>&1
	echo "# round $i rc=$? drops=$(ethstat ib tx_xdp_tx_drops) xdp_tx=$(ethstat ib rx_xdp_tx) ia_rx=$(cat /sys/class/net/ia/statistics/rx_packets)"
done
echo stop >$pg/pgctrl; wait $fpid
$xsk detach -i ib -m drv -M $pin
ip link set ia promisc off
echo "# done"
dmesg | grep -c "BUG\|WARNING" 
