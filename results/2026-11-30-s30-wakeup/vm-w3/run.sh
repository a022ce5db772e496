#!/bin/bash
O=/work/main/build/vm/w3
B=/work/main/build/selftests/tpacket4
cd $B || exit 1
./tp4_wakeup > $O/wakeup.txt 2>&1
rc=$?
find_mac() { for d in /sys/class/net/*; do [ "$(cat $d/address)" = "$1" ] && basename $d; done; }
take() { d=$(find_mac $1); ip link set $d down; ip link set $d name $2; echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6; ip link set $2 up; }
take 52:54:00:74:70:00 wa; take 52:54:00:74:70:01 wb
take 52:54:00:74:70:10 ia; take 52:54:00:74:70:11 ib
ip link add hwa type veth peer name hwb
echo 1 >/proc/sys/net/ipv6/conf/hwa/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/hwb/disable_ipv6
for p in "hwa hwb" "wa wb" "ia ib"; do
  set -- $p
  echo "== $1 $2" >> $O/hw.txt
  TP4_ZC_IFNAME=$1 TP4_ZC_PEER=$2 ./tp4_zc_hw -t wakeup_tx -t wakeup_rx_drained -t drained_refill -t drained_refill_no_syscall -t tx_to_peer >> $O/hw.txt 2>&1 || rc=1
done
./tp4_zc_veth -f zcv >> $O/zcv.txt 2>&1 || rc=1
exit $rc
