#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm.sh CMD...: boot a built kernel under virtme-ng with QEMU's TCG (no KVM
# here, see ENVIRONMENT.md), run CMD as root in the project's top directory,
# and exit with CMD's exit code. The host's root file system is the guest's
# (read-only); $VM_OUT (build/vm/<kind>) is writable and receives the guest's
# dmesg (dmesg.txt, written as it goes), the kernel's console (console.txt:
# what a panic prints, which dmesg.txt cannot keep; messages of level
# warning and above, with CMD's standard error) and CMD's exit code (rc).
#
# KIND=debug|bench (default debug), VM_TIMEOUT seconds (default 1800),
# VM_MEMORY (default 2G), VM_CPUS (default 2); VM_VERBOSE=1 shows the kernel
# console here too, every level but debug.
# VM_COUNT=FILE counts the instructions the guest executes into FILE with
# the tp4count plugin (bench/tp4count.c; scripts/tp4count.py reads it):
# inline counters, exact with one TCG thread for all vCPUs, which this
# then asks for; VM_COUNT_MODE=cb counts per vCPU, a thread each;
# VM_COUNT_PROFILE=1 profiles every window (the plugin's profile=1).
# VM_TCG_THREAD=single runs all vCPUs in one TCG thread without counting.
# VM_APPEND adds to the kernel's command line.
# VM_WIRE gives the guest virtio-net NICs wired back to back, each group on
# a QEMU hub of its own (a hub passes every frame to its other ports, and
# holds the sender back while the receiver has no buffer): a list of
#   plain  two NICs, MACs 52:54:00:74:70:00 and :01, QEMU's defaults (no
#          VIRTIO_F_ACCESS_PLATFORM: the guest's driver uses no DMA API)
#   iommu  two NICs, :10 and :11, iommu_platform=on (the DMA API, which
#          AF_XDP zero-copy needs; QEMU refuses it on a transitional
#          device, hence disable-legacy=on); with VM_APPEND=swiotlb=force
#          their buffers bounce, and a missing DMA sync shows as wrong bytes
#   big    one NIC, :20, mrg_rxbuf=off and host_mtu=9000: the driver's
#          big-packets-only mode
# The guest finds them by MAC (scripts/guest-wire.sh); 0x74 0x70 is "tp".
#
# Two bounds, so that a hung guest neither hangs the caller nor goes
# without a word:
#  - in the guest, guest-run.sh stops CMD VM_GUEST_MARGIN seconds (default
#    60) before VM_TIMEOUT, counted from the guest's boot: it first writes
#    the stacks of the blocked and of all tasks into the kernel log
#    (dmesg.txt) and names the tests still running; the guest then powers
#    off and vm.sh exits 124. VM_GUEST_TIMEOUT=0 turns it off.
#  - on the host, at VM_TIMEOUT, vm.sh kills every process of the session
#    it started vng in (vng, virtme-run, QEMU and their helpers): nothing
#    is left running, and it exits 124 with the timeout's message.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KIND=${KIND:-debug}
image=$BUILD/obj-$KIND/arch/x86/boot/bzImage
[ -f "$image" ] || die "vm: no kernel at $image (make kernel KIND=$KIND)"
[ $# -gt 0 ] || die "vm: no command"
command -v vng >/dev/null || die "vm: virtme-ng is missing (make deps)"

limit=${VM_TIMEOUT:-1800}
out=${VM_OUT:-$BUILD/vm/$KIND}
rm -rf "$out"; mkdir -p "$out"
printf '%s\n' "$*" >"$out/cmd"
# What guest-run.sh needs for its own, earlier bound.
if [ "${VM_GUEST_TIMEOUT:-1}" != 0 ]; then
	echo "$limit ${VM_GUEST_MARGIN:-60}" >"$out/limit"
fi

qemu_opts=()
if [ "${VM_TCG_THREAD:-}" = single ]; then
	qemu_opts=("--qemu-opts=-accel tcg,thread=single")
fi
if [ -n "${VM_COUNT:-}" ]; then
	plugin=$("$TOP/scripts/tp4count-build.sh")
	prof=
	[ "${VM_COUNT_PROFILE:-0}" = 1 ] && prof=,profile=1
	case ${VM_COUNT_MODE:-inline} in
	inline) qemu_opts=("--qemu-opts=-accel tcg,thread=single -plugin $plugin,out=$VM_COUNT$prof") ;;
	cb) qemu_opts=("--qemu-opts=-plugin $plugin,out=$VM_COUNT,mode=cb$prof") ;;
	*) die "vm: VM_COUNT_MODE is inline or cb" ;;
	esac
