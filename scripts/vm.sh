#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm.sh CMD...: boot a built kernel under virtme-ng with QEMU's TCG (no KVM
# here, see ENVIRONMENT.md), run CMD as root in the project's top directory,
# and exit with CMD's exit code. The host's root file system is the guest's
# (read-only); $VM_OUT (build/vm/<kind>) is writable and receives the guest's
# dmesg (dmesg.txt, written as it goes) and CMD's exit code (rc).
#
# KIND=debug|bench (default debug), VM_TIMEOUT seconds (default 1800),
# VM_MEMORY (default 2G), VM_CPUS (default 2); VM_VERBOSE=1 shows the kernel
# console too (what a panic prints, which dmesg.txt cannot keep).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KIND=${KIND:-debug}
image=$BUILD/obj-$KIND/arch/x86/boot/bzImage
[ -f "$image" ] || die "vm: no kernel at $image (make kernel KIND=$KIND)"
[ $# -gt 0 ] || die "vm: no command"
command -v vng >/dev/null || die "vm: virtme-ng is missing (make deps)"

out=${VM_OUT:-$BUILD/vm/$KIND}
rm -rf "$out"; mkdir -p "$out"
printf '%s\n' "$*" >"$out/cmd"

say "vm: booting $image (TCG, ${VM_CPUS:-2} CPUs, ${VM_MEMORY:-2G}), timeout ${VM_TIMEOUT:-1800}s"
start=$(date +%s)
set +e
# setsid + timeout: on a timeout the whole process group (vng and QEMU) goes.
timeout --kill-after=20 "${VM_TIMEOUT:-1800}" \
	setsid vng --disable-kvm --run "$image" \
		--memory "${VM_MEMORY:-2G}" --cpus "${VM_CPUS:-2}" \
		--rwdir "$out" --cwd "$TOP" \
		${VM_VERBOSE:+--verbose} \
		--exec "$TOP/scripts/guest-run.sh $out" </dev/null 2>&1 | cat
# Through a pipe: vng reopens its standard output, which truncates a file
# that the caller redirected it to.
vrc=${PIPESTATUS[0]}
set -e
say "vm: guest ran $(( $(date +%s) - start ))s, dmesg in $out/dmesg.txt"
if [ ! -f "$out/rc" ]; then
	[ $vrc = 124 ] && die "vm: timed out after ${VM_TIMEOUT:-1800}s"
	die "vm: the guest did not finish the command (vng exit $vrc); see $out/dmesg.txt"
fi
exit "$(cat "$out/rc")"
