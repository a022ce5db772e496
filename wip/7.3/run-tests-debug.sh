#!/bin/sh
cd "$(dirname "$0")"
uname -r
dmesg | grep -E "^\[ *[0-9.]+\] *(# )?(ok|not ok) [0-9]+ tp4|KTAP|# tpacket4" | tail -3
echo "KUNIT ok $(dmesg | grep -cE '    ok [0-9]+ tp4_test') not-ok $(dmesg | grep -cE 'not ok [0-9]+ tp4_test')"
dmesg | grep -E 'not ok [0-9]+ tp4_test' | head
for t in tp4_uapi tp4_version tp4_memreg tp4_ring tp4_rx tp4_tx tp4_hostile tp4_zc; do
	timeout 240 ./$t > /tmp/$t.out 2>&1; rc=$?
	echo "RESULT $t rc=$rc $(grep -c '^ok ' /tmp/$t.out) ok $(grep -c '^not ok ' /tmp/$t.out) not-ok"
	grep '^not ok ' /tmp/$t.out | head -5
done
dmesg | grep -E "WARNING:|BUG|Oops|RIP:|UBSAN|KASAN|possible circular|lockdep" | head -8
