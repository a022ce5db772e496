// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-flap RXDEV TXDEV SECONDS: attach and detach a two-instruction XDP
 * program (XDP_PASS) on RXDEV, as fast as the kernel allows, from CPU 1,
 * while a child on CPU 0 sends 60-byte frames into TXDEV (RXDEV's veth peer)
 * through a packet socket. veth then runs the program in its NAPI poll on
 * CPU 0, through the XDP dispatcher, while CPU 1 rewrites the dispatcher's
 * code at every attach and detach (text_poke_bp(): int3 first, then the new
 * bytes, with a sync_core() on every CPU in between).
 *
 * It uses nothing of AF_PACKET V4: it runs the same on the base kernel and
 * on the series. scripts/int3-repro.sh boots both and runs it. Prints one
 * line, "attaches N", and exits 0; the kernel log tells whether a
 * vCPU took a stale int3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("xdp-flap: sched_setaffinity");
		exit(1);
	}
}

/* The child: frames into txdev until its parent is gone. */
static void sender(unsigned int txdev)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = txdev,
		.sll_halen = ETH_ALEN,
	};
	unsigned char frame[60] = {
		0x02, 0, 0, 0, 0, 1,	/* a MAC nobody has: dropped after XDP */
		0x02, 0, 0, 0, 0, 2,
		0x88, 0xb5,		/* local experimental ethertype */
	};
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pin(0);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("xdp-flap: socket");
		exit(1);
	}
	for (;;) {
		if (sendto(fd, frame, sizeof(frame), 0,
			   (struct sockaddr *)&sll, sizeof(sll)) != sizeof(frame) &&
		    errno != ENOBUFS && errno != EAGAIN)
			break;
	}
	perror("xdp-flap: sendto");
	exit(1);
}

int main(int argc, char **argv)
{
	struct bpf_insn prog[] = {
		/* r0 = XDP_PASS; exit */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned long long attaches = 0;
	union bpf_attr attr;
	unsigned int rx, tx;
	struct timespec now;
	time_t end;
	int pfd, lfd, status;
	pid_t child;

	if (argc != 4) {
		fprintf(stderr, "usage: xdp-flap RXDEV TXDEV SECONDS\n");
		return 2;
	}
	rx = if_nametoindex(argv[1]);
	tx = if_nametoindex(argv[2]);
	if (!rx || !tx) {
		fprintf(stderr, "xdp-flap: no device %s or %s\n", argv[1], argv[2]);
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (unsigned long)prog;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	pfd = bpf(BPF_PROG_LOAD, &attr);
	if (pfd < 0) {
		perror("xdp-flap: BPF_PROG_LOAD");
		return 1;
	}

	child = fork();
	if (child < 0) {
		perror("xdp-flap: fork");
		return 1;
	}
	if (!child)
		sender(tx);

	pin(1);
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec + atoi(argv[3]);
	do {
		memset(&attr, 0, sizeof(attr));
		attr.link_create.prog_fd = pfd;
		attr.link_create.target_ifindex = rx;
		attr.link_create.attach_type = BPF_XDP;
		attr.link_create.flags = XDP_FLAGS_DRV_MODE;
		lfd = bpf(BPF_LINK_CREATE, &attr);
		if (lfd < 0) {
			perror("xdp-flap: BPF_LINK_CREATE");
			kill(child, SIGKILL);
			return 1;
		}
		/* The link's last reference: the program comes off. */
		close(lfd);
		attaches++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end);

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	printf("attaches %llu\n", attaches);
	return 0;
}
