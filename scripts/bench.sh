#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh: the project's main command (make bench). From whatever state:
# deps, tree, the bench kernel (no debug options; it builds tpbench from
# samples/tpacket4 too), the AF_XDP and shared-memory references (bench/),
# the patched tcpdump (make pcap, for the capture row), then one boot that
# runs the whole matrix (scripts/guest-bench.sh) and the report:
# build/results/<timestamp>/bench.json, bench.md, bench.png.
#
# QEMU runs with the instruction counting plugin (bench/tp4count.c, built
# by scripts/tp4count-build.sh; mode=cb: a count per vCPU, a TCG thread
# each as without it): every run's window has its instructions, kernel and
# user, and the report divides them by the packets the run moved
# (count.txt; BENCH_COUNT=0: rates only, without the plugin).
# BENCH_PROFILE=1: every window also gets its kernel profile (make profile).
#
# BENCH_SECS (default 2) and BENCH_RUNS (default 5) set the length and the
# number of each run, BENCH_ROWS and BENCH_MODES a part of the matrix (see
# guest-bench.sh; BENCH_ROWS=capture: the capture row alone), BENCH_SIZES
# the packet sizes (default "64 1500");
# BENCH_CAPTURE_BUF the capture row's tcpdump -B (KiB, default 16384);
# BENCH_WIRE=0 boots without the wire (no wire rows: see guest-bench.sh);
# VM_TIMEOUT the boot's limit (default: from those).
set -euo pipefail
. "$(dirname "$0")/lib.sh"


"$TOP/scripts/deps.sh"
# The gro row's ethtool (only make bench needs it): without it, that row's
# runs fail saying so and the rest runs.
if ! command -v ethtool >/dev/null && [ "$(id -u)" = 0 ]; then
	apt-get install -y -q ethtool >/dev/null 2>&1 ||
		warn "bench: ethtool could not be installed: the gro row will fail"
fi
"$TOP/scripts/tree.sh"

KIND=bench
obj=$BUILD/obj-$KIND
build_kernel $KIND bench	# tpbench too: CONFIG_SAMPLE_TPACKET4
say "bench: kernel built ($(elapsed))"

stamp=$(date -u +%Y%m%dT%H%M%SZ)
res=$BUILD/results/$stamp
bin=$res/bin
mkdir -p "$bin"
[ -x "$obj/samples/tpacket4/tpbench" ] ||
	die "bench: no $obj/samples/tpacket4/tpbench (is CONFIG_SAMPLE_TPACKET4 in the series?)"
cp "$obj/samples/tpacket4/tpbench" "$bin/"
make -s -C "$TOP/bench" OUT="$bin" >/dev/null ||
	die "bench: the AF_XDP and shared-memory references do not build"
count=${BENCH_COUNT:-1}
[ "$count" = 0 ] && count=
vm_count=()
if [ -n "$count" ]; then
	plugin=$("$TOP/scripts/tp4count-build.sh")
	cp "$(dirname "$plugin")/tp4mark" "$bin/"
	vm_count=(VM_COUNT="$res/count.txt" VM_COUNT_MODE=cb)
	# The profile's symbols: this kernel's, kept with its counts.
	cp "$obj/System.map" "$res/System.map"
	[ "${BENCH_PROFILE:-0}" = 1 ] && vm_count+=(VM_COUNT_PROFILE=1)
fi
# The capture row's patched tcpdump. Without it, that row's V4 and V4+ZC
# runs fail (saying why) and the rest of the matrix runs.
case " ${BENCH_ROWS:-} " in
*" capture "*)
	if "$TOP/scripts/pcap.sh"; then
		cp "$BUILD/pcap/bin/tcpdump" "$bin/"
	else
		warn "bench: no patched tcpdump (make pcap failed): the capture row's V4 runs will fail"
	fi ;;
esac

secs=${BENCH_SECS:-2}
runs=${BENCH_RUNS:-5}
# At most 110 runs a round (67 on the veth pair today with V4+ZC, the XDP
# and GRO rows, the libpcap settings and pktgen alone; 36 on the wire) of
# (secs + 4) s each (the plugin slows the set-up), 8 capture runs of
# (secs + 8) s (tcpdump starts, drains its ring, stops), and the boot.
timeout=${VM_TIMEOUT:-$(( runs * (110 * (secs + 4) + 8 * (secs + 8)) + 600 ))}
say "bench: booting the $KIND kernel: $runs rounds of ${secs}s runs ($(elapsed))"
# vm.sh keeps the kernel's console in vm/console.txt (a panic never
# reaches dmesg.txt) and shows only its splats among the progress lines.
set +e
# tsc=reliable: the clocksource watchdog, which under a loaded emulator
# can find the TSC "skewed" against the HPET and switch to the HPET
# mid-run (seen 55 s into a boot), is off for the TSC. On the HPET every
# clock read is a system call and an emulated device read: the counts of
# every run after the switch change with how often its programs read the
# clock (tpbench's reader, once a turn, went from 1 to 200 million kernel
# instructions a window).
# VM_WIRE=iommu: the wire's rows (guest-bench.sh), on two virtio-net NICs
# with the DMA API, where AF_XDP zero-copy runs too (BENCH_WIRE=0: none).
wire=iommu
[ "${BENCH_WIRE:-1}" = 0 ] && wire=
env "${vm_count[@]}" VM_APPEND=tsc=reliable VM_WIRE=$wire VM_OUT=$res/vm KIND=$KIND VM_TIMEOUT=$timeout \
	"$TOP/scripts/vm.sh" "BENCH_COUNT=$count BENCH_SECS=$secs BENCH_RUNS=$runs BENCH_ROWS='${BENCH_ROWS:-}' BENCH_MODES='${BENCH_MODES:-}' BENCH_SIZES='${BENCH_SIZES:-}' BENCH_CAPTURE_BUF='${BENCH_CAPTURE_BUF:-}' $TOP/scripts/guest-bench.sh $bin $res/vm" 2>&1
vrc=$?
set -e
timed_out="the VM timed out (VM_TIMEOUT=${timeout}s; vm.sh's message above, the kernel's stacks in $res/vm/dmesg.txt)"
[ -f "$res/vm/runs.jsonl" ] || { [ $vrc = 124 ] && die "bench: $timed_out"; die "bench: the VM produced no results ($res/vm)"; }

say "bench: report ($(elapsed))"
# Debian's python3, which has python3-matplotlib (make deps).
/usr/bin/python3 "$TOP/scripts/bench-report.py" "$res" --secs "$secs" --runs "$runs" \
	--release "$(cat "$obj/include/config/kernel.release")" \
	--machine "QEMU TCG, ${VM_CPUS:-2} vCPUs"
if ! python3 "$TOP/scripts/results.py" --splats "$res/vm/console.txt"; then
	warn "bench: the kernel log has a splat: $res/vm/console.txt"
	vrc=1
fi
say "bench: done in $(elapsed): $res/bench.md, bench.json, bench.png"
[ $vrc != 124 ] || die "bench: $timed_out; the table has the runs made before"
[ $vrc = 0 ] || die "bench: some runs failed (see the table and $res/vm)"
