#!/bin/bash
# under a DMA_API_DEBUG kernel: the wire's checks, tp4_zc_hw twice, the
# XDP_TX rebind stress, then the iommu NICs unbound (leaked mappings).
bin=$1; out=$2; mkdir -p $out
top=/work/main
mount -t debugfs none /sys/kernel/debug 2>/dev/null
$top/scripts/guest-wire.sh $bin $out/wire > $out/wire.log 2>&1
grep -v '^ok' $out/wire/wire.tap
for i in 1 2; do
	( cd "$bin/tpacket4" && TP4_ZC_IFNAME=ia TP4_ZC_PEER=ib timeout 900 ./tp4_zc_hw ) > $out/hw.$i 2>&1
	echo "# hw round $i: $(grep -c '^ok' $out/hw.$i) ok"; grep '^not ok\|tp4_zc_hw.c:' $out/hw.$i
done
ROUNDS=6 $top/build/stress/xdptx.sh $bin $out/x 2>&1 | tail -3
echo "# dma-api errors before unbind: $(cat /sys/kernel/debug/dma-api/error_count)"
for dev in ia ib; do
	d=$(basename $(readlink -f /sys/class/net/$dev/device))
	echo $d > /sys/bus/virtio/drivers/virtio_net/unbind
done
sleep 1
echo "# dma-api errors after unbind: $(cat /sys/kernel/debug/dma-api/error_count)"
dmesg | grep -i "DMA-API" | head -20
