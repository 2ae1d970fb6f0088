# drake - a kube-scheduler extender for gang-scheduled TFJobs.
# `make help` lists the targets. Sources are discovered per module folder, so
# a new .c file needs no edit here: *_test.c are cmocka unit tests, fuzz/*_fuzz.c
# libFuzzer targets, everything else goes into the drake binary.

.DEFAULT_GOAL := all
SHELL := /bin/bash

VARIANT ?= release
O := build/$(VARIANT)

MODULES := common extender kube gang migrate place sim kind tfjob pytorchjob reconciler
PKGS := libevent libevent_openssl jansson yajl libcurl openssl yaml-0.1 libnghttp2

CC ?= cc
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wpointer-arith -Wundef -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT := -O2 -g
SAN :=
ifeq ($(VARIANT),asan)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=address -fno-sanitize-recover=all
endif
ifeq ($(VARIANT),ubsan)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=undefined -fno-sanitize-recover=all
endif
# ASan (with LeakSanitizer) and UBSan in one build: what make check runs.
ifeq ($(VARIANT),san)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
endif
ifeq ($(VARIANT),fuzz)
CC := clang
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CPPFLAGS += -I. -D_GNU_SOURCE -DDRAKE_VERSION='"$(VERSION)"'
CFLAGS += -std=c11 $(OPT) $(SAN) $(WARN) $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(SAN)
LDLIBS += $(PKG_LIBS) -lm

