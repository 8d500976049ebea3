# SPDX-License-Identifier: GPL-2.0
#
# ip_vs_maglev: out-of-tree module build plus the project's make targets.
# The module itself is described in Kbuild.

KDIR	?= /lib/modules/$(shell uname -r)/build
PWD	:= $(shell pwd)
BUILD	:= build

HOSTCC		?= cc
HOST_CFLAGS	:= -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude
SAN_CFLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all

.PHONY: all modules clean install check demo tools bench-host bench-guest help host-test

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

install: modules
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(KDIR)))

clean:
	-$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null
	-$(MAKE) -C $(KDIR) M=$(PWD)/kunit clean 2>/dev/null
	rm -rf $(BUILD)
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers
	rm -f kunit/*.o kunit/*.ko kunit/*.mod kunit/*.mod.c kunit/.*.cmd \
		kunit/modules.order kunit/Module.symvers

# Userspace programs built from the same maglev_table.c.
tools: $(BUILD)/maglev-sim $(BUILD)/udpflows

$(BUILD):
	mkdir -p $(BUILD)

$(BUILD)/maglev-sim: tools/maglev-sim.c maglev_table.c include/maglev_table.h include/maglev_compat.h | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tools/maglev-sim.c maglev_table.c

$(BUILD)/udpflows: tools/udpflows.c | $(BUILD)
	$(HOSTCC) $(HOST_CFLAGS) -o $@ tools/udpflows.c

# The benchmark compiles maglev_table.c, the ip_vs_mh port it compares
# with and the reference fill with the kernel's code-generation limits
# (-O2, on x86-64 no SIMD registers and no red zone), so that the figures
# are those of the code a kernel build runs.
BENCH_KFLAGS	:= -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -Itests \
		   -Itools -fno-strict-aliasing
ifeq ($(shell uname -m),x86_64)
BENCH_KFLAGS	+= -mno-sse -mno-sse2 -mno-mmx -mno-avx -mno-red-zone
endif
BENCH_KSRC	:= maglev_table.c tools/mh_port.c tests/maglev_ref.c

$(BUILD)/bench-host: tools/bench-host.c $(BENCH_KSRC) tools/mh_port.h tests/maglev_ref.h include/maglev_table.h include/maglev_compat.h | $(BUILD)
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-maglev_table.o maglev_table.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-mh_port.o tools/mh_port.c
	$(HOSTCC) $(BENCH_KFLAGS) -c -o $(BUILD)/bench-maglev_ref.o tests/maglev_ref.c
	$(HOSTCC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -Itests -Itools \
		-o $@ tools/bench-host.c $(BUILD)/bench-maglev_table.o \
		$(BUILD)/bench-mh_port.o $(BUILD)/bench-maglev_ref.o

bench-host: $(BUILD)/bench-host
	$(BUILD)/bench-host

# maglev against the kernel's own ip_vs_mh at 65521 slots, in one QEMU boot.
bench-guest:
	scripts/bench-guest.sh

# Host unit tests only (no kernel, seconds).
host-test:
	tests/run.sh

# Everything: host tests, compile tests, static checks, KUnit and guest tests
# under QEMU, stock-kernel smoke test, DKMS build.
check:
	scripts/check.sh

demo:
	scripts/demo.sh

help:
	@echo 'Targets:'
	@echo '  make [modules]  build ip_vs_maglev.ko (KDIR=$(KDIR))'
	@echo '  make install    install into /lib/modules/<version>/extra and run depmod'
	@echo '  make clean      remove build products'
	@echo '  make tools      build $(BUILD)/maglev-sim (table planner) and udpflows (test traffic)'
	@echo '  make host-test  host unit tests only'
	@echo '  make check      all tests: host, static, KUnit and guest tests under QEMU'
	@echo '  make demo       a maglev service under QEMU with Debian'"'"'s stock kernel'
	@echo '  make bench-host table build and lookup benchmark (prints figures)'
	@echo '  make bench-guest rebuild and add-1000-servers times, maglev and ip_vs_mh, in QEMU'
