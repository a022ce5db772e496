#!/bin/sh
cd "$(dirname "$0")"
uname -r
for t in tp4_uapi tp4_version tp4_memreg tp4_ring tp4_once tp4_rx tp4_tx tp4_hostile tp4_stack tp4_zc tp4_zc_veth tp4_zc_xdp; do
	timeout 400 ./$t > /tmp/$t.out 2>&1; rc=$?
	echo "RESULT $t rc=$rc $(grep -c '^ok ' /tmp/$t.out) ok $(grep -c '^not ok ' /tmp/$t.out) not-ok"
	grep '^not ok ' /tmp/$t.out | head -5
done
dmesg | grep -E "WARNING:|BUG|Oops|RIP:" | head -5