fi

# wire_nic HUB ID MAC PROPS: one virtio-net NIC on a QEMU hub.
wire=
wire_nic() {
	wire+=" -netdev hubport,id=$2,hubid=$1 -device virtio-net-pci,netdev=$2,mac=$3$4"
}
for g in ${VM_WIRE:-}; do
	case $g in
	plain)
		wire_nic 1 tp4w0 52:54:00:74:70:00 ""
		wire_nic 1 tp4w1 52:54:00:74:70:01 "" ;;
	iommu)
		wire_nic 2 tp4i0 52:54:00:74:70:10 ,disable-legacy=on,iommu_platform=on
		wire_nic 2 tp4i1 52:54:00:74:70:11 ,disable-legacy=on,iommu_platform=on ;;
	big)
		wire_nic 3 tp4b0 52:54:00:74:70:20 ,mrg_rxbuf=off,host_mtu=9000 ;;
	*) die "vm: VM_WIRE groups are plain, iommu and big (not $g)" ;;
	esac
done
# vng joins its --qemu-opts with spaces and splits them again: no quoting,
# none needed.
[ -n "$wire" ] && qemu_opts+=("--qemu-opts=${wire# }")

say "vm: booting $image (TCG, ${VM_CPUS:-2} CPUs, ${VM_MEMORY:-2G}), timeout ${limit}s${VM_WIRE:+, wire: $VM_WIRE}${VM_COUNT:+, counting instructions (${VM_COUNT_MODE:-inline})}"
start=$(date +%s)

# vng runs in a session of its own: QEMU and the helpers vng starts stay in
# it (none of them starts a session of its own), even once vng is gone.
# Its output goes through a FIFO to cat: vng reopens its standard output,
# which truncates a file that the caller redirected it to.
# The console (vng --verbose) goes to vng's standard error, with CMD's own:
# a pipe (a FIFO), as QEMU opens it more than once. All of it is kept in
# console.txt; shown here are the lines that are not the kernel's (those
# stamped "[ seconds]") and the kernel's that start a splat, unless
# VM_VERBOSE=1 (all). Without VM_VERBOSE the console has levels 0-4 (a
# panic or an oops raises it to all).
fifo=$(mktemp -u "${TMPDIR:-/tmp}/tp4-vm.XXXXXX")
efifo=$fifo.err
mkfifo "$fifo" "$efifo"
append=loglevel=5
[ -n "${VM_VERBOSE:-}" ] && append=
# no5lvl: four-level paging for the KASAN kernels. TCG's CPU has LA57, and
# the boot CPU's identify_cpu() clears its feature bits before it reads
# them again: an interrupt in that window finds pgtable_l5_enabled()
# false, so KASAN takes a five-level direct-map address for one with no
# shadow and reports "wild-memory-access" (seen twice, in
# do_raw_spin_lock() from handle_edge_irq() interrupting cpu_detect(),
# before any test ran: results/2026-11-29-s29-ci/). The bench kernel has
# no KASAN and keeps the paging its counts were taken with.
[ "$KIND" = bench ] || append="${append:+$append }no5lvl"
append="$append${VM_APPEND:+ $VM_APPEND}"
set +e
setsid -w vng --disable-kvm --run "$image" \
	--memory "${VM_MEMORY:-2G}" --cpus "${VM_CPUS:-2}" \
	--rwdir "$out" --cwd "$TOP" --verbose "${qemu_opts[@]}" \
	${append:+--append "$append"} \
	--exec "$TOP/scripts/guest-run.sh $out" </dev/null >"$fifo" 2>"$efifo" &
