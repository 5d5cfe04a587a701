# threadwatch: build, install, run and test with plain GNU make and pkg-config.
#
# Each program's sources are listed below (as chrony lists OBJS and
# CLI_OBJS). Everything is built under $(B), removed by `make clean`:
#   build/threadwatchd      the daemon: DAEMON_SRCS + libtw.a
#   build/threadwatch       the CLI: CLI_SRCS + libtw.a (no SQLite,
#                           libmicrohttpd or libsystemd)
#   build/probes/NAME       one executable per probe: probes/NAME.c +
#                           libprobe.a + libtw.a
#   build/libtw.a           lib/: the code every program shares
#   build/libtwd.a          the daemon's sources but its main(), for the tests
#   build/libprobe.a        probes/lib/: the probe protocol writer and analysis
#   build/tests/            unit tests, test tools and fuzz replayers

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
PKGLIBDIR  ?= $(PREFIX)/lib/threadwatch
PROBEDIR   ?= $(PKGLIBDIR)/probes
PROBESDDIR ?= $(PKGLIBDIR)/probes.d
DATADIR    ?= $(PREFIX)/share/threadwatch
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/threadwatch
ifeq ($(PREFIX),/usr)
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system
else
SYSCONFDIR ?= $(PREFIX)/etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
endif
DYGRAPHS_DIR ?= /usr/share/javascript/dygraphs
VERSION    := 0.1.0

CC         ?= cc
BUILD_CC   ?= cc
SANITIZE   ?= 0
# DEB_HOST_ARCH=arm64 (or any Debian architecture but this machine's)
# cross-builds with Debian's toolchain (aarch64-linux-gnu-gcc) and the
# multiarch -dev packages, into a build directory of its own (build-arm64).
DEB_BUILD_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_HOST_ARCH  ?= $(DEB_BUILD_ARCH)
CROSS          := $(filter-out $(DEB_BUILD_ARCH),$(DEB_HOST_ARCH))
ifneq ($(CROSS),)
DEB_HOST_GNU_TYPE ?= $(shell dpkg-architecture -a$(CROSS) -qDEB_HOST_GNU_TYPE 2>/dev/null)
ifeq ($(origin CC),default)
CC         := $(DEB_HOST_GNU_TYPE)-gcc
endif
PKG_CONFIG ?= $(DEB_HOST_GNU_TYPE)-pkg-config
endif
# A sanitizer or cross build keeps to a build directory of its own.
ifeq ($(SANITIZE),1)
B          := build-san
else ifneq ($(CROSS),)
B          := build-$(CROSS)
else
B          := build
endif
PKG_CONFIG ?= pkg-config

# ntpd's warning set, plus -Werror.
WARN := -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
	-Wmissing-declarations -Wshadow -Wpointer-arith -Wcast-qual \
	-Wsign-compare -Wformat=2 -Wno-format-nonliteral

CFLAGS   ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -Ilib -I$(B) \
	-DTW_VERSION='"$(VERSION)"' -DTW_PROBEDIR='"$(PROBEDIR)"' \
	-DTW_PROBESDDIR='"$(PROBESDDIR)"' -DTW_SYSCONFDIR='"$(SYSCONFDIR)"' \
	-DTW_DYGRAPHS_DIR='"$(DYGRAPHS_DIR)"'
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -pthread
ifeq ($(SANITIZE),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
# The tests preload shims ahead of the ASan runtime; UBSan names its finding.
export ASAN_OPTIONS ?= verify_asan_link_order=0:detect_leaks=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
endif

# The libraries each program links (pkg-config names). LIBS_ALL is what
# the tests link, since they exercise every module.
LIBS_LIB    := jansson zlib
LIBS_DAEMON := libmicrohttpd gnutls sqlite3 libsystemd jansson zlib
LIBS_CLI    := jansson zlib libcurl yaml-0.1
LIBS_ALL    := libmicrohttpd gnutls sqlite3 libsystemd jansson libcurl zlib yaml-0.1
pkg_cflags   = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pkg_libs     = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)
PKG_CFLAGS   = $(call pkg_cflags,$(LIBS_ALL))
PKG_LIBS     = $(call pkg_libs,$(LIBS_ALL))
PROBE_LIBS   = $(call pkg_libs,$(LIBS_LIB)) -lm -pthread

