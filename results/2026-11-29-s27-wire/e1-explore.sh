#!/bin/bash
# Exploration of the wire (session 27), run in the guest.
X=/work/main/build/xsk/xskbench
pg=/proc/net/pktgen
set -x
uname -r
ip -br link
for d in /sys/class/net/*; do
	n=$(basename $d)
	echo "$n $(cat $d/address) drv=$(basename $(readlink $d/device/driver 2>/dev/null) 2>/dev/null) feat=$(cat $d/device/features 2>/dev/null)"
done
find_mac() { grep -l "^$1\$" /sys/class/net/*/address | head -1 | xargs -r dirname | xargs -r basename; }
ren() { local n; n=$(find_mac $1); [ -n "$n" ] && ip link set "$n" name $2; echo 1 >/proc/sys/net/ipv6/conf/$2/disable_ipv6; ip link set $2 up; }
ren 52:54:00:74:70:00 wa; ren 52:54:00:74:70:01 wb
ren 52:54:00:74:70:10 ia; ren 52:54:00:74:70:11 ib
ren 52:54:00:74:70:20 big
ip -d link show ia; ip -d link show big
ethtool -l ia; ethtool -g ia; ethtool -k ia | head -30; ethtool -S ia | head -60
sleep 1
st() { for d in "$@"; do echo "$d rx=$(cat /sys/class/net/$d/statistics/rx_packets) tx=$(cat /sys/class/net/$d/statistics/tx_packets) rxd=$(cat /sys/class/net/$d/statistics/rx_dropped)"; done; }
pgsend() { # dev dstmac count size
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device $1" >$pg/kpktgend_0
	echo "count $3" >$pg/$1; echo "pkt_size ${4:-64}" >$pg/$1; echo "delay 0" >$pg/$1
	echo "dst_mac $2" >$pg/$1
	echo start >$pg/pgctrl
	grep -E 'Result|pkts-sofar' $pg/$1
}
st wa wb ia ib
pgsend wa 52:54:00:74:70:01 10000
sleep 1; st wa wb
pgsend ia 52:54:00:74:70:11 10000
sleep 1; st ia ib
# A ZC socket on ib
$X rxdrop -i ib -m drv -Z -d 3 & xp=$!
sleep 1.5
pgsend ia 52:54:00:74:70:11 20000
wait $xp; echo xsk rc=$?
st ia ib
ethtool -S ib | grep -v ': 0$'
# ZC on the plain pair (no DMA API)
$X rxdrop -i wb -m drv -Z -d 1; echo plain zc rc=$?
# XDP_TX echo under AF_XDP ZC on ib: ia promisc counts what comes back
ip link set ia promisc on
$X attach -i ib -m drv -M /sys/fs/bpf/e1 -X; echo attach rc=$?
# control: XDP_TX without a ZC socket
st ia ib
pgsend ia 52:54:00:74:70:11 5000
sleep 1; st ia ib
ethtool -S ib | grep -v ': 0$'
$X rxdrop -i ib -m drv -Z -M /sys/fs/bpf/e1 -d 4 & xp=$!
sleep 1.5
pgsend ia 52:54:00:74:70:11 5000
wait $xp; echo xsk rc=$?
sleep 1; st ia ib
ethtool -S ib | grep -v ': 0$'
$X detach -i ib -m drv -M /sys/fs/bpf/e1
# the big NIC: AF_XDP ZC refusal
$X rxdrop -i big -m drv -Z -d 1; echo big zc rc=$?
# tpbench V4 ZC on virtio today (no ndo): expect EOPNOTSUPP
TB=/work/main/build/selftests/samples/tpbench
$TB -i ib --rxdrop -v 4 -z 0 -d 1; echo tpbench zc rc=$?
cat /proc/interrupts | grep -i virtio
dmesg | grep -iE 'virtio|swiotlb|iommu' | tail -20
