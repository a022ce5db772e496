#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-run.sh OUT: runs inside the VM (see vm.sh). Streams the kernel log to
# OUT/dmesg.txt, runs the command in OUT/cmd, and leaves its exit code in
# OUT/rc.
out=$1
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
dmesg --follow --nopager >"$out/dmesg.txt" 2>&1 &
logger=$!
bash -c "$(cat "$out/cmd")"
rc=$?
sleep 1
kill "$logger" 2>/dev/null
wait "$logger" 2>/dev/null
dmesg --nopager >"$out/dmesg.txt"
echo "$rc" >"$out/rc"
exit "$rc"