# Debian packages each entry point needs; `make run` and `make test`
# install them when run as root and otherwise name them.
PKGS_BUILD := gcc make pkg-config libmicrohttpd-dev libgnutls28-dev libsqlite3-dev libsystemd-dev \
	libjansson-dev libcurl4-gnutls-dev libjs-dygraphs zlib1g-dev libyaml-dev
PKGS_TEST  := $(PKGS_BUILD) libcmocka-dev sqlite3 curl clang libclang-rt-14-dev \
	systemd prometheus chromium wrk valgrind procps psmisc \
	iproute2 util-linux openssl python3 bc jq debhelper dpkg-dev lintian \
	prometheus-node-exporter systemd-container debootstrap
PKGS_RUN   := $(PKGS_BUILD)
# `make deb`: debian/control's Build-Depends (versions dropped; the virtual
# debhelper-compat comes with debhelper) and dpkg-buildpackage's package.
PKGS_DEB    = dpkg-dev $(shell sed -n '/^Build-Depends:/,/^[^ ]/p' debian/control | \
	sed '1s/^Build-Depends://;/^[^ ]/d' | tr ',' '\n' | sed 's/(.*)//;s/|.*//' | \
	tr -d ' \t' | sed 's/^debhelper-compat$$/debhelper/' | grep .)
# A cross `make deb`: the cross toolchain, the host architecture's
# pkg-config and its -dev packages: every Build-Depends but the build
# machine's tools, as :ARCH (zlib1g-dev too, whose name has no lib).
PKGS_DEB_TOOLS := dpkg-dev debhelper pkg-config
PKGS_DEB_CROSS = dpkg-dev debhelper crossbuild-essential-$(CROSS) pkgconf:$(CROSS) \
	$(addsuffix :$(CROSS),$(filter-out $(PKGS_DEB_TOOLS),$(PKGS_DEB)))
# The arm64 tier (tests/regress/85-arm64.sh): the same, cmocka for the unit
# tests, and qemu-user to run them.
PKGS_CROSS_TEST = $(PKGS_DEB_CROSS) libcmocka-dev:$(CROSS) qemu-user-static file
# Commands that may come from elsewhere than a Debian package (a machine
# may ship Node.js with its own npm): COMMAND=PACKAGE, installed only when
# the command is missing.
CMDS_TEST  := node=nodejs npm=npm

# lib/: shared by every program; links jansson, zlib and libm only.
LIB_SRCS    := lib/xmalloc.c lib/errbuf.c lib/gzip.c lib/jnum.c lib/file_read.c lib/jpath.c lib/clock.c lib/stats.c lib/sysinfo.c lib/units.c \
	lib/opt.c lib/runner.c lib/runner_env.c lib/escape.c lib/protocol.c lib/fingerprint.c lib/fingerprint_virt.c lib/fingerprint_caps.c lib/recommend.c lib/recommend_parse.c lib/recommend_reasons.c lib/recommend_formula.c lib/recommend_text.c lib/recommend_inputs.c lib/recommend_failed.c lib/recommend_arch.c lib/recommend_create.c lib/recommend_costs.c lib/detect.c \
	lib/catalog.c lib/detectsim.c lib/placement.c lib/failure.c lib/fingerprint_change.c \
	lib/contention.c lib/bpfcall.c lib/observe.c lib/observe_bpf.c lib/observe_carry.c lib/observe_cn.c lib/observe_cgroup.c lib/observe_proc.c \
	lib/observe_read.c lib/observe_table.c lib/observe_stacks.c lib/observe_group.c \
	lib/observe_mech.c lib/observe_price.c lib/observe_text.c lib/observe_ts.c \
	lib/catalog_workloads.c lib/workload_key.c
# probes/lib/: what only the probes use.
PLIB_SRCS   := probes/lib/probe.c probes/lib/analysis.c \
	probes/lib/pmu.c probes/lib/fsseg.c probes/lib/futexw.c probes/lib/isolate.c \
	probes/lib/map32bit.c probes/lib/topology.c probes/lib/joinq.c
