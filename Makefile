# restack - one non-recursive Makefile.  ./configure writes config.mak;
# put your own overrides in config.mak.local.
#
#   make              build ./restack
#   make demo         record a small workload and convert it
#   make check        build and run the whole test suite
#   make check-asan   the suite under AddressSanitizer + UBSan
#   make check-tsan   the worker-thread and debuginfod tests under ThreadSanitizer
#   make fuzz         build the libFuzzer targets (clang)
#   make bench        benchmarks against perf script
#   make install      restack, its man page and bash completion under
#                     $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall
#
# V=1 shows commands; DEVELOPER=1 adds -Werror; SANITIZE=address,undefined.

-include config.mak
-include config.mak.local

Q = $(if $(V),,@)
BUILD ?= build
CC ?= cc
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
       -Wmissing-prototypes -Wvla -Wpointer-arith -Wwrite-strings \
       -Wundef -Wimplicit-fallthrough -Wno-missing-field-initializers
WARN += $(if $(DEVELOPER),-Werror)
SAN_FLAGS = $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all)
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -I. -I$(BUILD) $(WARN) $(DEP_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)
LIBS = $(DEP_LIBS)

COMMON_SRC = common/err.c common/mem.c common/strbuf.c common/input.c \
	common/hashmap.c common/arena.c common/stack.c common/dynlib.c \
	common/strtab.c common/regfile.c common/sigclean.c \
	common/sfilter.c common/readahead.c
FORMATS_SRC = formats/perfdata_read.c formats/perfdata_sample.c \
	formats/perfdata_feature.c formats/perfdata_order.c \
	formats/perfdata_names.c formats/perfdata_mapper.c formats/perfdata_windows.c formats/perfdata_visit.c \
	formats/perfdata_dump.c formats/perfdata_tp.c \
	formats/folded.c \
	formats/script.c formats/source.c formats/perfdata_write.c \
	formats/syscap_write.c formats/syscap_read.c formats/syscap_order.c \
	formats/perfdata_synth.c formats/event_copy.c \
	formats/perfdata_write_meta.c \
	formats/fdout.c formats/pbuf.c formats/pprof.c formats/textesc.c \
	formats/svg.c formats/speedscope.c formats/firefox.c \
	formats/firefox_json.c \
	formats/gzpar.c \
	formats/tracepoint.c formats/pbufdec.c formats/profile.c \
	formats/profile_pprof.c formats/profile_chrome.c
UNWIND_SRC = unwind/regs.c unwind/module.c unwind/cfi.c unwind/symtab.c unwind/symtree.c unwind/ksyms.c unwind/a2l.c unwind/a2l_index.c unwind/a2lstate.c \
	unwind/symbolize.c unwind/aspace.c unwind/unwind.c unwind/resolve.c unwind/stitch.c \
	unwind/jit.c unwind/symbundle.c unwind/x86insn.c unwind/a64insn.c unwind/apk.c unwind/ehhdr.c unwind/ehframe.c unwind/pool.c unwind/shards.c unwind/dwimage.c unwind/dwcache.c \
	unwind/locate.c unwind/dbgd.c unwind/perfarchive.c unwind/modinfo.c \
	unwind/gopclntab.c unwind/warmup.c unwind/modload.c
CMD_SRC = cmd/main.c cmd/info.c cmd/dump.c cmd/util.c cmd/run.c cmd/run_auto.c cmd/run_held.c cmd/run_shard.c cmd/run_warm.c \
	cmd/lookup.c cmd/outfile.c \
	cmd/convert.c cmd/offcpu.c cmd/stats.c cmd/symbolize.c cmd/report.c \
	cmd/profin.c cmd/merge.c cmd/diff.c

LIB_SRC = $(COMMON_SRC) $(FORMATS_SRC) $(UNWIND_SRC)
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ = $(CMD_SRC:%.c=$(BUILD)/%.o)
# The fuzz targets and their replays link the commands, not main().
FUZZ_CMD_SRC = $(filter-out cmd/main.c,$(CMD_SRC))
FUZZ_CMD_OBJ = $(FUZZ_CMD_SRC:%.c=$(BUILD)/%.o)
FUZZ_DEFS = -DRESTACK_TESTDATA='"$(CURDIR)/testdata"'

UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
REPLAY_BIN = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/replay_%)

PROG = restack

.PHONY: all deps test-deps demo check check-asan check-tsan check-run fuzz \
	bench clean install uninstall \
	check-includes
.DEFAULT_GOAL := all

all: $(PROG)

deps:
	$(Q)scripts/deps.sh build

test-deps:
	$(Q)scripts/deps.sh test

config.mak: configure
	$(Q)scripts/deps.sh build
	$(Q)./configure

$(BUILD)/%.o: %.c config.mak
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

ifeq ($(BUILD),build)
$(PROG): $(LIB_OBJ) $(CMD_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
else
$(PROG): $(BUILD)/$(PROG)
endif

$(BUILD)/$(PROG): $(LIB_OBJ) $(CMD_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) tests/harness.h config.mak
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJ) $(LIBS)

