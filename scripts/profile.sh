#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# profile.sh: make profile ROW=.. MODES=".. .." SIZE=..: where a path
# spends its instructions. One boot of the bench kernel (as make bench,
# with the counting plugin profiling every window) runs ROW at SIZE for
# each of MODES, ROUNDS times (default 1); then the report puts side by
# side, per mode, the kernel functions by instructions per packet (each
# block of the guest kernel counted in the function it starts in, by the
# bench kernel's System.map), the TOP (default 25) largest of any mode,
# from each mode's median run.
#   ROW    rxdrop, rxdrop-poll, txpush, l2fwd, pingpong (SIZE: the packets
#          in flight, 1 or 64) or xdp (SIZE 64)
#   MODES  two or more of v2 v3 v4 v4zc xdp-drv pktgen (default "v3 v4")
#   SIZE   64 or 1500 (default 64)
# The results folder is build/results/<time>-profile; profile.md there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

row=${ROW:-rxdrop}
modes=${MODES:-v3 v4}
size=${SIZE:-64}
case $row in
rxdrop|rxdrop-poll|txpush|l2fwd|pingpong|xdp) ;;
*) die "profile: ROW is rxdrop, rxdrop-poll, txpush, l2fwd, pingpong or xdp" ;;
esac
# pktgen alone is a mode of rxdrop's; the bench runs its own sizes.
bench_modes=${modes/pktgen/}
[ "$row" = pingpong ] && [ "$size" != 1 ] && [ "$size" != 64 ] &&
	die "profile: SIZE is the ping-pong's packets in flight, 1 or 64"

export BENCH_ROWS=$row BENCH_MODES="$bench_modes" BENCH_RUNS=${ROUNDS:-1}
export BENCH_PROFILE=1 BENCH_COUNT=1
[ "$row" = pingpong ] || [ "$row" = xdp ] || export BENCH_SIZES=$size
"$TOP/scripts/bench.sh" >&2 || warn "profile: the bench reported failures (see above)"
res=$(ls -d "$BUILD"/results/*/ | grep -v -- -profile/ | tail -n 1)
res=${res%/}
mv "$res" "$res-profile"
res=$res-profile
/usr/bin/python3 "$TOP/scripts/tp4count.py" compare "$res" \
	"$res/System.map" "$row" "$size" "${TOP_N:-25}" $modes |
	tee "$res/profile.md"
say "profile: $res/profile.md"
