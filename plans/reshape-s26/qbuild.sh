#!/bin/bash
# qbuild.sh FROM TO: compile the touched areas of prefixes rs-FROM..rs-TO in /work/wt-rs, obj /work/obj-rs
set -uo pipefail
WT=/work/wt-rs; O=/work/obj-rs
mkdir -p $O; [ -f $O/.config ] || cp /work/main/build/obj-modular/.config $O/.config
export CCACHE_DIR=${CCACHE_DIR:-/root/.cache/ccache}
cd $WT
for n in $(seq -w $1 $2); do
	git checkout -q -f --detach rs-$n || exit 1
	echo "=== $n $(git log -1 --format=%s)"
	cp /work/main/build/obj-modular/.config $O/.config; nice -n 19 make -s -j2 O=$O CC="ccache gcc" olddefconfig >/dev/null 2>&1
	t=$(date +%s)
	if ! nice -n 19 make -s -j2 O=$O CC="ccache gcc" KBUILD_MODPOST_WARN= net/packet/ net/core/ net/xdp/ net/ethtool/ net/bpf/ drivers/net/veth.o drivers/net/ethernet/intel/i40e/ > /work/reshape/qb-$n.log 2>&1; then
		echo "FAIL $n"; grep -E 'error|warning' /work/reshape/qb-$n.log | head -20; exit 1
	fi
	grep -E 'warning' /work/reshape/qb-$n.log | head -5
	echo "ok $n $(( $(date +%s) - t ))s"
done
