# rspwalk -- one non-recursive Makefile.  `make help` lists the targets.
#
# Out-of-tree builds: build/release (default), build/asan (ASan+UBSan, unit
# tests), build/tsan (ThreadSanitizer, the threads test), build/fuzz (clang libFuzzer).  Sources are found by folder, so a new
# .c file in a module folder is built without touching this file.

.DEFAULT_GOAL := all
SHELL := /bin/bash

PREFIX ?= /usr/local
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= clang
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

VERSION := 0.1.0

CSTD := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough
WERROR ?= -Werror
INCS := -I. -Iinclude -I/usr/include/libdwarf $(shell pkg-config --cflags capstone 2>/dev/null)
# capstone, libdwarf and libdw are opened with dlopen on first use (util/dl.h: start-up, and
# libdwarf and libdw export 34 functions of the same names), by the SONAMEs of the libraries
# found here (Debian 12's when none is installed yet).
soname_of = $(or $(shell readelf -d "$$($(CC) -print-file-name=$(1).so)" 2>/dev/null \
              | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'),$(2))
CAPSTONE_SONAME = $(call soname_of,libcapstone,libcapstone.so.4)
LIBDWARF_SONAME = $(call soname_of,libdwarf,libdwarf.so.1)
LIBDW_SONAME = $(call soname_of,libdw,libdw.so.1)
LIBS := -lelf -lexpat -lz -liberty
OPT ?= -O2 -g
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

BASE_CFLAGS = $(CSTD) $(WARN) $(WERROR) $(INCS) -MMD -MP -DSW_VERSION='"$(VERSION)"' \
              -DSW_CAPSTONE_SONAME='"$(CAPSTONE_SONAME)"' -DSW_LIBDWARF_SONAME='"$(LIBDWARF_SONAME)"' \
              -DSW_LIBDW_SONAME='"$(LIBDW_SONAME)"'

# The library's folders, lowest layer first (docs/design.md, scripts/layers.txt).
LIB_DIRS := util arch rsp targets expr elf dwarf cfi disasm libstate walker walker/steppers rtos compose \
            render sample
LIB_SRCS := $(sort $(wildcard $(addsuffix /*.c,$(LIB_DIRS))))
CLI_SRCS := $(sort $(wildcard cli/*.c))
# The Debug Adapter Protocol front door (dap/, on jansson): linked into rspwalk and rspwalkd,
# not into the library (its names are dap_*).
DAP_SRCS := $(sort $(wildcard dap/*.c))
DAP_LIBS := -ljansson
# The RSP door (door/, rspwalk --rsp-listen): linked into rspwalk, not into the library.
DOOR_SRCS := $(sort $(wildcard door/*.c))
# rspwalkd: the stack server (server/), on libmicrohttpd, jansson and SQLite.
SERVER_SRCS := $(sort $(wildcard server/*.c))
SERVER_LIBS := -lmicrohttpd -ljansson -lsqlite3 -lpthread
# rspwalk-mpi (mpi/): the merged tree walked by MPI ranks, on Open MPI (scripts/deps); only
# public headers, like the CLI.  Its objects and link take mpicc's flags; without mpicc its
# build (and so `all` and `check`) stops with a message naming the packages.  jansson reads an
# rspwalkd's trees (mpi/rspwalkd.c).
MPI_SRCS := $(sort $(wildcard mpi/*.c))
MPICC ?= mpicc
MPI_CFLAGS = $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS = $(shell $(MPICC) --showme:link 2>/dev/null)
# The web page's files, built into rspwalkd (scripts/embed-web); the folders too, so that a
# file added or removed regenerates the table.
WEB_FILES := $(sort $(shell find server/web -type f 2>/dev/null))
WEB_DIRS := $(sort $(shell find server/web -type d 2>/dev/null))
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
# Unit tests live under tests/unit/<folder>/, beside the concept they test.
UNIT_SRCS := $(sort $(wildcard tests/unit/*/test_*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
UNIT_NAMES := $(patsubst tests/unit/%.c,%,$(UNIT_SRCS))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
PUBLIC_HDRS := $(sort $(wildcard include/rspwalk/*.h))

# The compiler for test data tests/unit/data/$(1).S: FIXTURE_CC_<arch> for an <arch>_ prefix.
test_data_cc = $(or $(FIXTURE_CC_$(firstword $(subst _, ,$(1)))),gcc)

# ---- per-configuration rules ----------------------------------------------
# $(call config,NAME,CC,EXTRA_CFLAGS,EXTRA_LDFLAGS)
define config
$(1)_DIR := build/$(1)
$(1)_CFLAGS := $$(BASE_CFLAGS) $(3) -DSW_TEST_DATA='"build/$(1)/tests/data"'
$(1)_LDFLAGS := $(4)
$(1)_LIB_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(LIB_SRCS))
$(1)_CLI_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(CLI_SRCS))
$(1)_SERVER_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(SERVER_SRCS)) build/$(1)/server/web_assets.o
$(1)_DAP_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(DAP_SRCS))
$(1)_DOOR_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(DOOR_SRCS))
# The server's objects but main.o, with the doors it serves (dap/, door/).
$(1)_SERVER_LIB_OBJS := $$(filter-out build/$(1)/server/main.o,$$($(1)_SERVER_OBJS)) $$($(1)_DAP_OBJS) \
    $$($(1)_DOOR_OBJS)
$(1)_TOOL_OBJS := $$(patsubst %.c,build/$(1)/%.o,$$(TOOL_SRCS))

build/$(1)/%.o: %.c
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  CC[$(1)] $$<")
	$$(Q)$(2) $$($(1)_CFLAGS) -c -o $$@ $$<

build/$(1)/server/web_assets.c: scripts/embed-web $$(WEB_FILES) $$(WEB_DIRS)
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  EMBED $$@")
	$$(Q)scripts/embed-web server/web >$$@.tmp && mv $$@.tmp $$@

build/$(1)/server/web_assets.o: build/$(1)/server/web_assets.c
	$$(if $$(Q),@echo "  CC[$(1)] $$<")
	$$(Q)$(2) $$($(1)_CFLAGS) -c -o $$@ $$<

build/$(1)/librspwalk.a: $$($(1)_LIB_OBJS)
	@mkdir -p $$(@D)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^

build/$(1)/rspwalk: $$($(1)_CLI_OBJS) $$($(1)_DAP_OBJS) $$($(1)_DOOR_OBJS) build/$(1)/librspwalk.a
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$(2) $$($(1)_CFLAGS) -o $$@ $$($(1)_CLI_OBJS) $$($(1)_DAP_OBJS) $$($(1)_DOOR_OBJS) build/$(1)/librspwalk.a \
	    $$(LIBS) $$(DAP_LIBS) $$($(1)_LDFLAGS)

build/$(1)/rspwalkd: $$($(1)_SERVER_OBJS) $$($(1)_DAP_OBJS) $$($(1)_DOOR_OBJS) build/$(1)/librspwalk.a
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$(2) $$($(1)_CFLAGS) -o $$@ $$($(1)_SERVER_OBJS) $$($(1)_DAP_OBJS) $$($(1)_DOOR_OBJS) build/$(1)/librspwalk.a $$(LIBS) \
	    $$(SERVER_LIBS) $$($(1)_LDFLAGS)

# Test data: ELF files with known contents, built from tests/unit/data/*.S; <arch>_*.S with
# that arch's cross compiler (fixtures.mk's FIXTURE_CC_<arch>), the others with the host's;
# *_stripped.S linked -s (no .symtab, as a stripped program).
build/$(1)/tests/data/%.elf: tests/unit/data/%.S
	@mkdir -p $$(@D)
	$$(Q)$$(call test_data_cc,$$*) -nostdlib -static -no-pie $$(if $$(findstring _stripped,$$*),-s) \
	    -o $$@ $$<

build/$(1)/tests/%: build/$(1)/tests/unit/%.o $$($(1)_TOOL_OBJS) build/$(1)/librspwalk.a \
                    $$(patsubst tests/unit/data/%.S,build/$(1)/tests/data/%.elf,$$(wildcard tests/unit/data/*.S))
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$(2) $$($(1)_CFLAGS) -o $$@ $$< $$($(1)_TOOL_OBJS) build/$(1)/librspwalk.a -lcmocka $$(LIBS) $$($(1)_LDFLAGS)

# The server's unit tests (tests/unit/server/) link its objects but main.o, and its libraries.
build/$(1)/tests/server/%: build/$(1)/tests/unit/server/%.o $$($(1)_SERVER_LIB_OBJS) $$($(1)_TOOL_OBJS) \
                           build/$(1)/librspwalk.a
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$(2) $$($(1)_CFLAGS) -o $$@ $$< $$($(1)_SERVER_LIB_OBJS) $$($(1)_TOOL_OBJS) build/$(1)/librspwalk.a \
	    -lcmocka $$(LIBS) $$(SERVER_LIBS) $$($(1)_LDFLAGS)

# The DAP front door's unit tests (tests/unit/dap/) link its objects and jansson.
build/$(1)/tests/dap/%: build/$(1)/tests/unit/dap/%.o $$($(1)_DAP_OBJS) $$($(1)_TOOL_OBJS) \
                        build/$(1)/librspwalk.a
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$(2) $$($(1)_CFLAGS) -o $$@ $$< $$($(1)_DAP_OBJS) $$($(1)_TOOL_OBJS) build/$(1)/librspwalk.a \
	    -lcmocka $$(LIBS) $$(DAP_LIBS) $$($(1)_LDFLAGS)

-include $$(wildcard build/$(1)/*/*.d build/$(1)/*/*/*.d build/$(1)/*/*/*/*.d)
endef

$(eval $(call config,release,$(CC),$(OPT) -fPIC -fvisibility=hidden -DSW_TESTING,))
$(eval $(call config,asan,$(CC),-O1 -g $(SAN) -DSW_TESTING,$(SAN)))
$(eval $(call config,tsan,$(CC),-O1 -g -fsanitize=thread -DSW_TESTING,-fsanitize=thread))
$(eval $(call config,fuzz,$(CLANG),-O1 -g -fsanitize=fuzzer-no-link,address,undefined -DSW_TESTING,))

# rspwalk-mpi, release build only.
.PHONY: check-mpicc
check-mpicc:
	@command -v $(MPICC) >/dev/null || { echo "rspwalk-mpi needs Open MPI: $(MPICC) not found" \
	    "(apt-get install openmpi-bin libopenmpi-dev, or scripts/deps)"; exit 1; }
build/release/mpi/%.o: mpi/%.c | check-mpicc
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC[release] $<")
	$(Q)$(CC) $(release_CFLAGS) $(MPI_CFLAGS) -c -o $@ $<
build/release/rspwalk-mpi: $(patsubst %.c,build/release/%.o,$(MPI_SRCS)) build/release/librspwalk.a \
                           | check-mpicc
	$(if $(Q),@echo "  LD[release] $@")
	$(Q)$(CC) $(release_CFLAGS) -o $@ $(filter %.o,$^) build/release/librspwalk.a $(LIBS) \
	    $(MPI_LIBS) -ljansson -lpthread

# The shared library carries only the public API (visibility=hidden elsewhere).
build/release/librspwalk.so: $(release_LIB_OBJS)
	$(if $(Q),@echo "  LD[release] $@")
	$(Q)$(CC) -shared -Wl,-soname,librspwalk.so.0 -Wl,--exclude-libs,libiberty.a -o $@ $^ $(LIBS)

UNIT_BINS := $(addprefix build/release/tests/,$(UNIT_NAMES))
ASAN_BINS := $(addprefix build/asan/tests/,$(UNIT_NAMES))

# Walkers of several targets in as many threads over one module cache (tests/thread/run).
build/tsan/thread/%: tests/thread/%.c build/tsan/librspwalk.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD[tsan] $@")
	$(Q)$(CC) $(tsan_CFLAGS) -o $@ $< build/tsan/librspwalk.a $(LIBS) $(tsan_LDFLAGS)
TSAN_FIXTURES := $(addprefix build/fixtures/x86_64/,chain-s0-O0-dyn chain-s1-O0-dyn \
                   threads-s0-O0-dyn threads-s1-O0-dyn recurse-s0-O0-dyn chain-s0-O0-static \
                   chain-s0-O2-dyn tail-s0-O2-dyn)

# Warm walks of a running target checked against cold ones (tests/integration/run-warm.sh,
# scripts/bench): built on demand against the release library.
build/release/warm_drive: tests/warm/warm_drive.c build/release/librspwalk.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD[release] $@")
	$(Q)$(CC) $(release_CFLAGS) -o $@ $< build/release/librspwalk.a $(LIBS) $(release_LDFLAGS)

# The registry's driver (tests/integration/run-server-registry.sh): rspwalkd's objects
# without its main, in the release and tsan configurations.
define regdrive
build/$(1)/tests/server/regdrive: tests/server/regdrive.c $$($(1)_SERVER_LIB_OBJS) build/$(1)/librspwalk.a
	@mkdir -p $$(@D)
	$$(if $$(Q),@echo "  LD[$(1)] $$@")
	$$(Q)$$(CC) $$($(1)_CFLAGS) -o $$@ $$< $$($(1)_SERVER_LIB_OBJS) \
	    build/$(1)/librspwalk.a $$(LIBS) $$(SERVER_LIBS) $$($(1)_LDFLAGS)
endef
$(eval $(call regdrive,release))
$(eval $(call regdrive,tsan))

# The fake process and the fake transport's objects go in every target: the
# libstate and session targets serve the fuzzer's bytes through them.
FUZZ_TOOL_OBJS := build/fuzz/tests/tools/fake_proc.o build/fuzz/tests/tools/fake_transport.o
build/fuzz/%: tests/fuzz/%.c build/fuzz/librspwalk.a $(FUZZ_TOOL_OBJS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZ $@")
	$(Q)$(CLANG) $(fuzz_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_TOOL_OBJS) \
	    build/fuzz/librspwalk.a $(LIBS)
FUZZ_BINS := $(addprefix build/fuzz/,$(FUZZ_NAMES))

# ---- fixtures and integration ---------------------------------------------
-include fixtures/fixtures.mk

# Keep intermediate files (test data ELFs, objects) between runs.
.SECONDARY:

.PHONY: all lib cli check check-unit check-asan check-tsan check-fuzz fuzz check-integration \
        check-valgrind check-server check-browser check-docs check-headers check-symbols check-layers format format-check fixtures install \
        uninstall demo bench comparison clean help deps

all: build/release/librspwalk.a build/release/librspwalk.so build/release/rspwalk \
     build/release/rspwalkd build/release/rspwalk-mpi
lib: build/release/librspwalk.a build/release/librspwalk.so
cli: build/release/rspwalk

deps:
	$(Q)scripts/deps

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/check-run format-check check-headers check-symbols check-layers check-unit check-asan check-tsan \
	    check-fuzz check-hostile check-integration check-server-load check-docs check-valgrind check-server \
	    check-browser check-man check-package

check-unit: $(UNIT_BINS)
	$(Q)tests/run-units build/release/tests $(UNIT_NAMES)

check-asan: $(ASAN_BINS)
	$(Q)ASAN_OPTIONS=detect_leaks=1 tests/run-units build/asan/tests $(UNIT_NAMES)

# Not in `check` yet: 8 gdbservers and a ThreadSanitizer build.
check-tsan: build/tsan/thread/walk8 $(TSAN_FIXTURES)
	$(Q)tests/thread/run build/tsan/thread/walk8 $(TSAN_FIXTURES)

# check-fuzz: every target briefly (11 targets x 3 s, some 60 s with start-up).
# fuzz: each for FUZZ_RUNS executions or FUZZ_LONG seconds, whichever ends first,
# niced, and docs/fuzz.md rewritten with what each did (tests/fuzz/report).
# FUZZ_LONG is 4 hours so that RUNS ends first: fuzz_session does 3,500
# executions a second alone, 1,000 to 2,000 on a shared machine.
FUZZ_SECONDS ?= 3
FUZZ_LONG ?= 14400
FUZZ_RUNS ?= 10000000
check-fuzz: $(FUZZ_BINS)
	$(Q)tests/run-fuzz $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	$(Q)nice -n 19 tests/run-fuzz -o docs/fuzz.md -n $(FUZZ_RUNS) $(FUZZ_LONG) $(FUZZ_BINS)

# rspwalk (ASan+UBSan) against scripted stubs that misbehave, one scenario a file
# (tests/hostile/scenarios/): each must end within its deadline with one error line;
# then rspwalkd (ASan+UBSan) with each of them registered beside an honest stub, and the
# DAP adapter and the RSP door over the stubs that trickle (per-request deadlines).
.PHONY: check-hostile
check-hostile: build/asan/rspwalk build/asan/rspwalkd
	$(Q)tests/hostile/run --rspwalk build/asan/rspwalk
	$(Q)tests/hostile/run-server --rspwalkd build/asan/rspwalkd
	$(Q)tests/hostile/run-fronts --rspwalk build/asan/rspwalk

check-integration: build/release/rspwalk build/release/rspwalkd build/release/tests/server/regdrive \
                   build/release/rspwalk-mpi fixtures
	$(Q)tests/integration/run-all

# rspwalkd under load (tests/integration/server-load): 64 gdbservers and 200 requests against
# the ASan build, 8 and 50 under valgrind, stubs killed and started again meanwhile.
.PHONY: check-server-load
check-server-load: build/asan/rspwalkd build/release/rspwalkd build/release/rspwalk fixtures
	$(Q)tests/integration/server-load

check-docs: build/release/librspwalk.a build/release/rspwalk build/release/rspwalkd fixtures
	$(Q)tests/docs/run-examples

check-valgrind: build/release/rspwalk fixtures
	$(Q)tests/integration/run-valgrind

# rspwalkd's HTTP door against hostile clients (and under valgrind), and every endpoint
# against docs/openapi.json.
check-server: build/release/rspwalkd fixtures
	$(Q)tests/server/run build/release/rspwalkd --valgrind
	$(Q)tests/server/check-openapi build/release/rspwalkd build/fixtures/x86_64/busy-s0-O0-dyn

# The web page in Debian's chromium, headless (playwright-core from npm: tests/browser/run
# installs it from its lock file when missing); screenshots in build/test-artifacts (web.png,
# web-flame.png, web-speedscope.png).
check-browser: build/release/rspwalkd build/release/rspwalk fixtures
	$(Q)tests/browser/run build/release/rspwalkd

check-headers:
	$(Q)set -e; for h in $(PUBLIC_HDRS); do \
	    echo "#include \"$${h#include/}\"" | $(CC) $(CSTD) $(WARN) -Werror -Iinclude -x c -fsyntax-only - \
	    || { echo "check-headers: $$h does not compile on its own"; exit 1; }; \
	done; echo "check-headers: $(words $(PUBLIC_HDRS)) headers compile on their own"

# Includes and calls run only down the layers of scripts/layers.txt, and no files form a circle.
check-layers: build/release/librspwalk.a build/release/rspwalk
	$(Q)scripts/check-layers build/release

# Every exported symbol carries a module prefix (libunwind's check-namespace).
check-symbols: build/release/librspwalk.a build/release/librspwalk.so
	$(Q)bad=$$(nm -g --defined-only build/release/librspwalk.a | awk 'NF==3{print $$3}' \
	    | grep -Ev '^(sw_|rsp_|arch_|tgt_)' | sort -u); \
	if [ -n "$$bad" ]; then echo "check-symbols: symbols without a module prefix:"; echo "$$bad"; exit 1; fi; \
	bad=$$(nm -D --defined-only build/release/librspwalk.so | awk 'NF==3{print $$3}' \
	    | grep -Ev '^(sw_|rsp_|arch_|_init|_fini)' | sort -u); \
	if [ -n "$$bad" ]; then echo "check-symbols: the shared library exports:"; echo "$$bad"; exit 1; fi; \
	echo "check-symbols: every symbol has a module prefix"

FORMAT_SRCS = $(filter-out %.def,$(LIB_SRCS) $(CLI_SRCS) $(MPI_SRCS) $(DAP_SRCS) $(DOOR_SRCS) $(SERVER_SRCS) $(TOOL_SRCS) $(UNIT_SRCS) $(FUZZ_SRCS) \
              $(wildcard $(addsuffix /*.h,$(LIB_DIRS)) \
              cli/*.h mpi/*.h dap/*.h door/*.h server/*.h tests/tools/*.h tests/unit/*/*.h tests/warm/*.c) $(PUBLIC_HDRS) $(wildcard fixtures/src/*.c fixtures/src/kernel/*.c fixtures/src/cortexm/*.c))
format:
	$(Q)clang-format -i $(FORMAT_SRCS)
format-check:
	$(Q)clang-format --dry-run -Werror $(FORMAT_SRCS) && echo "format-check: $(words $(FORMAT_SRCS)) files formatted"

# GNU installation directories; debian/rules passes LIBDIR=/usr/lib/<multiarch triplet>.
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# The soname given to build/release/librspwalk.so; the file is installed under its version.
SONAME := librspwalk.so.0
SOFILE := librspwalk.so.$(VERSION)

# rspwalk.pc: directories under the prefix as ${prefix}/..., Libs.private from LIBS.
install: all man
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/rspwalk \
	    $(DESTDIR)$(BINDIR)
	install -m 644 build/release/librspwalk.a $(DESTDIR)$(LIBDIR)/
	install -m 755 build/release/librspwalk.so $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/librspwalk.so
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/rspwalk/
	install -m 755 build/release/rspwalk $(DESTDIR)$(BINDIR)/
	install -m 755 build/release/rspwalkd $(DESTDIR)$(BINDIR)/
	install -m 755 build/release/rspwalk-mpi $(DESTDIR)$(BINDIR)/
	for p in $(MAN_PAGES); do install -d $(DESTDIR)$(MANDIR)/man$${p##*.} && \
	    install -m 644 $$p $(DESTDIR)$(MANDIR)/man$${p##*.}/ || exit 1; done
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBS@|$(LIBS)|g' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g' \
	    rspwalk.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/rspwalk.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/librspwalk.a $(DESTDIR)$(LIBDIR)/librspwalk.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SOFILE) $(DESTDIR)$(BINDIR)/rspwalk \
	    $(DESTDIR)$(BINDIR)/rspwalkd $(DESTDIR)$(BINDIR)/rspwalk-mpi \
	    $(DESTDIR)$(PKGCONFIGDIR)/rspwalk.pc
	for p in $(notdir $(MAN_PAGES)); do rm -f $(DESTDIR)$(MANDIR)/man$${p##*.}/$$p; done
	rm -rf $(DESTDIR)$(INCLUDEDIR)/rspwalk

demo: deps
	$(Q)$(MAKE) --no-print-directory all fixtures
	$(Q)scripts/demo

bench: all fixtures build/release/warm_drive
	$(Q)scripts/bench

# docs/comparison.md: the integration matrix (every run-*.sh that runs lib.sh's matrices;
# run-all runs run-qemu.sh as one job a row of qemu.tab) with fresh records, then the table
# generated from them.  Only this target writes docs/; check-integration leaves its records
# in build/integration/records.  Fails, after writing the table, when a case failed.
COMPARISON_SCRIPTS = $(notdir $(shell grep -l 'it_run_[a-z_]*matrix' tests/integration/run-*.sh))
comparison: build/release/rspwalk fixtures
	$(Q)rm -rf build/integration/records
	$(Q)IT_RECORD_DIR=$(CURDIR)/build/integration/records tests/integration/run-all \
	    $(COMPARISON_SCRIPTS); rc=$$?; \
	scripts/comparison build/integration/records >docs/comparison.md.tmp && \
	mv docs/comparison.md.tmp docs/comparison.md && exit $$rc

clean:
	rm -rf build

help:
	@echo "rspwalk make targets:"
	@echo "  all                library (build/release/librspwalk.a, .so), rspwalk, rspwalkd, rspwalk-mpi"
	@echo "  demo               install what is missing, build, walk a fixture under gdbserver"
	@echo "  check              everything CI runs (.ci/run): the targets below, in order"
	@echo "  format-check       clang-format --dry-run over every source"
	@echo "  check-headers      each public header compiles on its own"
	@echo "  check-symbols      every exported symbol has a module prefix"
	@echo "  check-layers       includes and calls follow scripts/layers.txt; no circle of files"
	@echo "  check-unit         cmocka unit tests, release build"
	@echo "  check-asan         the same unit tests under ASan+UBSan"
	@echo "  check-tsan         8 walkers in 8 threads over one module cache, under TSan"
	@echo "  check-fuzz         each libFuzzer target for FUZZ_SECONDS (3)"
	@echo "  check-hostile      the ASan CLI and rspwalkd against scripted misbehaving stubs (tests/hostile/)"
	@echo "  check-integration  walks under real gdbserver against gdb-multiarch's backtrace"
	@echo "  check-server-load  rspwalkd under load (ASan, valgrind), stubs killed meanwhile"
	@echo "  check-docs         docs/examples built and run against gdbserver"
	@echo "  check-valgrind     the CLI under valgrind: no errors, no leaks"
	@echo "  check-server       rspwalkd: hostile HTTP clients, valgrind, docs/openapi.json"
	@echo "  check-browser      rspwalkd's web page in headless chromium; screenshot in build/test-artifacts"
	@echo "  check-man          rspwalk(1)'s and rspwalkd(8)'s options are --help's and the getopt"
	@echo "                     table's; no groff warnings"
	@echo "  check-package      Debian packages built from a copy in build/package, lintian, contents, use"
	@echo "  fuzz               each libFuzzer target for FUZZ_RUNS (1e7) or FUZZ_LONG s (14400), docs/fuzz.md"
	@echo "  fixtures           fixture programs under build/fixtures/<arch>/"
	@echo "  bench              timings and round trips, written to docs/bench.md (scripts/bench merge:"
	@echo "                     rspwalk-mpi's merge section alone)"
	@echo "  comparison         the integration matrix, written to docs/comparison.md"
	@echo "  man                build/release/man/rspwalk.1 and rspwalkd.8, from --help and man/*.h2m"
	@echo "  install            library, headers, pkg-config file, CLI, server, man pages, in PREFIX=$(PREFIX)"
	@echo "                     (also BINDIR, LIBDIR, INCLUDEDIR, MANDIR; DESTDIR for staging)"
	@echo "  uninstall          remove what install installed"
	@echo "  format             clang-format -i over every source"
	@echo "  clean              remove build/"
	@echo "Variables: V=1 shows commands; WERROR= to build without -Werror."

# ---- man pages and Debian packages ----------------------------------------
.PHONY: man check-man check-package

# A page is help2man's reading of its program's --help plus man/<page>.h2m (the sections
# --help has not), so each option is described once, in the program's usage text.
MAN_PAGES := build/release/man/rspwalk.1 build/release/man/rspwalkd.8 build/release/man/rspwalk-mpi.1
build/release/man/rspwalk.1: build/release/rspwalk
build/release/man/rspwalkd.8: build/release/rspwalkd
build/release/man/rspwalk-mpi.1: build/release/rspwalk-mpi
$(MAN_PAGES): build/release/man/%: man/%.h2m
	@mkdir -p $(@D)
	@command -v help2man >/dev/null || { echo "make man: help2man is missing (scripts/deps)"; exit 1; }
	$(if $(Q),@echo "  MAN $@")
	$(Q)help2man --section=$(subst .,,$(suffix $*)) -i $< -o $@.tmp build/release/$(basename $*) && \
	    mv $@.tmp $@
man: $(MAN_PAGES)

check-man: $(MAN_PAGES)
	$(Q)scripts/check-man build/release/rspwalk build/release/man/rspwalk.1 $(CLI_SRCS)
	$(Q)scripts/check-man build/release/rspwalkd build/release/man/rspwalkd.8 server/main.c
	$(Q)scripts/check-man build/release/rspwalk-mpi build/release/man/rspwalk-mpi.1 mpi/main.c

# The source package and dpkg-buildpackage -b from a copy of the tree at build/package/src,
# so the packages land in build/package; then lintian, their contents, and a program built
# against them.
check-package:
	$(Q)scripts/check-package

# The libraries rspwalk opens with dlopen, which dpkg-shlibdeps cannot see (debian/rules).
DLOPEN_SONAMES = $(CAPSTONE_SONAME) $(LIBDWARF_SONAME) $(LIBDW_SONAME)
# `make -s print-VERSION`: a variable's value, for debian/rules and scripts.
print-%:
	@echo '$($*)'
