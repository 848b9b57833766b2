# sizeup build. `make` builds build/sizeup; `make test` builds everything under
# AddressSanitizer + UndefinedBehaviorSanitizer in build/asan and runs every test.
# Sources are discovered: a new src/<layer>/<name>.c or tests/unit/test_<name>.c needs no edit here.

CC      ?= cc
# Parallel jobs for the builds the test targets start (one per CPU).
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# Not taken from the environment: test scripts export BUILD (the directory under test), and a
# nested `make` must not build into it without its flags. `make BUILD=dir` still works.
BUILD   := build
PKGS    := libcurl libcjson yaml-0.1 libwebsockets openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# -Wno-format-truncation: bounded snprintf into fixed buffers (error texts, log lines) truncates
# by design; gcc's guess that it might is noise, not a bug.
WARN_BASE := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
WARN    := $(WARN_BASE) -Wno-format-truncation
CFLAGS  ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifeq ($(SAN),1)
EXTRA_CFLAGS += $(SAN_FLAGS)
EXTRA_LDFLAGS += $(SAN_FLAGS)
endif
ALL_CFLAGS = $(WARN) -D_GNU_SOURCE -Isrc $(PKG_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) -MMD -MP
LDLIBS_ALL = $(PKG_LIBS) -lpthread -lm

