#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# host-pcap.sh TCPDUMP: runs on the host, whose kernel has no TPACKET_V4
# (make test runs it after the boot). The patched tcpdump (make pcap) on a
# kernel without V4: asking for V4 captures with TPACKET_V3 and says so in
# a warning; asking for zero-copy is an error, as a capture of something
# other than what was asked for would be wrong. On a veth pair in a network
# namespace of its own. Prints TAP; a check that cannot run here (no
# network namespace, or a host kernel with TPACKET_V4) is skipped.
set -u
TD=$1
A=tp4h0

if [ -z "${HOST_PCAP_NETNS:-}" ]; then
	if unshare -n true 2>/dev/null; then
		HOST_PCAP_NETNS=1 exec unshare -n "$0" "$@"
	fi
	echo "1..2"
	echo "ok 1 V4 falls back # SKIP no network namespace here"
	echo "ok 2 zero-copy refused # SKIP no network namespace here"
	exit 0
fi

echo "1..2"
if ! { ip link set lo up && ip link add $A type veth peer name tp4h1 &&
       ip link set $A up && ip link set tp4h1 up; } 2>/dev/null; then
	echo "ok 1 V4 falls back # SKIP no veth pair here"
	echo "ok 2 zero-copy refused # SKIP no veth pair here"
	exit 0
fi

# 1. --tpacket-version=4: a warning, a V3 capture, a normal exit on SIGINT.
err=$(timeout --preserve-status -s INT 3 "$TD" -Z root -i $A \
	--tpacket-version=4 -v -w /dev/null 2>&1 >/dev/null)
rc=$?
name="on a kernel without TPACKET_V4, --tpacket-version=4 captures with TPACKET_V3 and warns"
if echo "$err" | grep -q 'snapshot length [0-9]* bytes, TPACKET_V4$'; then
	echo "ok 1 $name # SKIP the host kernel has TPACKET_V4"
elif [ $rc = 0 ] &&
     [ "$(echo "$err" | sed -n 1p)" = "tcpdump: WARNING: TPACKET_V4 is not supported by this kernel; capturing with TPACKET_V3 instead" ] &&
     echo "$err" | grep -q "^tcpdump: listening on $A, .*, TPACKET_V3$"; then
	echo "ok 1 $name"
else
	echo "not ok 1 $name"
	echo "$err" | sed "s/^/# (exit $rc) /"
fi

# 2. --zerocopy=0: an error, nothing captured.
err=$(timeout 10 "$TD" -Z root -i $A --zerocopy=0 -w /dev/null 2>&1 >/dev/null)
rc=$?
name="on a kernel without TPACKET_V4, --zerocopy is an error"
want="tcpdump: Zero-copy capture needs TPACKET_V4, which this kernel doesn't support"
if echo "$err" | grep -q 'TPACKET_V4$'; then
	echo "ok 2 $name # SKIP the host kernel has TPACKET_V4"
elif [ $rc = 1 ] && [ "$err" = "$want" ]; then
	echo "ok 2 $name"
else
	echo "not ok 2 $name"
	echo "$err" | sed "s/^/# (exit $rc) /"
fi
exit 0
