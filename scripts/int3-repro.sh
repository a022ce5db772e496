#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# int3-repro.sh [KIND...]: is the "stale int3" guest panic ours or the
# emulator's? Boots each kernel kind (default: "base debug") under TCG with
# two vCPUs and runs xdp-flap (scripts/xdp-flap.c) on a veth pair for
# INT3_SECS seconds (default 300): CPU 1 attaches and detaches an XDP
# program in a loop, which rewrites the XDP dispatcher's code each time,
# while CPU 0 runs that dispatcher for every frame a packet socket sends
# into the peer. Nothing of AF_PACKET V4 runs.
#
# KIND base is the base (Linux 7.3.4) without the series (tag tp4-base, a worktree
# in build/base-linux) with the debug kernel's configuration; built here
# when missing. KIND debug and bench are the series' kernels (make kernel).
# Output in build/int3/<kind>/: console.log (the kernel's console, which
# keeps a panic), dmesg.txt, flap.txt. Prints one line per kernel: the
# attaches done and whether the console has "int3" in an Oops.
# VM_TCG_THREAD=single (vm.sh) runs both vCPUs in one TCG thread: then
# the loop runs its whole time without the panic (seen: 2287 attaches in
# 240 s on the base kernel), where a thread per vCPU panics within a
# minute.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=${INT3_SECS:-300}
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(base debug)
top=$BUILD/int3
mkdir -p "$top"
gcc -O2 -Wall -o "$top/xdp-flap" "$TOP/scripts/xdp-flap.c" || die "int3: xdp-flap does not build"

build_base() {
	local tree=$BUILD/base-linux
	[ -d "$tree" ] || git -C "$TREE" worktree add --detach "$tree" "$BASE_TAG" >/dev/null ||
		die "int3: no base worktree"
	TP4_TREE=$tree OBJ=$BUILD/obj-base "$TOP/scripts/kconfig.sh" debug
	say "int3: building the base kernel (log: $BUILD/kernel-base.log)"
	TREE=$tree kmake base bzImage >"$BUILD/kernel-base.log" 2>&1 ||
		die "int3: the base kernel does not build"
}

for kind in "${kinds[@]}"; do
	[ "$kind" != base ] || [ -f "$BUILD/obj-base/arch/x86/boot/bzImage" ] || build_base
	out=$top/$kind
	cmd="ip link add tp4a type veth peer name tp4b && ip link set tp4a up &&"
	cmd+=" ip link set tp4b up && $top/xdp-flap tp4a tp4b $secs >$out/flap.txt 2>&1"
	# The console, not dmesg.txt: a panic stops the guest before its
	# kernel log reaches the file.
	KIND=$kind VM_OUT=$out VM_VERBOSE=1 VM_TIMEOUT=$((secs + 600)) \
		"$TOP/scripts/vm.sh" "$cmd" >"$top/$kind.console.log" 2>&1
	rc=$?
	mv "$top/$kind.console.log" "$out/console.log"
	oops=$(grep -m1 -E "Oops: int3|int3: 0000" "$out/console.log")
	echo "int3: $kind: rc $rc, $(cat "$out/flap.txt" 2>/dev/null | tail -1)," \
		"${oops:+stale int3: $oops}${oops:-no int3}"
done