LIB_SRC := $(filter-out %_test.c %_fuzz.c,$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
MAIN_OBJ := $(patsubst %.c,$(O)/%.o,$(filter-out %_test.c,$(wildcard cmd/*.c)))
# cmd/'s objects but main(), archived for cmd/'s own unit tests.
CMD_OBJ := $(filter-out $(O)/cmd/drake.o,$(MAIN_OBJ))
UNIT_SRC := $(foreach m,$(MODULES) cmd,$(wildcard $(m)/*_test.c)) $(wildcard tests/*_test.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(O)/%)
ITEST_SRC := $(wildcard tests/integration/*_test.c)
ITEST_BIN := $(ITEST_SRC:%.c=$(O)/%)
FUZZ_SRC := $(wildcard fuzz/*_fuzz.c)
FUZZ_BIN := $(FUZZ_SRC:%.c=build/fuzz/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:%.c=$(O)/%)
DRAKE := $(O)/drake

FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10

.PHONY: all test unit itest sanitize asan ubsan valgrind fuzz fuzz-smoke fuzz-build lint format check clean help \
	bench-extender bench-prioritize bench-memory bench-load

all: $(DRAKE) ## build build/release/drake

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# The objects that embed DRAKE_VERSION depend on a file holding it, rewritten
# only when `git describe` changes (a commit, a dirty tree), so `drake
# version` always says what the image tag and the version label say.
$(O)/version.txt: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(VERSION)' ] || echo '$(VERSION)' >$@
$(O)/cmd/drake.o $(O)/cmd/serve.o $(O)/extender/server.o: $(O)/version.txt

$(O)/libdrake.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(DRAKE): $(MAIN_OBJ) $(O)/libdrake.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/%_test: $(O)/%_test.o $(O)/libdrake.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# cmd/'s tests (the flag tables) take the objects they need from libcmd.a,
# the drake binary's objects but main(). A shorter stem than the rule above,
# so this one wins for them.
$(O)/libcmd.a: $(CMD_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(O)/cmd/%_test: $(O)/cmd/%_test.o $(O)/libcmd.a $(O)/libdrake.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Tests that count calls into the library (how often a pass decodes a
# TFJob, builds a world or a snapshot) through the linker's wrappers.
$(O)/reconciler/pass_world_test: LDFLAGS += -Wl,--wrap=job_decode
$(O)/reconciler/observed_test: LDFLAGS += -Wl,--wrap=rec_job_samples
$(O)/reconciler/reconciler_test: LDFLAGS += -Wl,--wrap=job_decode,--wrap=rec_admit_pass \
	-Wl,--wrap=pass_world_build,--wrap=admit_snapshot

$(O)/bench/%: $(O)/bench/%.o $(O)/libdrake.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: unit itest ## unit and integration tests

unit: $(UNIT_BIN) ## cmocka unit tests (fast), two programs at a time
	@TEST_JOBS=2 hack/run-tests.sh unit $(UNIT_BIN)

itest: $(DRAKE) $(ITEST_BIN) ## integration tests: the real binary over TLS on loopback, over HTTP/2 then HTTP/1.1
	@rc=0; DRAKE_BIN=$(abspath $(DRAKE)) hack/run-tests.sh integration $(ITEST_BIN) || rc=1; \
	DRAKE_BIN=$(abspath $(DRAKE)) DRAKE_TEST_HTTP=1.1 hack/run-tests.sh integration-http1 $(ITEST_BIN) || rc=1; \
	exit $$rc

sanitize: ## unit + integration tests in one build under AddressSanitizer (and LeakSanitizer) and UndefinedBehaviorSanitizer
	$(MAKE) --no-print-directory VARIANT=san test

asan: ## unit + integration tests under AddressSanitizer (and LeakSanitizer) alone
	$(MAKE) --no-print-directory VARIANT=asan test

ubsan: ## unit + integration tests under UndefinedBehaviorSanitizer alone
	$(MAKE) --no-print-directory VARIANT=ubsan test

valgrind: $(UNIT_BIN) ## unit tests under valgrind memcheck, two programs at a time
	@TEST_JOBS=2 RUN_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
		hack/run-tests.sh valgrind $(UNIT_BIN)

ifneq ($(VARIANT),fuzz)
# The fuzz library is built by a sub-make in its own variant; FORCE lets that
# sub-make decide whether anything changed, and targets relink when it did.
build/fuzz/libdrake.a: FORCE
	@$(MAKE) --no-print-directory VARIANT=fuzz build/fuzz/libdrake.a
endif

.PHONY: FORCE
FORCE:

build/fuzz/fuzz/%_fuzz: fuzz/%_fuzz.c build/fuzz/libdrake.a
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(PKG_CFLAGS) $< build/fuzz/libdrake.a -o $@ $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN) ## run every libFuzzer target for FUZZ_SECONDS (default 60) each
	@hack/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

fuzz-smoke: $(FUZZ_BIN) ## what make check runs: every target over its kept corpus, then FUZZ_SMOKE_SECONDS (10) of new inputs
	@hack/run-fuzz.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BIN)

lint: ## clang-format check, cppcheck, the purity rule for gang/, migrate/ and place/, common/ at the bottom
	@hack/lint.sh

format: ## rewrite sources with clang-format
	@clang-format -i $$(git ls-files '*.c' '*.h')

bench-extender: $(DRAKE) $(O)/bench/extender_bench ## extender latency vs a trivial TLS responder
	@$(O)/bench/extender_bench --drake $(DRAKE) $(BENCH_ARGS)

bench-prioritize: $(O)/bench/prioritize_bench ## drake's work per prioritize call with its score on, 100 to 5,000 openb nodes
	@mkdir -p bench/results && $(O)/bench/prioritize_bench $(TRACES) bench/results/prioritize.csv

bench-memory: $(DRAKE) $(O)/bench/memory_bench ## RSS with 5,000 nodes and 50,000 pods cached, relist time, controller CPU per pass
	@$(O)/bench/memory_bench --drake $(DRAKE) $(BENCH_ARGS)

BENCH_LOAD_SECONDS ?= 300
bench-load: $(DRAKE) $(O)/bench/extender_bench ## filter/prioritize at saturation for BENCH_LOAD_SECONDS (300): errors, latency, RSS and fds over time
	@$(O)/bench/extender_bench --drake $(DRAKE) --load $(BENCH_LOAD_SECONDS) \
		--csv bench/results/load.csv $(BENCH_ARGS)

check: ## everything CI runs: lint, tests, sanitizers, valgrind, fuzz smoke, e2e
	@hack/check.sh

clean: ## remove build/
	rm -rf build

help: ## this list
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | \
		awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# Other parts of the tree (control plane, e2e, sim) add their targets here.
include $(wildcard mk/*.mk)

# Test and bench objects are intermediates of pattern rules; keep them.
.SECONDARY:

-include $(shell find build/$(VARIANT) -name '*.d' 2>/dev/null)
