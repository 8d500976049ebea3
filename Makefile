# SPDX-License-Identifier: GPL-2.0
#
# ip_vs_maglev: out-of-tree module build plus the project's make targets.
# The module itself is described in Kbuild.

KDIR	?= /lib/modules/$(shell uname -r)/build
PWD	:= $(shell pwd)
BUILD	:= build
# MH_COMPAT=1: build (and install) ip_vs_mh.ko, scheduler name "mh" (Kbuild).
MH_COMPAT ?=
ifeq ($(MH_COMPAT),1)
MODULE_KO	:= ip_vs_mh.ko
# depmod prefers updates/ over the in-tree kernel/ (man depmod.d).
INSTALL_DIR	:= updates
else
MODULE_KO	:= ip_vs_maglev.ko
INSTALL_DIR	:= extra
endif
export MH_COMPAT

HOSTCC		?= cc
# maglev_table.c's userspace stand-ins first: tools/include/maglev_compat.h
# before include/'s kernel one (include/maglev_table.h includes it as
# <maglev_compat.h>).
USER_INC	:= -Itools/include -Iinclude
HOST_CFLAGS	:= -O2 -g -Wall -Wextra -Werror -std=gnu11 $(USER_INC) -Itools/ring
SAN_CFLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all

.PHONY: all modules clean install uninstall check demo tools guest-tools bench-host bench-resched bench-old bench-guest bench-conn-guest bench-sync bench-scale \
	help host-test compare deb fuzz stress

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

KVER	= $(notdir $(patsubst %/build,%,$(KDIR)))

install: modules
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_DIR=$(INSTALL_DIR) modules_install
	depmod -a $(KVER)

# Removes what "make install" put in place; with MH_COMPAT=1, modprobe
# ip_vs_mh finds the in-tree module again.
uninstall:
	rm -f $(addprefix /lib/modules/$(KVER)/$(INSTALL_DIR)/,$(MODULE_KO) \
		$(MODULE_KO).xz $(MODULE_KO).zst $(MODULE_KO).gz)
	depmod -a $(KVER)

