#!/bin/bash
O=/work/main/build/vm/w4
B=/work/main/build/selftests/tpacket4
cd $B || exit 1
./tp4_wakeup > $O/wakeup.txt 2>&1
rc=$?
find_mac() { for d in /sys/class/net/*; do [ "$(cat $d/address)" = "$1" ] && basename $d; done; }
take() { d=$(find_mac $1); ip link set $d down; ip link set $d name $2; echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6; ip link set $2 up; }
take 52:54:00:74:70:00 wa; take 52:54:00:74:70:01 wb
take 52:54:00:74:70:10 ia; take 52:54:00:74:70:11 ib
TP4_ZC_IFNAME=ia TP4_ZC_PEER=ib ./tp4_zc_hw -t wakeup_rx_drained >> $O/hw.txt 2>&1 || rc=1
TP4_ZC_IFNAME=wa TP4_ZC_PEER=wb ./tp4_zc_hw -t wakeup_rx_drained -t wakeup_tx >> $O/hw.txt 2>&1 || rc=1
exit $rc
