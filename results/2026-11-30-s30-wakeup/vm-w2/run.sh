#!/bin/bash
O=/work/main/build/vm/w2
cd /work/main/build/selftests/tpacket4 || exit 1
./tp4_wakeup > $O/out.txt 2>&1
rc=$?
S=/work/main/build/selftests/samples
ip link add va type veth peer name vb
ip link set va up; ip link set vb up
for w in "" -W; do
  for z in "" "-z 0"; do
    $S/tpbench -i va --txpush -v 4 $z $w -d 2 -q >> $O/tp.txt 2>&1
    $S/tpbench -i va --pingpong 8 --peer vb -v 4 $z $w -d 2 -q >> $O/tp.txt 2>&1
  done
done
$S/tpbench --help | grep -i wakeup >> $O/tp.txt
$S/tp4_echo 2>> $O/tp.txt
exit $rc
