# pfs — top-level Makefile.
#
# Each subsystem directory builds one static library from its *.c files; a file
# named *_main.c is a program entry point and is left out of the library.
#   common/ -> libpfscommon.a   qos/ -> libpfsqos.a   mds/ -> libpfsmds.a
#   oss/    -> libpfsoss.a      client/ -> libpfsclient.a   bench/sim -> libpfssim.a
# Programs (build/bin/): pfs-mds, pfs-oss, mount.pfs, pfsadmin, pfs-sim, pfs-bench.
# Unit tests: tests/unit/test_<module>.c -> build/tests/test_<module>, each linked
# against every library.
#
#   make               build everything (warnings are errors)
#   make test          unit + integration tests (installs missing Debian packages)
#   make test SAN=1    the same under ASan/UBSan (CI uses this)
#   make unit | integration | fuzz | bench | clean | deps
#   make COVERAGE=1    gcov instrumentation

CC      ?= cc
SAN     ?= 0
COVERAGE ?= 0
ifeq ($(SAN),1)
  O     ?= build-san
else
  O     ?= build
endif

PKGS    := fuse3 libevent jansson inih
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DFUSE_USE_VERSION=35 \
           -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -pthread -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS  := $(PKG_LIBS) -llmdb -lglpk -lm -lpthread

ifeq ($(SAN),1)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(COVERAGE),1)
  CFLAGS  += --coverage
  LDFLAGS += --coverage
endif

SUBSYS  := common qos mds oss client
libsrc   = $(filter-out %_main.c,$(wildcard $(1)/*.c))
libobj   = $(patsubst %.c,$(O)/obj/%.o,$(call libsrc,$(1)))
lib      = $(O)/lib/libpfs$(1).a
# What each program and each test family links: its subsystem, then common.
LIBS_MDS    := $(call lib,mds) $(call lib,qos) $(call lib,common)
LIBS_OSS    := $(call lib,oss) $(call lib,qos) $(call lib,common)
LIBS_CLIENT := $(call lib,client) $(call lib,qos) $(call lib,common)
LIBS_SIM    := $(call lib,sim) $(call lib,qos) $(call lib,common)
LIBS_QOS    := $(call lib,qos) $(call lib,common)
LIBS_COMMON := $(call lib,common)

SIM_SRC := $(filter-out %_main.c,$(wildcard bench/sim/*.c))
SIM_OBJ := $(patsubst %.c,$(O)/obj/%.o,$(SIM_SRC))

BINS    := $(O)/bin/pfs-mds $(O)/bin/pfs-oss $(O)/bin/mount.pfs $(O)/bin/pfsadmin
BINS    += $(if $(wildcard bench/sim/sim_main.c),$(O)/bin/pfs-sim)
BINS    += $(if $(wildcard bench/pfs_bench_main.c),$(O)/bin/pfs-bench)
BINS    += $(O)/bin/pfs-passthrough $(O)/bin/pfs-qosbench

ITOOL_SRC := $(wildcard tests/integration/tools/*.c)
ITOOL_BIN := $(patsubst tests/integration/tools/%.c,$(O)/tests/tools/%,$(ITOOL_SRC))

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))

.PHONY: all test unit integration fuzz bench clean deps install
all: $(BINS)

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

define mklib
$(O)/lib/libpfs$(1).a: $(call libobj,$(1))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach s,$(SUBSYS),$(eval $(call mklib,$(s))))

$(O)/lib/libpfssim.a: $(SIM_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

# Programs: $(1) = binary, $(2) = main object, $(3) = libraries.
define mkbin
$(O)/bin/$(1): $(2) $(3)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $(2) $(3) $$(LDLIBS)
endef
$(eval $(call mkbin,pfs-mds,$(O)/obj/mds/mds_main.o,$(LIBS_MDS)))
$(eval $(call mkbin,pfs-oss,$(O)/obj/oss/oss_main.o,$(LIBS_OSS)))
$(eval $(call mkbin,mount.pfs,$(O)/obj/client/mount_main.o,$(LIBS_CLIENT)))
$(eval $(call mkbin,pfsadmin,$(O)/obj/client/pfsadmin_main.o,$(LIBS_CLIENT)))
$(eval $(call mkbin,pfs-sim,$(O)/obj/bench/sim/sim_main.o,$(LIBS_SIM)))
$(eval $(call mkbin,pfs-bench,$(O)/obj/bench/pfs_bench_main.o,$(LIBS_COMMON)))
$(eval $(call mkbin,pfs-qosbench,$(O)/obj/bench/qos_bench_main.o,$(LIBS_QOS)))
$(eval $(call mkbin,pfs-passthrough,$(O)/obj/bench/passthrough_main.o,$(LIBS_COMMON)))

# Unit tests: tests/unit/test_<family>_<module>.c links that family's
# libraries (mds, oss, cli, qos, sim); any other test_<module>.c links common.
define mktest
$(O)/tests/test_$(1)%: tests/unit/test_$(1)%.c $(2)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$< $(2) $$(LDLIBS) -lcmocka
endef
$(eval $(call mktest,mds_,$(LIBS_MDS)))
$(eval $(call mktest,oss_,$(LIBS_OSS)))
$(eval $(call mktest,cli_,$(LIBS_CLIENT)))
$(eval $(call mktest,qos_,$(LIBS_QOS)))
$(eval $(call mktest,sim_,$(LIBS_SIM)))
$(eval $(call mktest,,$(LIBS_COMMON)))

# Integration test tools (frame_spray, posix_check, ...): link common only.
$(O)/tests/tools/%: tests/integration/tools/%.c $(LIBS_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBS_COMMON) $(LDLIBS)

deps:
	@sh deploy/install-deps.sh

unit: deps $(BINS) $(UNIT_BIN)
	@sh tests/run-unit.sh $(O)/tests

integration: deps $(BINS) $(ITOOL_BIN)
	@PFS_BIN=$(CURDIR)/$(O)/bin sh tests/integration/run.sh

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(ITOOL_BIN)
	@sh tests/run-unit.sh $(O)/tests
	@PFS_BIN=$(CURDIR)/$(O)/bin sh tests/integration/run.sh

fuzz: deps
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: deps all
	@PFS_BIN=$(CURDIR)/$(O)/bin bash bench/run.sh

install: all
	install -d $(DESTDIR)/usr/local/bin $(DESTDIR)/sbin
	install -m 755 $(BINS) $(DESTDIR)/usr/local/bin/
	ln -sf /usr/local/bin/mount.pfs $(DESTDIR)/sbin/mount.pfs

clean:
	rm -rf build build-san

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
