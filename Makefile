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

PKGS    := fuse3 libevent libevent_pthreads jansson inih libsodium
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DFUSE_USE_VERSION=35 \
           -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -pthread -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS  := $(PKG_LIBS) -llmdb -lglpk -lz -lm -lpthread

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
BINS    += $(O)/bin/pfs-passthrough $(O)/bin/pfs-qosbench $(O)/bin/pfs-authbench
BINS    += $(if $(wildcard bench/sharp_live.c),$(O)/bin/pfs-sharp)

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
$(eval $(call mkbin,pfs-authbench,$(O)/obj/bench/auth_bench.o,$(LIBS_COMMON)))
$(eval $(call mkbin,pfs-sharp,$(O)/obj/bench/sharp_live.o,$(LIBS_QOS)))

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

# pfs against CephFS and GlusterFS on this machine (bench/peers.sh; PEERS=gluster,ceph)
.PHONY: bench-peers
bench-peers: deps all
	@PFS_BIN=$(CURDIR)/$(O)/bin bash bench/peers.sh

# --- Installation: make install | uninstall | deb ---------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=] [O=build] [NOBUILD=1]
# Programs go to $(PREFIX)/bin, with /sbin/mount.pfs -> $(PREFIX)/bin/mount.pfs
# for mount(8); man pages to $(PREFIX)/share/man; systemd units always to
# $(PREFIX)/lib/systemd/system (systemd reads /usr/local/lib/systemd/system
# and /usr/lib/systemd/system; set UNITDIR for another PREFIX), with
# ExecStart= pointing at $(PREFIX)/bin; bash completion to
# $(PREFIX)/share/bash-completion/completions; the Slurm hooks to
# $(PREFIX)/lib/pfs/slurm; pfs-sim scenarios to $(PREFIX)/share/pfs/scenarios;
# the example mount unit to $(PREFIX)/share/doc/pfs/examples.  Example
# configurations go to /etc/pfs whatever the PREFIX, never over an existing
# file.  install builds the programs in $(O) first, unless NOBUILD=1: then
# it installs what $(O)/bin holds (make install O=build-pkg NOBUILD=1).
# uninstall removes exactly what install put, except configurations that
# differ from the shipped examples (edited ones stay).  deb builds
# $(O)/pfs_<version>_<arch>.deb with PREFIX=/usr (dpkg-deb; the maintainer
# scripts enable and start nothing).  Nothing here is enabled or started.
PREFIX     = /usr/local
DESTDIR   ?=
BINDIR     = $(PREFIX)/bin
MANDIR     = $(PREFIX)/share/man
UNITDIR    = $(PREFIX)/lib/systemd/system
COMPLDIR   = $(PREFIX)/share/bash-completion/completions
LIBEXECDIR = $(PREFIX)/lib/pfs
DATADIR    = $(PREFIX)/share/pfs
DOCDIR     = $(PREFIX)/share/doc/pfs
MOUNTDIR   = /sbin
CONFDIR    = /etc/pfs
# The version is PFS_VERSION in common/version.h (every program's --version), else 0.1.0.
VERSION    = $(or $(shell sed -n 's/^\#define PFS_VERSION "\(.*\)"/\1/p' common/version.h 2>/dev/null),0.1.0)
INST_MAN   = $(wildcard deploy/man/*.[178])
INST_UNITS = pfs-mds.service pfs-oss.service pfs-oss@.service
INST_CONFS = mds.conf oss.conf slurm.conf
INST_SLURM = prolog epilog
INST_SCEN  = $(notdir $(wildcard bench/scenarios/*.json))
# The Debian version: VERSION plus the commit's time and hash when in git.
GIT_REV     = $(shell git log -1 --format=%cd.%h --date=format:%Y%m%d%H%M%S 2>/dev/null)
DEB_VERSION = $(VERSION)$(if $(GIT_REV),+git$(GIT_REV))
DEB_ARCH    = $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_MAINTAINER = pfs developers <root@localhost>
# Programs in the package are stripped (DEB_STRIP=true keeps the symbols).
DEB_STRIP   = strip --strip-unneeded --remove-section=.comment --remove-section=.note
DEB_STAGE   = $(O)/deb/debian/pfs
DEB_FILE    = $(O)/pfs_$(DEB_VERSION)_$(DEB_ARCH).deb
# Used when dpkg-shlibdeps (dpkg-dev) is missing.
DEB_SHLIBS  = libc6 (>= 2.34), libevent-2.1-7 (>= 2.1.8-stable), libfuse3-3 (>= 3.2.3), libglpk40 (>= 4.59), libinih1 (>= 40), libjansson4 (>= 2.14), liblmdb0 (>= 0.9.7)

.PHONY: uninstall deb
install: $(if $(NOBUILD),,all)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MOUNTDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(COMPLDIR) $(DESTDIR)$(LIBEXECDIR)/slurm $(DESTDIR)$(DATADIR)/scenarios \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(CONFDIR)
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)/
	ln -sfn $(BINDIR)/mount.pfs $(DESTDIR)$(MOUNTDIR)/mount.pfs
	for m in $(INST_MAN); do \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/ || exit 1; done
	for u in $(INST_UNITS); do \
		sed 's|/usr/local/bin/|$(BINDIR)/|g' deploy/systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	install -m 644 deploy/systemd/mnt-pfs.mount $(DESTDIR)$(DOCDIR)/examples/
	install -m 644 deploy/bash-completion/pfsadmin $(DESTDIR)$(COMPLDIR)/pfsadmin
	install -m 755 $(addprefix deploy/slurm/,$(INST_SLURM)) $(DESTDIR)$(LIBEXECDIR)/slurm/
	install -m 644 $(addprefix bench/scenarios/,$(INST_SCEN)) $(DESTDIR)$(DATADIR)/scenarios/
	for f in $(INST_CONFS); do \
		if [ -e $(DESTDIR)$(CONFDIR)/$$f ]; then echo "keeping $(DESTDIR)$(CONFDIR)/$$f"; \
		else install -m 644 deploy/etc/$$f $(DESTDIR)$(CONFDIR)/$$f || exit 1; fi; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	if [ "$$(readlink $(DESTDIR)$(MOUNTDIR)/mount.pfs)" = "$(BINDIR)/mount.pfs" ]; then \
		rm -f $(DESTDIR)$(MOUNTDIR)/mount.pfs; fi
	for m in $(notdir $(INST_MAN)); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(INST_UNITS))
	rm -f $(DESTDIR)$(DOCDIR)/examples/mnt-pfs.mount $(DESTDIR)$(COMPLDIR)/pfsadmin
	rm -f $(addprefix $(DESTDIR)$(LIBEXECDIR)/slurm/,$(INST_SLURM))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/scenarios/,$(INST_SCEN))
	for f in $(INST_CONFS); do \
		if cmp -s deploy/etc/$$f $(DESTDIR)$(CONFDIR)/$$f; then rm -f $(DESTDIR)$(CONFDIR)/$$f; \
		elif [ -e $(DESTDIR)$(CONFDIR)/$$f ]; then echo "keeping edited $(DESTDIR)$(CONFDIR)/$$f"; fi; done
	for d in $(LIBEXECDIR)/slurm $(LIBEXECDIR) $(DATADIR)/scenarios $(DATADIR) \
		$(DOCDIR)/examples $(DOCDIR) $(CONFDIR); do \
		[ ! -d $(DESTDIR)$$d ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$$d; done

deb: all
	rm -rf $(O)/deb
	$(MAKE) --no-print-directory install NOBUILD=1 PREFIX=/usr DESTDIR=$(abspath $(DEB_STAGE)) >/dev/null
	$(DEB_STRIP) $(addprefix $(DEB_STAGE)/usr/bin/,$(notdir $(BINS)))
	gzip -9n $(DEB_STAGE)/usr/share/man/man*/*
	install -d $(DEB_STAGE)/DEBIAN
	install -m 755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm $(DEB_STAGE)/DEBIAN/
	cd $(DEB_STAGE) && find etc -type f | sort | sed 's|^|/|' >DEBIAN/conffiles
	printf 'Source: pfs\n\nPackage: pfs\nArchitecture: any\n' >$(O)/deb/debian/control
	deps=$$(cd $(O)/deb && dpkg-shlibdeps -O $(addprefix debian/pfs/usr/bin/,$(notdir $(BINS))) 2>/dev/null | \
		sed -n 's/^shlibs:Depends=//p'); \
	sed -e 's|@VERSION@|$(DEB_VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' \
	    -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|' -e "s|@SHLIBS@|$${deps:-$(DEB_SHLIBS)}|" \
	    -e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(DEB_STAGE) | cut -f1)|" \
	    deploy/debian/control >$(DEB_STAGE)/DEBIAN/control
	dpkg-deb --root-owner-group -Zxz --build $(DEB_STAGE) $(DEB_FILE)
	@echo "built $(DEB_FILE)"

clean:
	rm -rf build build-san

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

# deploy/docker-compose.yml run with podman end to end (root; not part of `make test`).
.PHONY: compose-test
compose-test:
	@sh deploy/compose-test.sh

# The `make deb` package installed and run by systemd (PID 1 of a podman
# container) end to end (root; not part of `make test`).
.PHONY: systemd-test
systemd-test:
	@sh deploy/systemd-test.sh
