# SPDX-License-Identifier: GPL-2.0
# AF_PACKET V4 and PACKET_ZEROCOPY: the project's single entry point.
# Every target is a thin wrapper over a script in scripts/; see README.md.

SHELL := /bin/bash
S := scripts

.PHONY: help deps base tree series kernel vm check-series test bench profile check-newest pcap clean

help:
	@sed -n 's/^## //p' $(lastword $(MAKEFILE_LIST))

## make deps          install what is missing (Debian 12, as root)
deps:
	@$(S)/deps.sh

## make base          the pinned Linux 7.3.y tree (KERNEL_SRC=dir|tarball for your own)
base: deps
	@$(S)/base.sh >/dev/null

## make tree          build/linux = base (tag tp4-base) + patches/ (git am, set after set)
tree: deps
	@$(S)/tree.sh

## make series        export build/linux (tp4-base..HEAD) to patches/, a folder per set
series:
	@$(S)/series.sh

## make kernel        build a kernel: KIND=debug (default) or bench
KIND ?= debug
kernel: tree
	@$(S)/kconfig.sh $(KIND)
	@. $(S)/lib.sh && kmake $(KIND)

## make vm CMD="..."  boot a built kernel (KIND=...), run CMD, return its exit code
vm: deps
	@$(S)/vm.sh "$(CMD)"

## make check-series  checkpatch, every prefix builds, no new W=1/sparse warnings
check-series: tree
	@$(S)/check-series.sh

## make test          everything above, then one boot that runs all the tests
test:
	@$(S)/test.sh

## make bench         boot the bench kernel once, run the whole benchmark matrix,
##                    instructions counted per packet by the emulator:
##                    build/results/<time>/bench.{md,json,png} (BENCH_SECS, BENCH_RUNS)
bench:
	@$(S)/bench.sh

## make profile ROW=rxdrop MODES="v3 v4" SIZE=64
##                    kernel functions by instructions per packet, side by side
##                    for MODES, in one cell: build/results/<time>-profile/profile.md
profile:
	@$(S)/profile.sh

## make check-newest  the series on the newest linux-source-7.* of Debian trixie-backports
##                    and unstable, if newer than the base (applies, builds
##                    warning-free, boots, KUnit + tpacket4 tests)
check-newest:
	@$(S)/check-newest.sh

## make pcap          build/pcap/bin/tcpdump: Debian 12's libpcap and tcpdump with pcap/'s
##                    patches (TPACKET_V4, zero-copy), static; the system's stay as they are
pcap: deps
	@$(S)/pcap.sh

## make clean         remove build/ (keeps the download cache in ~/.cache/tp4)
clean:
	rm -rf build