SRCS     := $(shell find src -name '*.c' ! -path src/main.c | sort)
OBJS     := $(SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Programs that drive src/kube against a running fake API server: built with the unit tests, run
# by the integration and reliability scripts that start the fake (never by the unit runner).
KUBE_SRC := $(sort $(wildcard tests/kube/test_*.c) tests/kube/kube_faults.c)
KUBE_BIN := $(KUBE_SRC:tests/kube/%.c=$(BUILD)/tests/kube/%)
.SECONDARY: $(BUILD)/obj/tests/kube/fakelib.o
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_SECONDS ?= 20
PREFIX  ?= /usr/local

.PHONY: all test unit integration e2e deps-test fuzz fuzz-build lint bench demo demo-streams clean format help reliability install kcluster-build
all: $(BUILD)/sizeup

help:
	@echo "make           build build/sizeup"
	@echo "make test      install what the tests need, then every unit and integration test under"
	@echo "               ASan+UBSan (what CI runs)"
	@echo "make e2e       the end-to-end operator tests (fake API server, kubectl, helm) and the"
	@echo "               slow ones make test leaves out (marked '# slow: make e2e')"
	@echo "make demo      install what is missing, build, and sweep the bundled example app"
	@echo "make demo-streams  the same for the live-board demo: stream capacity per variant"
	@echo "make fuzz      libFuzzer targets, FUZZ_SECONDS each (default $(FUZZ_SECONDS))"
	@echo "make bench     benchmarks in bench/, figures for bench/RESULTS.md"
	@echo "make lint      banned functions, formatting, the structure checks (check-structure.sh:"
	@echo "               sizes, layers, long functions, call circles, copied code)"
	@echo "make reliability  faults, crashes, bad input and security: one line per promise"
	@echo "make install   sizeup and kubectl-sizeup (the kubectl plugin) into PREFIX/bin"
	@echo "               (PREFIX=$(PREFIX); DESTDIR for staging)"

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libsizeup.a: $(OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $(OBJS)

$(BUILD)/sizeup: $(BUILD)/obj/src/main.o $(BUILD)/libsizeup.a
	$(CC) $(EXTRA_LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libsizeup.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(EXTRA_LDFLAGS) -o $@ $< $(BUILD)/libsizeup.a $(LDLIBS_ALL) -lcmocka

# The allocation-failure test (tests/unit/test_alloc_fail.c) wraps the allocator at link time:
# every call of libsizeup.a's objects and the test's own goes through its __wrap_ functions,
# which work beside ASan's interceptors (the real functions are ASan's).
ALLOC_WRAP := $(foreach f,malloc calloc realloc strdup strndup aligned_alloc open_memstream,-Wl,--wrap=$(f))
$(BUILD)/tests/test_alloc_fail: tests/unit/test_alloc_fail.c $(BUILD)/libsizeup.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(EXTRA_LDFLAGS) $(ALLOC_WRAP) -o $@ $< $(BUILD)/libsizeup.a $(LDLIBS_ALL) -lcmocka

$(BUILD)/tests/kube/%: tests/kube/%.c $(BUILD)/obj/tests/kube/fakelib.o $(BUILD)/libsizeup.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(EXTRA_LDFLAGS) -o $@ $< $(BUILD)/obj/tests/kube/fakelib.o $(BUILD)/libsizeup.a $(LDLIBS_ALL) -lcmocka

unit-bins: $(UNIT_BIN) $(KUBE_BIN) $(BUILD)/sizeup

# kubectl-sizeup is the same binary under kubectl's plugin name (it dispatches on argv[0]), a
# symbolic link so the two can never be different versions.
install: $(BUILD)/sizeup
	@echo "== installing sizeup and kubectl-sizeup into $(DESTDIR)$(PREFIX)/bin"
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/sizeup $(DESTDIR)$(PREFIX)/bin/sizeup
	ln -sf sizeup $(DESTDIR)$(PREFIX)/bin/kubectl-sizeup

# CI entry point: sanitized build, then every test through one runner that prints
# "N passed, N failed" and exits non-zero on any failure.
# Either README command may be the first one run on a fresh machine: each installs what it needs
# (quiet when everything is there).
deps-test:
	@scripts/install-deps.sh --quiet test

test: deps-test
	@echo "== building with ASan + UBSan in build/asan"
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan SAN=1 CFLAGS="-O1 -g" unit-bins
	@$(MAKE) --no-print-directory kcluster-build
	@echo "== running tests"
	tests/run-tests.sh build/asan

# The real control plane the kc_*.sh tests start (tests/kcluster/): built from Go modules once
# per machine (about 30 minutes on 2 cores) and cached, before the tests so that the build does
# not count against a test's time limit. Its tests need root (the process kubelet makes network
# namespaces and cgroups); without Go they skip, but under CI=true a missing Go is an error.
kcluster-build:
	@if [ "$$(id -u)" -ne 0 ]; then \
		echo "== not root: the real control plane's tests will skip (not building it)"; \
	elif ! command -v go >/dev/null 2>&1 && [ "$${CI:-}" != true ]; then \
		echo "== Go is not installed: the real control plane's tests will skip"; \
	else \
		echo "== the real control plane (tests/kcluster/build.sh)"; tests/kcluster/build.sh; \
	fi

# The end-to-end operator tests (tests/integration/e2e_*.sh) and the scripts marked
# "# slow: make e2e", which make test leaves out to keep CI's run short.
e2e: deps-test
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan SAN=1 CFLAGS="-O1 -g" unit-bins
	@$(MAKE) --no-print-directory kcluster-build
	tests/run-tests.sh build/asan e2e

unit: deps-test
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan SAN=1 CFLAGS="-O1 -g" unit-bins
	tests/run-tests.sh build/asan unit

integration: deps-test
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan SAN=1 CFLAGS="-O1 -g" unit-bins
	tests/run-tests.sh build/asan integration

# libFuzzer targets: the library's sources are compiled once with coverage instrumentation
# (fuzzer-no-link) into build/fuzz/libsizeup.a, and each target links against it.
FUZZ_CFLAGS := $(WARN_BASE) -D_GNU_SOURCE -Isrc $(PKG_CFLAGS) -O1 -g \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_OBJS := $(SRCS:%.c=build/fuzz/obj/%.o)

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

build/fuzz/libsizeup.a: $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJS)

build/fuzz/%: tests/fuzz/%.c build/fuzz/libsizeup.a
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libsizeup.a $(LDLIBS_ALL)

fuzz-build: $(FUZZ_BIN)
	@true

fuzz: $(FUZZ_BIN)
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# The whole reliability set (faults, crashes, bad input, security), one line per promise with
# its figure. The fast subset also runs in `make test`.
reliability:
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan SAN=1 CFLAGS="-O1 -g" unit-bins
	tests/reliability/run.sh build/asan

# The call-circle count reads the objects' symbols: they are built first.
lint: $(OBJS)
	SIZEUP_OBJ_DIR=$(BUILD)/obj scripts/lint.sh

bench: $(BUILD)/sizeup
	bench/run.sh

demo:
	scripts/demo.sh

demo-streams:
	scripts/demo-streams.sh

format:
	clang-format -i $(shell find src tests/unit tests/kube tests/fuzz -name '*.[ch]')

clean:
	rm -rf build

-include $(OBJS:.o=.d) $(BUILD)/obj/src/main.d $(FUZZ_OBJS:.o=.d)