PROBE_NAMES := ctxsw threads map32 handoff stackmem createscale
# A probe of more than one file lists its sources (the others are one file).
CTXSW_SRCS  := probes/ctxsw.c probes/ctxsw_ring.c
# daemon/: threadwatchd. DAEMON_MAIN holds main(); the rest also goes
# into libtwd.a for the unit tests.
DAEMON_MAIN := daemon/threadwatchd.c
DAEMON_SRCS := daemon/config.c daemon/config_types.c daemon/scheduler.c daemon/sched_cycle.c daemon/sched_probes.c daemon/cycle_status.c daemon/health.c daemon/headroom.c daemon/detection.c \
	daemon/store.c daemon/store_write.c daemon/store_read.c daemon/store_events.c \
	daemon/store_retention.c daemon/http.c daemon/http_framing.c daemon/api.c daemon/api_format.c daemon/api_parse.c daemon/metrics.c \
	daemon/metrics_host_labels.c daemon/http_respcache.c daemon/http_asset.c daemon/http_asset_cache.c daemon/builtin_find.c daemon/log.c daemon/systemd.c \
	daemon/sched_guard.c daemon/retention_clock.c daemon/http_host.c daemon/http_conns.c \
	daemon/metrics_procself.c daemon/http_auth.c daemon/secret_file.c daemon/tls.c daemon/tls_creds.c \
	daemon/atomic_file.c daemon/netns.c daemon/observer_link.c daemon/store_workloads.c \
	daemon/workload_keep.c daemon/api_workloads.c
# daemon/observerd.c: threadwatch-observer, the privileged observer that
# hands threadwatchd its windows (lib/observe*).
OBSERVER_SRCS := daemon/observerd.c
# cli/: threadwatch.
CLI_SRCS    := cli/threadwatch.c cli/cli_run.c cli/cli_recommend.c cli/cli_workloads.c cli/cli_fleet.c \
	cli/cli_detect_sim.c cli/fleet_targets.c cli/fleet_sd_json.c cli/fleet_sd_yaml.c \
	cli/fleet_ask.c cli/fleet_conn.c cli/fleet_report.c cli/fleet_text.c cli/fleet_cohort.c \
	cli/fleet_workloads.c cli/cli_status.c

