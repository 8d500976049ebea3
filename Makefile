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

.PHONY: all modules clean install check demo tools bench-host help host-test \
	fuzz stress

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

$(BUILD)/bench-host: tools/bench-host.c tests/maglev_ref.c maglev_table.c include/maglev_table.h include/maglev_compat.h | $(BUILD)
	$(HOSTCC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -Itests -march=native \
		-o $@ tools/bench-host.c tests/maglev_ref.c maglev_table.c

bench-host: $(BUILD)/bench-host
	$(BUILD)/bench-host

# Host unit tests only (no kernel, seconds).
host-test:
	tests/run.sh

# Everything: host tests, compile tests, static checks, KUnit and guest tests
# under QEMU, stock-kernel smoke test, DKMS build.
check:
	scripts/check.sh

demo:
	scripts/demo.sh

# libFuzzer targets (tests/fuzz/), FUZZ_SECONDS each after the corpus replay.
FUZZ_SECONDS	?= 300
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# Stress and scale guest tests (13-16) with STRESS_SECONDS of load each, on
# each of STRESS_FLAVOURS; "make check" runs them with 20 s.
STRESS_SECONDS	?= 600
STRESS_FLAVOURS	?= default debug
stress:
	set -e; for f in $(STRESS_FLAVOURS); do \
		KFLAVOUR=$$f STRESS_SECONDS=$(STRESS_SECONDS) \
		GUEST_TESTS='1[3-6]-*' scripts/vm-test.sh; done

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
	@echo '  make fuzz       libFuzzer targets, FUZZ_SECONDS (300) each'
	@echo '  make stress     stress guest tests, STRESS_SECONDS (600) each, default and debug kernels'