vpid=$!
cat "$fifo" &
catpid=$!
# tee -p: console.txt keeps all of it even if what shows it goes away;
# grep -a: a NUL or a byte that is not UTF-8 would end grep's output.
if [ -n "${VM_VERBOSE:-}" ]; then
	tee -p "$out/console.txt" <"$efifo" >&2 &
else
	tee -p "$out/console.txt" <"$efifo" |
		LC_ALL=C grep -aP --line-buffered \
			'^(?!\[ *[0-9]+\.[0-9]+\] )|WARNING:|BUG|Oops|Kernel panic|RIP:' >&2 &
fi
teepid=$!
set -e

# The session vng leads: its pid, unless setsid had to fork (then it is
# setsid's child). Found while vng still runs (30 s at most: a loaded
# host may be slow to exec it); without it, only vng itself is stopped.
sid=
for _ in $(seq 300); do
	for p in $vpid $(pgrep -P "$vpid" 2>/dev/null || true); do
		s=$(ps -o sid= -p "$p" 2>/dev/null | tr -d ' ')
		[ "$s" = "$p" ] && { sid=$s; break 2; }
	done
	kill -0 "$vpid" 2>/dev/null || break
	sleep 0.1
done

# session_procs: every process still in vng's session.
session_procs() {
	if [ -z "$sid" ]; then
		kill -0 "$vpid" 2>/dev/null && echo "$vpid"
		return 0
	fi
	ps -eo pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }'
}

# stop_session: TERM, then KILL what is left after 10 s; waits until the
# session is empty (a process in it holds the FIFO, so cat would wait).
stop_session() {
	local procs i
	procs=$(session_procs)
	[ -n "$procs" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $procs 2>/dev/null || true
	for i in $(seq 100); do
		[ -n "$(session_procs)" ] || return 0
		sleep 0.1
	done
	procs=$(session_procs)
	# shellcheck disable=SC2086
	[ -z "$procs" ] || kill -KILL $procs 2>/dev/null || true
	for i in $(seq 50); do
		[ -n "$(session_procs)" ] || return 0
		sleep 0.1
	done
	warn "vm: processes of the guest's session survive SIGKILL: $(session_procs | tr '\n' ' ')"
}

# However vm.sh ends (the caller's Ctrl-C, make's SIGTERM, an error), the
# guest goes with it.
cleanup() {
	stop_session
	rm -f "$fifo" "$efifo"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# running_now: what the command said it was running (guest-tests.sh keeps
# a running.<stream> file under OUT with the name of each test it runs).
running_now() {
	local f
	for f in $(find "$out" -name 'running.*' 2>/dev/null | sort); do
		err "vm: still running when it stopped: $(cat "$f") (${f#"$out"/})"
	done
}

timed_out=0
while kill -0 "$vpid" 2>/dev/null; do
	if [ $(( $(date +%s) - start )) -ge "$limit" ]; then
		timed_out=1
		warn "vm: ${limit}s are up: stopping the guest (vng, QEMU)"
		stop_session
		break
	fi
	sleep 1
done
set +e
wait "$vpid"
vrc=$?
set -e
# QEMU gone before vng, or a helper left behind: none survives vm.sh.
stop_session
wait "$catpid" "$teepid" 2>/dev/null || true
say "vm: guest ran $(( $(date +%s) - start ))s, dmesg in $out/dmesg.txt"

if [ $timed_out = 1 ]; then
	err "vm: timed out after ${limit}s (VM_TIMEOUT); the guest was stopped, QEMU included"
	running_now
	exit 124
fi
if [ -f "$out/timedout" ]; then
	err "vm: the command timed out in the guest after $(cat "$out/timedout")s (its bound: ${limit}s less ${VM_GUEST_MARGIN:-60}s, from the guest's boot); the stacks of the blocked and of all tasks are in $out/dmesg.txt"
	running_now
	exit 124
fi
if [ ! -f "$out/rc" ]; then
	err "vm: the guest did not finish the command (vng exit $vrc); the end of its console ($out/console.txt):"
	tail -n 40 "$out/console.txt" 2>/dev/null | sed 's/^/  | /' >&2 || true
	running_now
	exit 1
fi
exit "$(cat "$out/rc")"