$(BUILD)/tests/replay_%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz_file.h $(LIB_OBJ) $(FUZZ_CMD_OBJ) config.mak
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(FUZZ_DEFS) $(ALL_LDFLAGS) -o $@ $< tests/fuzz/replay.c \
		$(LIB_OBJ) $(FUZZ_CMD_OBJ) $(LIBS)

# The sysprof output validator, linked against Debian's libsysprof-capture
# (libsysprof-4-dev), for the tests only; tests/cli/sysprof.sh skips its
# checks when it could not be built.
SYSCAP_PC := $(shell pkg-config --exists sysprof-capture-4 2>/dev/null && echo yes)
SYSCAP_VALIDATE = $(if $(SYSCAP_PC),$(BUILD)/tests/syscap_validate)

$(BUILD)/tests/syscap_validate: tests/tools/syscap_validate.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g \
		$(shell pkg-config --cflags sysprof-capture-4) -o $@ $< \
		$(shell pkg-config --libs sysprof-capture-4)

# sysprof 3.46's naming of a capture's frames from the symbols it carries
# (libsysprof-4), for tests/cli/sysprof_selfcontained.sh.
SYSPROF_PC := $(shell pkg-config --exists sysprof-4 2>/dev/null && echo yes)
SYSCAP_NAMES = $(if $(SYSPROF_PC),$(BUILD)/tests/syscap_names)

$(BUILD)/tests/syscap_names: tests/tools/syscap_names.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -g \
		$(shell pkg-config --cflags sysprof-4) -o $@ $< \
		$(shell pkg-config --libs sysprof-4)

# The test programs profiled by the tests (tests/progs/*.c).
PROGS_SRC = $(wildcard tests/progs/*.c)

check-run: $(BUILD)/$(PROG) $(UNIT_BIN) $(REPLAY_BIN) $(SYSCAP_VALIDATE) \
		$(SYSCAP_NAMES)
	$(Q)BUILD=$(BUILD) RESTACK=$(BUILD)/$(PROG) tests/run.sh

check: test-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory check-includes
	$(Q)$(MAKE) --no-print-directory check-run

check-asan: test-deps
	$(Q)$(MAKE) --no-print-directory config.mak
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan \
		SANITIZE=address,undefined CFLAGS="-O1 -g" check-run

# The tests that run worker threads and module loaders, and the debuginfod
# lookups (helper processes, a poll loop, signals), under ThreadSanitizer
# (gcc's).
check-tsan: test-deps
	$(Q)$(MAKE) --no-print-directory config.mak
	$(Q)$(MAKE) --no-print-directory BUILD=build-tsan SANITIZE=thread \
		CFLAGS="-O1 -g" build-tsan/$(PROG) build-tsan/tests/test_dbgd \
		build-tsan/tests/test_shards build-tsan/tests/test_modload \
		build-tsan/tests/test_gzpar
	$(Q)BUILD=build-tsan RESTACK=build-tsan/$(PROG) \
		TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		tests/run.sh cli/jobs test_dbgd test_shards cli/locate \
		test_modload cli/stream_modload test_gzpar cli/firstrun

# Includes flow one way: common <- formats <- unwind <- cmd.
check-includes:
	$(Q)! grep -n '#include "\(formats\|unwind\|cmd\)/' common/*.[ch] || { echo "common/ includes a later stage" >&2; exit 1; }
	$(Q)! grep -n '#include "\(unwind\|cmd\)/' formats/*.[ch] || { echo "formats/ includes a later stage" >&2; exit 1; }
	$(Q)! grep -n '#include "cmd/' unwind/*.[ch] 2>/dev/null || { echo "unwind/ includes cmd/" >&2; exit 1; }

FUZZ_CC = clang
fuzz: config.mak
	@mkdir -p $(BUILD)/fuzz
	$(Q)for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); \
		$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -I. -I$(BUILD) -g -O1 $(FUZZ_DEFS) \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(DEP_CFLAGS) \
			-o $(BUILD)/fuzz/$$n $$f $(LIB_SRC) $(FUZZ_CMD_SRC) $(LIBS) || exit 1; \
		echo "  built $(BUILD)/fuzz/$$n"; \
	done

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench:
	$(Q)scripts/deps.sh bench || scripts/deps.sh test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench.sh

# make install [PREFIX=/usr/local] [DESTDIR=]: the binary, the man page and
# the bash completion.  INSTALL_PROG names the binary to install (default
# ./restack, built first if needed); a path that is no target here (an
# absolute one) is installed as it is, nothing is built.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL ?= install
INSTALL_PROG ?= $(PROG)

install: $(INSTALL_PROG) docs/restack.1 scripts/completion.bash
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(INSTALL_PROG) $(DESTDIR)$(BINDIR)/restack
	$(INSTALL) -m 644 docs/restack.1 $(DESTDIR)$(MANDIR)/man1/restack.1
	$(INSTALL) -m 644 scripts/completion.bash \
		$(DESTDIR)$(BASHCOMPDIR)/restack

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/restack $(DESTDIR)$(MANDIR)/man1/restack.1 \
		$(DESTDIR)$(BASHCOMPDIR)/restack

clean:
	rm -rf build build-asan build-tsan $(PROG)

distclean: clean
	rm -f config.mak config.h

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d)