clean:
	-$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null
	rm -rf $(BUILD)
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers
	rm -f kunit/*.o kunit/*.ko kunit/*.mod kunit/*.mod.c kunit/.*.cmd \
		kunit/modules.order kunit/Module.symvers

# Consistent-hash rings of seeds 002 and 004, for maglev-sim and compare.
RING_SRC	:= tools/ring/ring_hash.c tools/ring/ring_set.c tools/ring/ring_hash.h tools/ring/ring_set.h

# The user's tools: maglev-sim (built from the same maglev_table.c) and
# maglev-fleet.
tools: $(BUILD)/maglev-sim $(BUILD)/maglev-fleet

# The guest tests' helpers (tests/guest/*.c): test traffic, connections
# right after a command, a command as an unprivileged user.
guest-tools: $(BUILD)/udpflows $(BUILD)/tcpfleet $(BUILD)/connprobe \
	$(BUILD)/asuser $(BUILD)/tcpraw

$(BUILD):
	mkdir -p $(BUILD)

$(BUILD)/maglev-sim: tools/maglev-sim.c tools/siphash.c maglev_table.c include/maglev_table.h tools/include/maglev_compat.h $(RING_SRC) | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tools/maglev-sim.c tools/siphash.c maglev_table.c $(filter %.c,$(RING_SRC))

$(BUILD)/udpflows: tests/guest/udpflows.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tests/guest/udpflows.c

$(BUILD)/tcpfleet: tests/guest/tcpfleet.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tests/guest/tcpfleet.c

# Fleet consistency check and Prometheus export of /proc/net/ip_vs_maglev
# (docs/fleet.md); it parses text only, so it links no table code.
$(BUILD)/maglev-fleet: tools/maglev-fleet.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tools/maglev-fleet.c

# Helpers of guest test 19-hardening (tests/guest/): connections right
# after a command, and a command as an unprivileged user.
$(BUILD)/connprobe: tests/guest/connprobe.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tests/guest/connprobe.c

$(BUILD)/asuser: tests/guest/asuser.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tests/guest/asuser.c

# Helper of guest test 24-takeover: one raw TCP segment (an ACK of a
# connection this load balancer never saw open).
$(BUILD)/tcpraw: tests/guest/tcpraw.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tests/guest/tcpraw.c

# The benchmark compiles maglev_table.c, the ip_vs_mh port it compares
# with and the reference fill with the kernel's code-generation limits
# (-O2, on x86-64 no SIMD registers and no red zone), so that the figures
# are those of the code a kernel build runs.
BENCH_KFLAGS	:= -O2 -g -Wall -Wextra -Werror -std=gnu11 $(USER_INC) -Itests \
		   -Itools -Itools/bench -fno-strict-aliasing
ifeq ($(shell uname -m),x86_64)
BENCH_KFLAGS	+= -mno-sse -mno-sse2 -mno-mmx -mno-avx -mno-red-zone
endif
BENCH_KSRC	:= maglev_table.c tools/bench/mh_port.c tests/maglev_ref.c tools/siphash.c \
		   tools/bench/maglev_sched_port.c

$(BUILD)/bench-host: tools/bench/bench-host.c $(BENCH_KSRC) tools/bench/mh_port.h tools/bench/bench_time.h tools/bench/maglev_sched_port.h tests/maglev_ref.h include/maglev_table.h tools/include/maglev_compat.h | $(BUILD)
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-maglev_table.o maglev_table.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-mh_port.o tools/bench/mh_port.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-maglev_ref.o tests/maglev_ref.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-siphash.o tools/siphash.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-maglev_sched_port.o tools/bench/maglev_sched_port.c
	$(HOSTCC) -O2 -g -Wall -Wextra -Werror -std=gnu11 $(USER_INC) -Itests -Itools -Itools/bench \
		-o $@ tools/bench/bench-host.c $(BUILD)/bench-maglev_table.o \
		$(BUILD)/bench-mh_port.o $(BUILD)/bench-maglev_ref.o \
		$(BUILD)/bench-siphash.o $(BUILD)/bench-maglev_sched_port.o

# The stretches between reschedule points in CPU time (tests/resched_test.c
# without its block counter: make check counts work, this times it).
$(BUILD)/bench-resched: tests/resched_test.c maglev_table.c include/maglev_table.h tools/include/maglev_compat.h | $(BUILD)
	$(HOSTCC) $(BENCH_KFLAGS) -DMAGLEV_RESCHED_TEST -DRESCHED_BENCH -o $@ \
		tests/resched_test.c maglev_table.c

bench-resched: $(BUILD)/bench-resched
	$(BUILD)/bench-resched

bench-host: $(BUILD)/bench-host $(BUILD)/bench-resched
	$(BUILD)/bench-host
	$(BUILD)/bench-resched

# The table build against the one before packed slots, side by side.
bench-old:
	scripts/bench-old.sh

# Maglev or ring? Table on stdout, charts in $(BUILD)/compare/.
$(BUILD)/maglev-compare: tools/bench/compare.c tools/siphash.c maglev_table.c include/maglev_table.h tools/include/maglev_compat.h $(RING_SRC) | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tools/bench/compare.c tools/siphash.c maglev_table.c $(filter %.c,$(RING_SRC)) -lm

compare:
	scripts/compare.sh

# maglev against the kernel's own ip_vs_mh at 65521 slots, in one QEMU boot.
bench-guest:
	scripts/bench-guest.sh

# Per new connection: each service's own schedule(), the kernel's mh and
# maglev side by side, four key kinds, in one QEMU boot (TCG); the
# benchmark module is tools/bench/kmod/, loaded only in the guest.
bench-conn-guest:
	scripts/bench-conn-guest.sh

# A kube-proxy-like set at scale (BENCH_SERVICES virtual services, 4000)
# in one QEMU boot: memory per service against rr and mh, and the time and
# table builds of one endpoint removed from every group at once.
bench-scale:
	scripts/bench-scale.sh

# IPVS connection sync in a three-LB fleet: guest test 18 on the test
# kernel; prints broken connections with and without sync and the sync
# traffic and CPU per connection (docs/fleet.md).
bench-sync:
	scripts/bench-sync.sh

# Host unit tests only (no kernel, seconds).
host-test:
	tests/run.sh

# Everything: host tests, compile tests, static checks, KUnit and guest tests
# under QEMU, stock-kernel smoke test, DKMS build.
check:
	scripts/check.sh

demo:
	scripts/demo.sh

# Debian packages ip-vs-maglev-dkms and ip-vs-mh-maglev-dkms in $(BUILD)/deb/.
deb:
	scripts/mkdeb.sh $(BUILD)/deb

# libFuzzer targets (tests/fuzz/), FUZZ_SECONDS each after the corpus replay.
FUZZ_SECONDS	?= 300
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# Stress, scale and memory guest tests (13-15) with STRESS_SECONDS of load each, on
# each of STRESS_FLAVOURS; "make check" runs them with 20 s.
STRESS_SECONDS	?= 600
STRESS_FLAVOURS	?= default debug
stress:
	set -e; for f in $(STRESS_FLAVOURS); do \
		KFLAVOUR=$$f STRESS_SECONDS=$(STRESS_SECONDS) \
		GUEST_TESTS='1[3-5]-*' scripts/vm-test.sh; done

help:
	@echo 'Targets:'
	@echo '  make [all|modules]  build ip_vs_maglev.ko (KDIR=$(KDIR))'
	@echo '  make MH_COMPAT=1 ...  the same as ip_vs_mh.ko, scheduler name "mh"'
	@echo '  make install    install into /lib/modules/<version>/extra (MH_COMPAT=1:'
	@echo '                  updates/, ahead of the in-tree ip_vs_mh) and run depmod'
	@echo '  make uninstall  remove what make install put there, run depmod'
	@echo '  make deb        Debian DKMS packages ip-vs-maglev-dkms, ip-vs-mh-maglev-dkms'
	@echo '  make clean      remove build products'
	@echo '  make tools      build $(BUILD)/maglev-sim (table planner) and maglev-fleet'
	@echo '                  (fleet check, Prometheus export)'
	@echo '  make guest-tools build the guest tests'"'"' helpers: udpflows, tcpfleet,'
	@echo '                  connprobe, asuser, tcpraw (tests/guest/)'
	@echo '  make host-test  host unit tests only'
	@echo '  make check      all tests: host, static, KUnit and guest tests under QEMU'
	@echo '  make demo       a maglev service under QEMU with Debian'"'"'s stock kernel'
	@echo '  make bench-host table build and lookup benchmark (prints figures),'
	@echo '                  then make bench-resched'
	@echo '  make bench-resched CPU time between reschedule points of a build'
	@echo '  make bench-old  table build against the one before packed slots'
	@echo '  make compare    Maglev or ring? balance, disruption, memory, lookup time;'
	@echo '                  table on stdout, charts in $(BUILD)/compare/'
	@echo '  make bench-guest rebuild and add-1000-servers times, maglev and ip_vs_mh, in QEMU'
	@echo '  make bench-conn-guest per new connection, maglev against the kernel'"'"'s mh,'
	@echo '                  4 key kinds, in QEMU (TCG: ratios, not absolute ns)'
	@echo '  make bench-sync IPVS connection sync in a 3-LB fleet in QEMU: broken connections'
	@echo '                  with and without sync, sync traffic and CPU per connection'
	@echo '  make bench-scale kube-proxy-like set (4000 services): memory vs rr and mh, mass change, in QEMU'
	@echo '  make fuzz       libFuzzer targets, FUZZ_SECONDS (300) each'
	@echo '  make stress     stress guest tests, STRESS_SECONDS (600) each, default and debug kernels'
	@echo '  make help       this list'