LIB_OBJS    := $(patsubst %.c,$(B)/%.o,$(LIB_SRCS))
PLIB_OBJS   := $(patsubst %.c,$(B)/%.o,$(PLIB_SRCS))
DAEMON_OBJS := $(patsubst %.c,$(B)/%.o,$(DAEMON_SRCS)) $(B)/daemon/builtin.o
CLI_OBJS    := $(patsubst %.c,$(B)/%.o,$(CLI_SRCS))
PROBES      := $(addprefix $(B)/probes/,$(PROBE_NAMES))
# The probes' objects are kept: made only through the pattern rule, make
# would delete them as intermediates, and the next `make` would relink.
PROBE_OBJS  := $(patsubst %,$(B)/probes/%.o,$(PROBE_NAMES)) $(patsubst %.c,$(B)/%.o,$(CTXSW_SRCS))
.SECONDARY: $(PROBE_OBJS)
SHIM_SRCS  := $(wildcard tests/shim/*.c)
# Test doubles of x86-64 mechanisms (MAP_32BIT, segment descriptors) are
# built only for an x86-64 target; `$(CC) -dumpmachine` names the target.
X86_SHIMS  := ignore_map32bit no_segments seg_not_present tls_refused no_fsgsbase
ifeq ($(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
SHIM_SRCS  := $(filter-out $(patsubst %,tests/shim/%.c,$(X86_SHIMS)),$(SHIM_SRCS))
endif
SHIMS      := $(patsubst tests/shim/%.c,$(B)/tests/%.so,$(SHIM_SRCS))
TOOL_SRCS  := $(wildcard tests/tools/*.c)
TOOLS      := $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRCS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNITS      := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/fuzz/%.c,$(B)/tests/replay_%,$(FUZZ_SRCS))
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRCS))
BUILTIN_IN := $(sort $(wildcard sql/*.sql) $(wildcard web/*.html web/*.js web/*.css web/*.svg web/*.json))

BINS := $(B)/threadwatchd $(B)/threadwatch $(B)/threadwatch-observer

.PHONY: all clean install run test deps-build deps-test deps-run deps-deb deps-cross add-arch check-unit units \
	check-regress check-sanitize check-fuzz check-systemd check-cross fuzz soak format check-format bench deb docs

all: $(BINS) $(PROBES) $(SHIMS) $(TOOLS)

$(B)/lib/%.o: lib/%.c | $(B)/lib
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(call pkg_cflags,$(LIBS_LIB)) -MMD -MP -c -o $@ $<

$(B)/daemon/%.o: daemon/%.c | $(B)/daemon
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(call pkg_cflags,$(LIBS_DAEMON)) -MMD -MP -c -o $@ $<

$(B)/cli/%.o: cli/%.c | $(B)/cli
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(call pkg_cflags,$(LIBS_CLI)) -MMD -MP -c -o $@ $<

$(B)/probes/lib/%.o: probes/lib/%.c | $(B)/probes/lib
	$(CC) $(CPPFLAGS) -Iprobes/lib $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/probes/%.o: probes/%.c | $(B)/probes/lib
	$(CC) $(CPPFLAGS) -Iprobes/lib $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/probes/%: $(B)/probes/%.o $(B)/libprobe.a $(B)/libtw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(PROBE_LIBS)

$(B)/probes/ctxsw: $(patsubst %.c,$(B)/%.o,$(CTXSW_SRCS)) $(B)/libprobe.a $(B)/libtw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(PROBE_LIBS)

$(B)/libtw.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/libtwd.a: $(DAEMON_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/libprobe.a: $(PLIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/threadwatchd: $(B)/daemon/threadwatchd.o $(DAEMON_OBJS) $(B)/libtw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(LIBS_DAEMON)) -lm

$(B)/threadwatch-observer: $(patsubst %.c,$(B)/%.o,$(OBSERVER_SRCS)) $(B)/libtw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(LIBS_LIB)) -lm

$(B)/threadwatch: $(CLI_OBJS) $(B)/libtw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(LIBS_CLI)) -lm

# One generator embeds the schema and the web files (see daemon/tools/mkbuiltin.c).
# It runs on the build machine, so a cross build compiles it with BUILD_CC.
$(B)/mkbuiltin: daemon/tools/mkbuiltin.c | $(B)/daemon
	$(BUILD_CC) -std=gnu11 $(WARN) -O2 -o $@ $<

$(B)/daemon/builtin.c: $(B)/mkbuiltin $(BUILTIN_IN) | $(B)/daemon
	$(B)/mkbuiltin $(BUILTIN_IN) > $@.tmp && mv $@.tmp $@

$(B)/daemon/builtin.o: $(B)/daemon/builtin.c
	$(CC) $(CPPFLAGS) -Idaemon $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/%.so: tests/shim/%.c | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -ldl

# Unit tests and tools link every library: daemon, probe and shared code.
TEST_LIBS := $(B)/libtwd.a $(B)/libprobe.a $(B)/libtw.a
TEST_CPPFLAGS = $(CPPFLAGS) -Idaemon -Icli -Iprobes/lib
$(B)/tests/test_%: tests/unit/test_%.c $(TEST_LIBS) | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(PKG_LIBS) $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) -lm

# test_fleet_sd also links the CLI's --file readers (before the libraries
# they call).
FLEET_SD_OBJS := $(B)/cli/fleet_targets.o $(B)/cli/fleet_sd_json.o $(B)/cli/fleet_sd_yaml.o
$(B)/tests/test_fleet_sd: tests/unit/test_fleet_sd.c $(FLEET_SD_OBJS) $(TEST_LIBS) | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(PKG_LIBS) $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) -lm

# Test tools (seeders, receivers) link the shared code but not cmocka.
$(B)/tests/%: tests/tools/%.c $(TEST_LIBS) | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(B)/tests/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(TEST_LIBS) | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# The API harness links the request parser alone (and the pure asset path
# check): no store, SQLite, jansson or HTTP library.
$(B)/tests/replay_fuzz_api: tests/fuzz/fuzz_api.c tests/fuzz/replay.c $(B)/daemon/api_parse.o \
		$(B)/daemon/http_asset.o $(B)/libtw.a | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ -lz -lm

# The file_sd harness links the CLI's --file readers.
$(B)/tests/replay_fuzz_fleet_sd: tests/fuzz/fuzz_fleet_sd.c tests/fuzz/replay.c $(FLEET_SD_OBJS) \
		$(B)/libtw.a | $(B)/tests
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(B)/lib $(B)/daemon $(B)/cli $(B)/probes/lib $(B)/tests $(B)/fuzz:
	mkdir -p $@

-include $(wildcard $(B)/lib/*.d $(B)/daemon/*.d $(B)/cli/*.d $(B)/probes/*.d $(B)/probes/lib/*.d)

# --- packages -------------------------------------------------------------
# Installs what is missing when root, otherwise names the exact apt-get line.
define need_pkgs
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; done; \
	for c in $(2); do command -v $${c%%=*} >/dev/null 2>&1 || missing="$$missing $${c#*=}"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
		else \
			echo "missing Debian packages; run as root:"; \
			echo "  apt-get install -y$$missing"; exit 1; \
		fi; \
	fi
endef

deps-build:
	$(call need_pkgs,$(PKGS_BUILD))
deps-run:
	$(call need_pkgs,$(PKGS_RUN))
deps-test:
	$(call need_pkgs,$(PKGS_TEST),$(CMDS_TEST))
ifeq ($(CROSS),)
deps-deb:
	$(call need_pkgs,$(PKGS_DEB))
else
deps-deb: add-arch
	$(call need_pkgs,$(PKGS_DEB_CROSS))
deps-cross: add-arch
	$(call need_pkgs,$(PKGS_CROSS_TEST))
add-arch:
	@if [ "$$(id -u)" = 0 ] && ! dpkg --print-foreign-architectures | grep -qx '$(CROSS)'; then \
		echo "dpkg --add-architecture $(CROSS)"; dpkg --add-architecture $(CROSS); fi
endif

# The lists above as NAME=VALUE lines, the cross ones for arm64, for
# tests/tools/check_packages.py (tests/regress/08-packages.sh).
print-packages:
	@printf '%s\n' 'PKGS_BUILD=$(PKGS_BUILD)' 'PKGS_TEST=$(PKGS_TEST)' 'PKGS_DEB=$(PKGS_DEB)' \
		'CMDS_TEST=$(CMDS_TEST)' 'LIBS_ALL=$(LIBS_ALL)'
	@$(MAKE) -s --no-print-directory DEB_HOST_ARCH=arm64 print-cross-packages
print-cross-packages:
	@printf '%s\n' 'CROSS_ARCH=$(CROSS)' 'PKGS_DEB_CROSS=$(PKGS_DEB_CROSS)' 'PKGS_CROSS_TEST=$(PKGS_CROSS_TEST)'

# --- the two commands -----------------------------------------------------
RUN_ARGS ?=
# One machine, not a fleet: the first cycle now, without the splay.
run: deps-run
	$(MAKE) all
	mkdir -p var
	exec $(B)/threadwatchd --state-dir var --splay 0 $(RUN_ARGS)

# The first build runs on every CPU; the sanitizer tier's programs are
# built beside the regress scripts, at nice 19, once those that run alone
# have ended (its unit tests are not: a longer build beside them kept the
# CPUs busy enough for the createscale probe to skip, and 55-daemon-api's
# cycle to end partial).
TEST_JOBS := $(shell nproc 2>/dev/null || echo 2)
test: deps-test
	$(MAKE) -j$(TEST_JOBS) all units
	$(MAKE) check-unit
ifneq ($(SANITIZE),1)
	$(MAKE) check-regress REGRESS_BESIDE="$(MAKE) -s -j2 B=$(SAN_B) SANITIZE=1 all"
else
	$(MAKE) check-regress
endif
	$(MAKE) check-fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)
ifneq ($(SANITIZE),1)
	$(MAKE) check-sanitize
endif

# UNIT=NAME... runs only build/tests/test_NAME (make check-unit UNIT="store
# config"); REGRESS=TEXT... only the regress scripts whose name holds one of
# the words (make check-regress REGRESS=40-http). See tests/README.md.
UNIT ?=
REGRESS ?=
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(UNIT_SRCS))
UNIT_RUN := $(if $(strip $(UNIT)),$(patsubst %,$(B)/tests/test_%,$(filter $(UNIT_NAMES),$(UNIT))),$(UNITS))

# The unit tests, built and not run.
units: $(UNITS)

check-unit: $(UNIT_RUN)
	@for u in $(filter-out $(UNIT_NAMES),$(UNIT)); do \
		echo "no unit test tests/unit/test_$$u.c (there are: $(UNIT_NAMES))"; exit 2; done; \
	fail=0; for t in $(UNIT_RUN); do echo "== $$t"; $$t; rc=$$?; \
		[ $$rc = 77 ] && echo "-- SKIP $$t"; [ $$rc = 0 ] || [ $$rc = 77 ] || fail=1; \
	done; exit $$fail

check-regress: all
	@B=$(abspath $(B)) SRC=$(CURDIR) REGRESS_ONLY="$(or $(REGRESS),$(REGRESS_ONLY))" \
		tests/regress/run.sh

# The package under a real systemd: tests/regress/72-systemd.sh boots a
# Debian 12 container (systemd-nspawn; the root is cached in
# /var/tmp/threadwatch-nspawn-root) and installs the .deb there. Part of
# check-regress, so `make test` runs it when root; this target runs it alone.
check-systemd: all
	@B=$(abspath $(B)) SRC=$(CURDIR) REGRESS_ONLY=72-systemd tests/regress/run.sh

# The arm64 tier with every unit test under qemu (`make test` runs those
# whose code can differ by architecture): tests/regress/85-arm64.sh.
check-cross: all
	@B=$(abspath $(B)) SRC=$(CURDIR) REGRESS_ONLY=85-arm64 ARM_UNITS=all tests/regress/run.sh

# The unit and regress tiers again under ASan and UBSan, built in SAN_B.
# Left out there: the regress tests named in SANITIZE_SKIP (packaging, the
# package lists, the house rules, the container, the browser, the load
# test, valgrind, the guard's timing, the lint of published files, the
# detection simulation and the dashboard's gzip CPU bound measure, package
# or check files rather than run more code; 20-probes's v3.0 double ladders
# (the probes themselves run under the sanitizers in 10-cli-run's quick
# cycle and in 21 to 26); the honest status's full disk and read-only file (91-faults
# runs the store's failures under them), the retention clock, the splay,
# Prometheus, the cohorts and 59's kill loop mostly wait, on code the other
# scripts run under the sanitizers too; 76-fleet's many daemons, whose
# fleet client 97-fleet-hostile runs under them); the crash tests kill
# fewer times, 26-workloads watches a shorter window (WORKLOADS_WINDOW) and
# 28-workload-history leaves its browser part to the main tier (TW_NO_BROWSER).
SAN_B         ?= $(B)-san
SANITIZE_SKIP ?= 60-browser 83-http-host-browser 62-daemon-guard 70-deb 72-systemd 85-arm64 73-alerts 79-lint 71-prism 81-detect-sim \
	93-load 94-valgrind 76-fleet 69-daemon-clock-retention 59-daemon-crash 66-daemon-splay 75-prometheus 86-cohorts \
	08-packages 09-house 68-daemon-honest-status 41-http-dygraphs 20-probes
check-sanitize:
	$(MAKE) B=$(SAN_B) SANITIZE=1 all check-unit
	$(MAKE) B=$(SAN_B) SANITIZE=1 check-regress REGRESS_SKIP="$(SANITIZE_SKIP)" \
		TW_CRASH_KILLS=20 CRASH_KILLS=6 CRASH_CYCLES=20 FRAMING_FLOOD_SECONDS=5 WORKLOADS_WINDOW=6s \
		TW_NO_BROWSER=1

# Fuzzing: every build replays the seed corpus; clang with libFuzzer then runs
# each harness for FUZZ_SECONDS (TEST_FUZZ_SECONDS within `make test`, which
# must stay under 20 minutes; `make fuzz` runs each for 10 minutes).
FUZZ_SECONDS      ?= 20
TEST_FUZZ_SECONDS ?= 3
check-fuzz: $(FUZZ_REPLAY)
	@B=$(abspath $(B)) SRC=$(CURDIR) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# The long forms of the crash and load tests: many more kills and cycles,
# and 5 minutes of load, than `make test` has time for.
SOAK_KILLS ?= 1000
soak: all
	@B=$(abspath $(B)) SRC=$(CURDIR) REGRESS_ONLY="59-daemon-crash 90-crash 93-load 82-http-framing" \
		TW_CRASH_KILLS=$(SOAK_KILLS) CRASH_KILLS=$$(($(SOAK_KILLS) / 5)) CRASH_CYCLES=$(SOAK_KILLS) \
		LOAD_SECONDS=300 FRAMING_FLOOD_SECONDS=60 \
		tests/regress/run.sh

fuzz:
	@B=$(abspath $(B)) SRC=$(CURDIR) FUZZ_SECONDS=$${FUZZ_SECONDS:-600} tests/fuzz/run.sh

# Benchmarks against perf bench, stress-ng and nginx (not part of `make test`):
# writes bench/RESULTS.md; BENCH_* variables shorten it (see bench/run.sh).
# bench/pingpong.c is its second opinion on the handoff probe.
bench: all $(B)/bench-bin/pingpong
	@B=$(abspath $(B)) SRC=$(CURDIR) bench/run.sh

$(B)/bench-bin/pingpong: bench/pingpong.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $<

# etc/threadwatchd.conf and the KEYS section of threadwatchd.conf(5),
# regenerated from the daemon's key table.
docs: $(B)/threadwatchd
	python3 doc/gen-config-docs.py $(B)/threadwatchd $(CURDIR)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Formatting, and no project header included without a name taken from it
# (tests/tools/check_includes.py; 09-house runs it too).
check-format:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')
	python3 tests/tools/check_includes.py . $$(git ls-files 'lib/*.c' 'daemon/*.c' 'cli/*.c' \
		'probes/*.c' 'probes/lib/*.c')

# --- install --------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PROBEDIR) \
		$(DESTDIR)$(PROBESDDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/threadwatch $(DESTDIR)$(SYSCONFDIR)/threadwatch/threadwatchd.conf.d \
		$(DESTDIR)$(DOCDIR)
	install -m 0755 $(B)/threadwatch $(DESTDIR)$(BINDIR)/threadwatch
	install -m 0755 $(B)/threadwatchd $(DESTDIR)$(SBINDIR)/threadwatchd
	install -m 0755 $(B)/threadwatch-observer $(DESTDIR)$(PKGLIBDIR)/threadwatch-observer
	install -m 0755 $(PROBES) $(DESTDIR)$(PROBEDIR)/
	install -m 0644 sql/*.sql $(DESTDIR)$(DATADIR)/
	install -m 0644 contrib/prometheus/threadwatch.rules.yml contrib/remote-scrape.conf \
		contrib/grafana/threadwatch.json $(DESTDIR)$(DATADIR)/
	install -m 0644 probes/PROTOCOL.md README.md $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(DOCDIR)/doc
	install -m 0644 doc/*.md doc/*.png $(DESTDIR)$(DOCDIR)/doc/
	for m in doc/man/*.[0-9]; do [ -f "$$m" ] || continue; sec=$${m##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$sec; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$sec/; done
	if [ -f systemd/threadwatchd.service ]; then \
		sed 's|^ExecStart=/usr/sbin/|ExecStart=$(SBINDIR)/|' systemd/threadwatchd.service \
			>$(DESTDIR)$(UNITDIR)/threadwatchd.service && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/threadwatchd.service && \
		sed 's|^ExecStart=/usr/lib/threadwatch/|ExecStart=$(PKGLIBDIR)/|' \
			systemd/threadwatch-observer.service >$(DESTDIR)$(UNITDIR)/threadwatch-observer.service && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/threadwatch-observer.service && \
		install -m 0644 systemd/threadwatchd.socket $(DESTDIR)$(UNITDIR)/; fi
	if [ -f etc/threadwatchd.conf ]; then \
		install -m 0644 etc/threadwatchd.conf $(DESTDIR)$(SYSCONFDIR)/threadwatch/; fi

# The Debian package, built from a copy of the tree so that nothing is
# written outside $(B)/ (build-arm64/ for DEB_HOST_ARCH=arm64, which
# dpkg-buildpackage -a cross-builds).
deb: deps-deb
	rm -rf $(B)/deb && mkdir -p $(B)/deb/threadwatch-$(VERSION)
	tar --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./var --exclude=./tests/out \
		--exclude=./tests/browser/node_modules -cf - . \
		| tar -xf - -C $(B)/deb/threadwatch-$(VERSION)
	cd $(B)/deb/threadwatch-$(VERSION) && DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS-parallel=$$(nproc)}" \
		dpkg-buildpackage -b -us -uc $(if $(CROSS),-a$(CROSS))
	ls $(B)/deb/*.deb

clean:
	rm -rf $(B) tests/out
