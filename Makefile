# rayboot: two static binaries (musl), their unit tests (glibc + sanitizers), and the test,
# demo and benchmark entry points. `make help` lists the targets.

VERSION := $(shell cat VERSION)
# The musl the release links (musl-gcc, Debian's musl-dev), named by --version: musl has no call for it.
MUSL_VERSION := $(shell dpkg-query -W -f='$${Version}' musl-dev 2>/dev/null | sed 's/-[^-]*$$//')
BUILD   := build
DEPS    := $(BUILD)/deps
PREFIX  := $(DEPS)/prefix
DEPS_OK := $(DEPS)/.stamp-all
VENV    := $(BUILD)/venv
# The oldest Ray the docs promise (tests/e2e/requirements-oldest.txt), for `make e2e-oldest`.
OLDEST_VENV := $(BUILD)/venv-oldest
PYTHON  := $(VENV)/bin/python
# The checkers' own small venv (ruff, gcovr; scripts/tool-requirements.txt): lint needs no Ray.
TOOLS_VENV := $(BUILD)/tools-venv
TOOLS_OK   := $(TOOLS_VENV)/.installed

# lib/ in layers (lib/*/README.md): base, then confine and net, then plan and ray. Each folder is
# on the include path, so a header is named by its file name; scripts/include-graph.py checks
# that no layer includes from one above it.
LIB_LAYERS  := base confine net plan ray
LIB_SRC     := $(sort $(wildcard $(LIB_LAYERS:%=lib/%/*.c)))
INIT_SRC    := $(sort $(wildcard init/*.c))
SIDECAR_SRC := $(sort $(wildcard sidecar/*.c))
# Only the fuzz targets, compiled and linked in one step, list every header; objects know theirs
# from the compiler (-MMD -MP: a .d file beside each .o, read back below).
HEADERS     := $(wildcard $(LIB_LAYERS:%=lib/%/*.h) init/*.h sidecar/*.h)
DEPFLAGS    := -MMD -MP

# Warnings: curl's picky set, -Wconversion and -Wsign-conversion everywhere (every narrowing or
# sign change is a cast that says it is meant), less -Wdeclaration-after-statement (C11 style) and
# -Wcast-qual (libcurl and libmicrohttpd take read-only buffers as void *). WARN is what gcc and
# clang (fuzz targets, clang-tidy) both know; WARN_GCC is gcc's alone, added to every gcc build.
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wvla \
            -Wundef -Wwrite-strings -Wnull-dereference -Wpointer-arith -Wcast-align -Wmissing-declarations \
            -Wold-style-definition -Wnested-externs -Wfloat-equal -Wimplicit-fallthrough -Wdouble-promotion \
            -Wbad-function-cast -Wconversion -Wsign-conversion
WARN_GCC := -Wduplicated-cond -Wduplicated-branches -Wlogical-op -Wformat-truncation=2 -Wformat-overflow=2 \
            -Wshift-overflow=2 -Walloc-zero -Wrestrict -Wtrampolines -Wstrict-aliasing=3
COMMON := -std=c11 -D_GNU_SOURCE -DRAYBOOT_VERSION='"$(VERSION)"' -DRAYBOOT_MUSL_VERSION='"$(or $(MUSL_VERSION),unknown)"' $(WARN) $(LIB_LAYERS:%=-Ilib/%)

# Release: musl, fully static, position-independent (static PIE), hardened. _FORTIFY_SOURCE is
# inert with musl (no fortified headers); it costs nothing and takes effect if the build ever
# moves to a libc that has them.
REL_CC      := musl-gcc
# musl-gcc's specs link a PIE against musl's dynamic loader whatever the flags; the link uses
# musl's specs with two entries replaced (deps/musl-static-pie.specs: rcrt1.o, which relocates
# the program itself, and -static -pie --no-dynamic-linker -z text). musl-gcc appends its own
# specs last, so the link calls gcc itself. lib/confine/relro.c makes RELRO hold at run time.
REL_SPECS   := deps/musl-static-pie.specs
REL_LD      := $(or $(REALGCC),x86_64-linux-gnu-gcc) -specs=$(REL_SPECS) -static-pie
REL_CFLAGS  := $(COMMON) $(WARN_GCC) -O2 -fPIE -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
               -ffunction-sections -fdata-sections
REL_INCLUDES := -isystem $(DEPS)/prefix-tls/include -isystem $(PREFIX)/include -isystem $(DEPS)/kernel-headers
REL_LDFLAGS := -Wl,-z,relro,-z,now,-z,noexecstack -Wl,--gc-sections -s
# Both programs link the one libcurl, built with TLS (mbedTLS): rayboot for Ray's TLS to the GCS,
# the sidecar for that and the Kubernetes API.
REL_LIBS    := -L$(DEPS)/prefix-tls/lib -L$(PREFIX)/lib -lcurl -lnghttp2 -lcares -lseccomp -lcjson \
               -lmbedtls -lmbedx509 -lmbedcrypto
SIDECAR_LIBS := -L$(DEPS)/prefix-tls/lib -L$(PREFIX)/lib -lcurl -lnghttp2 -lcares -lseccomp -lcjson \
                -lmicrohttpd -lmbedtls -lmbedx509 -lmbedcrypto

# Unit tests: glibc, Debian's -dev packages, address and undefined-behaviour sanitizers.
UNIT_CC      := gcc
UNIT_CFLAGS  := $(COMMON) $(WARN_GCC) -Iinit -Isidecar -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=all
UNIT_LIBS    := -lcmocka -lcjson -lcurl -lcares -lseccomp -lmicrohttpd
# lib/net/tlscert.c needs mbedTLS 3.6 (Debian's is 2.28): deps/build.sh builds it for glibc too, into
# prefix-unit; its test reads the certificates back with OpenSSL as well.
UNIT_TLS_INC := -isystem $(DEPS)/prefix-unit/include
UNIT_CFLAGS  += $(UNIT_TLS_INC)
# init's and the sidecar's pure modules are tested too; their main loops and HTTP glue are tested
# end to end.
UNIT_LIB_SRC := $(filter-out lib/base/version.c,$(LIB_SRC)) init/jobsapi.c init/shellquote.c init/plan_render.c \
                init/rayrestart.c \
                sidecar/drainproof.c sidecar/podreason.c sidecar/route.c
UNIT_TESTS   := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(sort $(wildcard tests/unit/test_*.c)))
# Each fuzz target's harness is also built without libFuzzer (fuzz/replay.c) and run by `make unit`
# over its seeds and regression inputs.
FUZZ_NAMES   := $(patsubst fuzz/fuzz_%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
REPLAYS      := $(patsubst %,$(BUILD)/replay/fuzz_%,$(FUZZ_NAMES))

# Objects are kept between runs (they are not throwaway intermediates).
.SECONDARY:
Q := @

# Static analysis. The analyzer's va_list checkers are off: they misread our formatting
# wrappers, and clang-tidy 14 once called a struct that never meets va_start a "leaked va_list"
# on a CI machine (never here), failing the build at random. cppcheck, in `make lint` too,
# checks that every va_start has its va_end (va_end_missing). The widening check flags only
# compile-time constants.
TIDY_CHECKS := -*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters,\
	-bugprone-reserved-identifier,-bugprone-assignment-in-if-condition,\
	-bugprone-implicit-widening-of-multiplication-result,-clang-analyzer-valist.Uninitialized,\
	-clang-analyzer-valist.Unterminated,-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling

.PHONY: all deps unit unit-valgrind fixtures e2e test demo bootstrap venv venv-oldest e2e-oldest clean distclean help lint format bench \
	bench-node node node-up node-down node-background analyze coverage coverage-contract
all: $(BUILD)/bin/rayboot $(BUILD)/bin/rayboot-sidecar

help:
	@echo "make            build/bin/rayboot and build/bin/rayboot-sidecar (static, musl)"
	@echo "make test       install what is missing, build, run unit, fixture and e2e tests"
	@echo "make demo       a local Ray cluster in simulated pods"
	@echo "make unit       unit tests only (ASan+UBSan)"
	@echo "make unit-valgrind  the unit tests again, without sanitizers, under valgrind memcheck"
	@echo "make e2e        pytest only (PYTEST_ARGS='tests/e2e/test_smoke.py' for one file)"
	@echo "make e2e-oldest the e2e tests marked ray_oldest, with the oldest Ray the docs promise (build/venv-oldest)"
	@echo "make lint       cppcheck, clang-tidy, clang-format, shellcheck, ruff, no include circle (scripts/include-graph.py),"
	@echo "                docs' links and variables (scripts/check-docs.py)"
	@echo "make format     clang-format every C file in place"
	@echo "make analyze    gcc -fanalyzer over every C file, one at a time (make lint runs it)"
	@echo "make coverage   line coverage of the unit tier (gcov, gcovr), printed; build/cov/coverage.txt"
	@echo "make coverage-contract  the same of the contract tier, run against --coverage builds (5 min)"
	@echo "make fuzz       every libFuzzer target in fuzz/ for FUZZ_SECONDS (30) each; fuzz-ci: 10 s each"
	@echo "make bench      benchmarks that print figures (QUICK=1: a few minutes)"
	@echo "make bench-node rayboot against the real KubeRay operator on the real node (QUICK=1: 2 rounds)"
	@echo "make node       the real node's Kubernetes programs and images (tests/node/); node-up, node-down"

$(DEPS_OK): deps/build.sh deps/mbedtls_entropy.c deps/mbedtls-tls12-rsa-pss.patch
	deps/build.sh $(DEPS)
deps: $(DEPS_OK)

$(BUILD)/rel/%.o: %.c $(DEPS_OK) VERSION
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(REL_CC) $(REL_CFLAGS) $(DEPFLAGS) $(REL_INCLUDES) -c $< -o $@

# lib/ once, as an archive both programs link: each takes only the modules it calls.
REL_LIB_A := $(BUILD)/rel/librayboot.a
$(REL_LIB_A): $(patsubst %.c,$(BUILD)/rel/%.o,$(LIB_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/rayboot: $(patsubst %.c,$(BUILD)/rel/%.o,$(INIT_SRC)) $(REL_LIB_A) $(REL_SPECS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(REL_LD) $(REL_CFLAGS) $(REL_LDFLAGS) $(filter %.o %.a,$^) $(REL_LIBS) -o $@

$(BUILD)/bin/rayboot-sidecar: $(patsubst %.c,$(BUILD)/rel/%.o,$(SIDECAR_SRC)) $(REL_LIB_A) $(REL_SPECS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(REL_LD) $(REL_CFLAGS) $(REL_LDFLAGS) $(filter %.o %.a,$^) $(SIDECAR_LIBS) -o $@

# Test builds of rayboot for tests/contract/test_seccomp_minimal.py, never shipped:
# build/knockout/NAME/rayboot leaves the prober's seccomp rule NAME out (lib/confine/sandbox.c
# names them), NAME+nobrk also makes brk fail (malloc's mmap path), none+nobrk only that. Only
# lib/confine/sandbox.c is compiled again; everything else is the release objects (the archive's
# sandbox.o is never pulled in: the knockout's, linked first, defines the same symbols).
KO_OBJS  := $(patsubst %.c,$(BUILD)/rel/%.o,$(INIT_SRC)) $(REL_LIB_A)
ko_words  = $(subst +, ,$(1))
ko_defs   = $(if $(filter-out none,$(firstword $(call ko_words,$(1)))),-DRAYBOOT_SECCOMP_DROP='"$(firstword $(call ko_words,$(1)))"') \
            $(if $(filter nobrk,$(call ko_words,$(1))),-DRAYBOOT_SECCOMP_TEST_BRK_FAILS)

$(BUILD)/knockout/%/sandbox.o: lib/confine/sandbox.c $(DEPS_OK) VERSION
	@mkdir -p $(dir $@)
	$(Q)$(REL_CC) $(REL_CFLAGS) $(DEPFLAGS) $(REL_INCLUDES) $(call ko_defs,$*) -c $< -o $@

$(BUILD)/knockout/%/rayboot: $(BUILD)/knockout/%/sandbox.o $(KO_OBJS) $(REL_SPECS)
	@echo "  LD      $@"
	$(Q)$(REL_LD) $(REL_CFLAGS) $(REL_LDFLAGS) $(filter %.o %.a,$^) $(REL_LIBS) -o $@

$(BUILD)/unit/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC-SAN  $<"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) $(DEPFLAGS) -c $< -o $@

# What compiles or links against prefix-unit's mbedTLS waits for deps/build.sh.
UNIT_TLS_OBJ := lib/net/tlscert.o lib/ray/raytls.o tests/unit/test_tlscert.o tests/unit/test_raytls.o
$(UNIT_TLS_OBJ:%=$(BUILD)/unit/obj/%) $(UNIT_TLS_OBJ:%=$(BUILD)/unit-vg/obj/%) $(UNIT_TLS_OBJ:%=$(BUILD)/cov/obj/%): \
    | $(DEPS_OK)
# Every unit test links it (a static library gives only what is called: the prober's modules
# call raytls.c, which calls tlscert.c).
$(BUILD)/unit/test_% $(BUILD)/unit-vg/test_% $(BUILD)/cov/test_%: \
    UNIT_LIBS += -L$(DEPS)/prefix-unit/lib -lmbedx509 -lmbedcrypto -lcrypto
$(UNIT_TESTS): | $(DEPS_OK)

UNIT_LIB_A := $(BUILD)/unit/libunit.a
$(UNIT_LIB_A): $(patsubst %.c,$(BUILD)/unit/obj/%.o,$(UNIT_LIB_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/unit/%: $(BUILD)/unit/obj/tests/unit/%.o $(UNIT_LIB_A)
	@echo "  LD-SAN  $@"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) $^ $(UNIT_LIBS) -o $@

# The unit tier: $(call run_unit_tier,TESTS,REPLAY_DIR) runs every unit test program, then each
# fuzz harness's replay (REPLAY_DIR/fuzz_NAME) over its seeds and regression inputs.
define run_unit_tier
failed=0; for t in $(1); do \
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || failed=1; \
done; \
for name in $(FUZZ_NAMES); do \
    dirs=fuzz/corpus/$$name; [ -d fuzz/regressions/$$name ] && dirs="$$dirs fuzz/regressions/$$name"; \
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:abort_on_error=1 \
        $(2)/fuzz_$$name $$dirs || failed=1; \
done; [ $$failed = 0 ]
endef

unit: $(UNIT_TESTS) $(REPLAYS)
	@$(call run_unit_tier,$(UNIT_TESTS),$(BUILD)/replay)

# The same unit tests without sanitizers, under valgrind's memcheck: a second opinion on memory
# (uninitialised reads ASan does not see) with zero errors and zero definite leaks required.
VG_CFLAGS := $(COMMON) $(WARN_GCC) -Iinit -Isidecar -O1 -g $(UNIT_TLS_INC)
VG_TESTS  := $(patsubst tests/unit/%.c,$(BUILD)/unit-vg/%,$(sort $(wildcard tests/unit/test_*.c)))
VALGRIND  := valgrind -q --tool=memcheck --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite

$(BUILD)/unit-vg/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC-VG   $<"
	$(Q)$(UNIT_CC) $(VG_CFLAGS) $(DEPFLAGS) -c $< -o $@

VG_LIB_A := $(BUILD)/unit-vg/libunit.a
$(VG_LIB_A): $(patsubst %.c,$(BUILD)/unit-vg/obj/%.o,$(UNIT_LIB_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/unit-vg/%: $(BUILD)/unit-vg/obj/tests/unit/%.o $(VG_LIB_A)
	@echo "  LD-VG   $@"
	$(Q)$(UNIT_CC) $(VG_CFLAGS) $^ $(UNIT_LIBS) -o $@

$(VG_TESTS): | $(DEPS_OK)
unit-valgrind: $(VG_TESTS)
	@failed=0; for t in $(VG_TESTS); do \
	    $(VALGRIND) $$t >$$t.log 2>&1 || { cat $$t.log; echo "valgrind: $$t failed"; failed=1; }; \
	done; [ $$failed = 0 ] && echo "valgrind: $(words $(VG_TESTS)) unit test programs, no errors, no definite leaks"; exit $$failed

# Line coverage of the unit tier: the unit tests and the fuzz replays again, built as `make unit`
# builds them but -O0 and --coverage, under build/cov, then gcovr (tools venv) over what they ran
# (fuzz/replay.c needs the sanitizers' hooks; they cost time only). The figure is of the files the
# unit tier compiles (UNIT_LIB_SRC and the harnesses' sources); tests/README.md says what that
# leaves out. Full report: build/cov/coverage.txt.
COV_CFLAGS  := $(UNIT_CFLAGS) -O0 --coverage
COV_TESTS   := $(patsubst tests/unit/%.c,$(BUILD)/cov/%,$(sort $(wildcard tests/unit/test_*.c)))
COV_REPLAYS := $(patsubst %,$(BUILD)/cov/replay/fuzz_%,$(FUZZ_NAMES))
GCOVR       := $(TOOLS_VENV)/bin/gcovr --root . --gcov-executable gcov --exclude 'tests/' --exclude 'fuzz/' \
               --exclude '$(BUILD)/'

$(BUILD)/cov/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC-COV  $<"
	$(Q)$(UNIT_CC) $(COV_CFLAGS) $(DEPFLAGS) -c $< -o $@

COV_LIB_A := $(BUILD)/cov/libunit.a
$(COV_LIB_A): $(patsubst %.c,$(BUILD)/cov/obj/%.o,$(UNIT_LIB_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/cov/test_%: $(BUILD)/cov/obj/tests/unit/test_%.o $(COV_LIB_A)
	@echo "  LD-COV  $@"
	$(Q)$(UNIT_CC) $(COV_CFLAGS) $^ $(UNIT_LIBS) -o $@

$(COV_TESTS): | $(DEPS_OK)
coverage: $(COV_TESTS) $(COV_REPLAYS) $(TOOLS_OK)
	@find $(BUILD)/cov -name '*.gcda' -delete
	@($(call run_unit_tier,$(COV_TESTS),$(BUILD)/cov/replay)) >$(BUILD)/cov/run.log 2>&1 || \
	    { tail -n 40 $(BUILD)/cov/run.log; echo "coverage: a unit test failed ($(BUILD)/cov/run.log)"; exit 1; }
	@$(GCOVR) --txt $(BUILD)/cov/coverage.txt $(BUILD)/cov
	@# Never --txt /dev/null: gcovr renames a temporary file over its output, and as root that
	@# left /dev/null a regular file for every other program on the machine.
	@$(GCOVR) --print-summary --txt $(BUILD)/cov/summary.txt $(BUILD)/cov | grep -E '^(lines|functions|branches):' | \
	    sed 's/^/coverage of the unit tier: /'

# The contract tier's coverage (not run by `make test`: it is the contract tier again, about 5
# minutes): both binaries built as released but with --coverage under build/cov-rel, the contract
# tests run against them (RAYBOOT_BIN_DIR), gcovr over what they wrote. Only processes that end
# through exit write their counts; tests/README.md says what that leaves out.
COVREL_CFLAGS := $(REL_CFLAGS) --coverage
COVREL_LIB_A  := $(BUILD)/cov-rel/librayboot.a

$(BUILD)/cov-rel/%.o: %.c $(DEPS_OK) VERSION
	@mkdir -p $(dir $@)
	@echo "  CC-COV  $<"
	$(Q)$(REL_CC) $(COVREL_CFLAGS) $(DEPFLAGS) $(REL_INCLUDES) -c $< -o $@

$(COVREL_LIB_A): $(patsubst %.c,$(BUILD)/cov-rel/%.o,$(LIB_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/cov-rel/bin/rayboot: $(patsubst %.c,$(BUILD)/cov-rel/%.o,$(INIT_SRC)) $(COVREL_LIB_A) $(REL_SPECS)
	@mkdir -p $(dir $@)
	@echo "  LD-COV  $@"
	$(Q)$(REL_LD) $(COVREL_CFLAGS) $(REL_LDFLAGS) $(filter %.o %.a,$^) $(REL_LIBS) -o $@

$(BUILD)/cov-rel/bin/rayboot-sidecar: $(patsubst %.c,$(BUILD)/cov-rel/%.o,$(SIDECAR_SRC)) $(COVREL_LIB_A) $(REL_SPECS)
	@mkdir -p $(dir $@)
	@echo "  LD-COV  $@"
	$(Q)$(REL_LD) $(COVREL_CFLAGS) $(REL_LDFLAGS) $(filter %.o %.a,$^) $(SIDECAR_LIBS) -o $@

coverage-contract: $(BUILD)/cov-rel/bin/rayboot $(BUILD)/cov-rel/bin/rayboot-sidecar $(TOOLS_OK)
	$(MAKE) venv
	@find $(BUILD)/cov-rel -name '*.gcda' -delete
	@status=0; RAYBOOT_BIN_DIR=$(CURDIR)/$(BUILD)/cov-rel/bin $(PYTHON) -m pytest tests/contract -q -p no:cacheprovider \
	    || status=$$?; \
	$(GCOVR) --txt $(BUILD)/cov-rel/coverage.txt $(BUILD)/cov-rel; \
	$(GCOVR) --print-summary --txt $(BUILD)/cov-rel/summary.txt $(BUILD)/cov-rel | grep -E '^(lines|functions|branches):' | \
	    sed 's/^/coverage of the contract tier: /'; exit $$status

# Every C file as .clang-format lays it out (STYLE.md); `make format` rewrites them.
C_FILES := $(sort $(wildcard $(LIB_LAYERS:%=lib/%/*.[ch]) init/*.[ch] sidecar/*.[ch] fuzz/*.[ch] tests/unit/*.c bench/tools/*.c))

format:
	clang-format -i $(C_FILES)

# Every shell script (the *.sh files, wherever they are, and the CI's entry point), as shellcheck
# reads them at its default severity; -x follows the files they source.
SH_FILES := $(sort $(filter-out $(BUILD)/%,$(wildcard *.sh */*.sh */*/*.sh */*/*/*.sh)) .ci/run)

$(TOOLS_OK): scripts/tool-requirements.txt
	scripts/ray-venv.sh $(TOOLS_VENV) scripts/tool-requirements.txt

# gcc's static analyzer over every C file of the project, one translation unit at a time, each as
# it is built: lib/, init/ and sidecar/ as released (musl, -O2), the unit tests and fuzz harnesses
# as the unit build compiles them (without sanitizers), the bench tool as `make bench` does. Every
# checker is on and any finding fails; a suppression is a pragma at its line with its reason.
# A file is analysed again when it or a header changes (all 152: about 30 s on one core here).
ANALYZE_SRC := $(LIB_SRC) $(INIT_SRC) $(SIDECAR_SRC) $(sort $(wildcard tests/unit/*.c fuzz/*.c bench/tools/*.c))
ANALYZE_OK  := $(patsubst %.c,$(BUILD)/analyze/%.ok,$(ANALYZE_SRC))
$(BUILD)/analyze/lib/%.ok $(BUILD)/analyze/init/%.ok $(BUILD)/analyze/sidecar/%.ok: AN_CC = $(REL_CC) $(REL_CFLAGS) $(REL_INCLUDES)
$(BUILD)/analyze/tests/%.ok $(BUILD)/analyze/fuzz/%.ok: AN_CC = $(UNIT_CC) $(COMMON) $(WARN_GCC) -Iinit -Isidecar \
    -I$(dir $(CJSON_SRC)) -O1 $(UNIT_TLS_INC)
$(BUILD)/analyze/bench/%.ok: AN_CC = gcc -std=c11 -O2 $(WARN) $(WARN_GCC)

$(BUILD)/analyze/%.ok: %.c $(HEADERS) fuzz/fuzz.h $(DEPS_OK) VERSION
	@mkdir -p $(dir $@)
	@echo "  ANALYZE $<"
	$(Q)$(AN_CC) -fanalyzer -c $< -o $(@:.ok=.o)
	@touch $@

analyze: $(ANALYZE_OK)
	@echo "analyze: gcc -fanalyzer, $(words $(ANALYZE_OK)) files, no finding"

# check-docs.py runs both binaries' --help: every variable they name is documented in docs/.
# ruff's rules are ruff.toml's.
lint: $(DEPS_OK) $(BUILD)/bin/rayboot $(BUILD)/bin/rayboot-sidecar $(TOOLS_OK) analyze
	python3 scripts/include-graph.py
	python3 scripts/unique-test-names.py
	python3 scripts/check-test-map.py
	python3 scripts/checksrc.py
	python3 scripts/check-docs.py $(BUILD)/bin/rayboot $(BUILD)/bin/rayboot-sidecar
	clang-format --dry-run --Werror $(C_FILES)
	shellcheck -x $(SH_FILES)
	$(TOOLS_VENV)/bin/ruff check --no-cache --quiet .
	cppcheck -q --error-exitcode=1 --enable=warning,performance,portability --std=c11 -D_GNU_SOURCE \
	    --suppress=missingIncludeSystem $(LIB_LAYERS:%=-Ilib/%) lib init sidecar
	clang-tidy -quiet --warnings-as-errors='*' --checks='$(TIDY_CHECKS)' $(LIB_SRC) $(INIT_SRC) $(SIDECAR_SRC) -- \
	    $(COMMON) -isystem $(PREFIX)/include
	clang-tidy -quiet --warnings-as-errors='*' --checks='$(TIDY_CHECKS)' $(sort $(wildcard fuzz/*.c)) -- \
	    $(COMMON) -Isidecar -Iinit -isystem $(PREFIX)/include

bootstrap:
	scripts/bootstrap.sh

venv:
	scripts/ray-venv.sh $(VENV)

venv-oldest:
	scripts/ray-venv.sh $(OLDEST_VENV) tests/e2e/requirements-oldest.txt

# The e2e tests marked ray_oldest (a cluster that joins and runs, a drain, the node labels' gate,
# token mode where Ray has none), again with the oldest Ray the docs promise.
e2e-oldest: all venv-oldest
	$(OLDEST_VENV)/bin/python -m pytest tests/e2e -m ray_oldest -p no:cacheprovider $(PYTEST_ARGS)

# The whole suite. Every test but those marked `node` (tests/node/, and what needs its kubectl)
# runs while the node's programs and images build in the background (niced: the tests keep the
# CPU they ask for, the build takes the rest); then the node's. pytest prints the 30 slowest tests and each tier's time (tests/conftest.py), so
# the CI's time can be attributed; each run's summary is its last line: "N passed".
test: bootstrap
	@python3 scripts/check-leftovers.py --record $(BUILD)/leftovers-before $(BUILD)
	$(MAKE) all $(BUILD)/bench/stamp
	$(MAKE) node-background
	$(MAKE) unit
	$(MAKE) unit-valgrind
	$(MAKE) lint
	$(MAKE) fuzz-ci
	$(MAKE) venv
	$(PYTHON) -m pytest tests --ignore=tests/node -m 'not node' --durations=30 $(PYTEST_ARGS)
	$(MAKE) e2e-oldest
	$(MAKE) node
	$(PYTHON) -m pytest tests -m node --durations=30 $(PYTEST_ARGS)
	@python3 scripts/check-leftovers.py --since $(BUILD)/leftovers-before $(BUILD)

# The real-node tier (tests/node/): Kubernetes and CoreDNS from the Go module proxy, the images from
# our Dockerfiles. Each is rebuilt only when its pins or inputs change (cached under build/node).
NODE_LOCK := $(BUILD)/node/.prepare.lock
node: bootstrap
	@mkdir -p $(BUILD)/node
	@flock $(NODE_LOCK) tests/node/build.sh $(BUILD)/node
	@flock $(NODE_LOCK) tests/node/images.sh $(BUILD)/node

# `make test` starts the node's build in the background while the other tiers run (fuzzing and
# valgrind each keep one core busy for minutes, the e2e tier mostly waits on Ray); `make node` then
# waits for it under the same lock and finds everything built, or builds what failed in the
# foreground, where its errors show.
node-background:
	@mkdir -p $(BUILD)/node
	@echo "node: building the real node's programs and images in the background ($(BUILD)/node/prepare.log)"
	@(nice -n 19 flock $(NODE_LOCK) tests/node/build.sh $(BUILD)/node && \
	  nice -n 19 flock $(NODE_LOCK) tests/node/images.sh $(BUILD)/node) >$(BUILD)/node/prepare.log 2>&1 </dev/null &

node-up: node
	python3 tests/node/cluster.py up

node-down:
	python3 tests/node/cluster.py down

# One suite or test: make e2e PYTEST_ARGS='tests/e2e/test_smoke.py -k smoke'
e2e:
	$(PYTHON) -m pytest $(or $(PYTEST_ARGS),tests)

demo: bootstrap
	$(MAKE) all venv
	$(PYTHON) tests/e2e/demo.py

# Figures, not pass/fail (bench/, results in bench/results/latest.json). Needs root, like the
# simulator. `make bench QUICK=1` is a few minutes; BENCH_ONLY=join,scale runs some of them.
$(BUILD)/bench/stamp: bench/tools/stamp.c
	@mkdir -p $(dir $@)
	$(Q)gcc -std=c11 -O2 $(WARN) $(WARN_GCC) $< -o $@

bench: bootstrap
	$(MAKE) all venv $(BUILD)/bench/stamp
	cd bench && ../$(PYTHON) run.py $(if $(QUICK),--quick) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))

# The real node's comparisons (bench/node/, results in bench/results/node.json): rayboot against
# the real KubeRay operator (its version in tests/node/pins.env), side by side. Brings the node up
# and down itself (root, like the node tier); BENCH_ONLY=apply,waiting,evict,headlost,headlost_ft
# runs some of them.
bench-node: node
	cd bench/node && ../../$(PYTHON) bench_node.py $(if $(QUICK),--quick) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))

clean:
	rm -rf $(BUILD)/rel $(BUILD)/bin $(BUILD)/unit $(BUILD)/knockout $(BUILD)/cov $(BUILD)/cov-rel $(BUILD)/analyze

distclean:
	rm -rf $(BUILD)

# Fuzzing (clang, libFuzzer, ASan+UBSan): `make fuzz FUZZ_SECONDS=30` runs every target in fuzz/
# for that long, one after the other, from its seed corpus in fuzz/corpus/<name>/ (fuzz/README.md
# lists them); a crash, a broken invariant or a hang fails the run and leaves its input in
# build/fuzz/. `make fuzz-ci` is the same for FUZZ_CI_SECONDS each, as `make test` runs it.
FUZZ_SECONDS    ?= 30
FUZZ_CI_SECONDS ?= 10
# A single input slower than this is a hang, not a slow parser.
FUZZ_TIMEOUT_S  := 10
FUZZ_CFLAGS  := $(COMMON) -Isidecar -Iinit -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_LIBS    := -lcurl
FUZZ_TARGETS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_NAMES))

# cJSON is compiled in from its Debian source (deps/build.sh fetched it), so it is instrumented too.
CJSON_SRC = $(firstword $(wildcard $(DEPS)/src/cjson-*/cJSON.c))

# Each target: its harness, the sources it exercises (and cJSON). The planner pulls in every file
# parser it calls.
PLAN_SRC := lib/plan/plan.c lib/plan/plandata.c lib/plan/podview.c lib/plan/detect.c lib/base/env.c \
            lib/plan/volcano.c lib/net/hosts.c lib/net/resolvconf.c lib/plan/cgroup.c lib/base/fsroot.c \
            lib/plan/raystart.c lib/base/strv.c lib/plan/pluginargs.c lib/base/flags.c lib/net/address.c \
            lib/net/dnsname.c lib/base/errbuf.c lib/plan/lws.c lib/plan/jobset.c \
            lib/plan/podlabels.c lib/base/count.c lib/base/number.c lib/base/lines.c lib/plan/nofile.c \
            lib/plan/shm.c lib/plan/raylabels.c lib/plan/labelsyntax.c lib/plan/rayversion.c lib/base/text.c \
            lib/base/dotversion.c lib/base/redact.c
GCS_SRC  := lib/ray/gcs.c lib/net/protobuf.c lib/net/grpc.c lib/net/grpc_frame.c lib/net/httpc.c \
            lib/base/deadline.c lib/base/errbuf.c lib/base/number.c lib/base/dotversion.c
FUZZ_SRC_podreason  := sidecar/podreason.c lib/base/json.c lib/base/utf8.c lib/base/errbuf.c
FUZZ_SRC_jobsapi    := init/jobsapi.c lib/base/json.c lib/base/utf8.c lib/base/errbuf.c
FUZZ_SRC_flags      := init/cli.c lib/base/log.c $(PLAN_SRC)
FUZZ_SRC_env        := init/plan_render.c lib/plan/settings.c lib/base/json.c lib/base/utf8.c $(PLAN_SRC)
FUZZ_SRC_raystart   := lib/plan/raystart.c lib/base/strv.c lib/base/errbuf.c lib/base/redact.c
FUZZ_SRC_hosts      := lib/net/hosts.c lib/base/lines.c
FUZZ_SRC_resolvconf := lib/net/resolvconf.c lib/base/lines.c lib/base/number.c
FUZZ_SRC_volcano    := lib/plan/volcano.c lib/net/dnsname.c lib/base/env.c lib/base/strv.c lib/base/fsroot.c \
                       lib/base/errbuf.c lib/base/number.c lib/base/text.c
FUZZ_SRC_lws        := lib/plan/lws.c lib/base/count.c lib/net/dnsname.c lib/base/env.c lib/base/strv.c \
                       lib/base/errbuf.c lib/base/number.c
FUZZ_SRC_jobset     := lib/plan/jobset.c lib/plan/podlabels.c lib/base/count.c lib/net/dnsname.c \
                       lib/base/env.c lib/base/strv.c lib/base/fsroot.c lib/base/errbuf.c lib/base/number.c \
                       lib/base/text.c
FUZZ_SRC_cgroup     := lib/plan/cgroup.c lib/base/fsroot.c lib/base/strv.c lib/base/errbuf.c
FUZZ_SRC_address    := lib/net/address.c lib/net/dnsname.c lib/base/errbuf.c lib/base/number.c
FUZZ_SRC_grpc       := lib/net/grpc.c lib/net/grpc_frame.c lib/net/httpc.c lib/base/deadline.c \
                       lib/base/errbuf.c lib/base/number.c
FUZZ_SRC_protobuf   := lib/net/protobuf.c
FUZZ_SRC_gcs        := $(GCS_SRC)
FUZZ_SRC_drain      := lib/ray/drain.c lib/ray/prober_req.c $(GCS_SRC)
FUZZ_SRC_dashboard  := init/dashboard.c lib/net/httpc.c lib/base/errbuf.c
FUZZ_SRC_route      := sidecar/route.c lib/base/number.c
FUZZ_SRC_log        := lib/base/log.c lib/base/text.c lib/base/redact.c lib/base/strv.c
FUZZ_SRC_rendezvous := lib/ray/rdvmsg.c
FUZZ_SRC_rdvauth    := lib/ray/rdvauth.c lib/base/sha256.c lib/base/hex.c

# A target is rebuilt when its harness or any source it links changes.
.SECONDEXPANSION:
$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $$(FUZZ_SRC_$$*) $(HEADERS) $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -I$(dir $(CJSON_SRC)) -I$(PREFIX)/include $< $(sort $(FUZZ_SRC_$*)) $(CJSON_SRC) \
	    $(FUZZ_LIBS) -o $@

.PHONY: fuzz fuzz-ci
fuzz: $(FUZZ_TARGETS)
	@for name in $(FUZZ_NAMES); do \
	    mkdir -p $(BUILD)/fuzz/corpus-$$name; \
	    echo "fuzz: $$name for $(FUZZ_SECONDS) s"; \
	    (cd $(BUILD)/fuzz && ./fuzz_$$name -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT_S) \
	        -print_final_stats=1 corpus-$$name $(CURDIR)/fuzz/corpus/$$name) >$(BUILD)/fuzz/$$name.log 2>&1 || \
	        { tail -n 60 $(BUILD)/fuzz/$$name.log; echo "fuzz: $$name failed; its input is in $(BUILD)/fuzz/ (crash-*, leak-*, timeout-*, oom-*)"; exit 1; }; \
	    grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' $(BUILD)/fuzz/$$name.log | tr '\n' ' '; echo; \
	done; echo "fuzz: $(words $(FUZZ_NAMES)) targets, no crash"

fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS)

# The same harnesses without libFuzzer: fuzz/replay.c feeds them every seed and every regression
# input, built with gcc and ASan+UBSan like the unit tests, so `make unit` checks them all.

$(BUILD)/replay/fuzz_%: $(BUILD)/unit/obj/fuzz/fuzz_%.o $(BUILD)/unit/obj/fuzz/replay.o \
        $$(patsubst %.c,$(BUILD)/unit/obj/%.o,$$(sort $$(FUZZ_SRC_$$*)))
	@mkdir -p $(dir $@)
	@echo "  LD-SAN  $@"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) $^ $(UNIT_LIBS) -o $@

# And once more with --coverage, for `make coverage`.
$(BUILD)/cov/replay/fuzz_%: $(BUILD)/cov/obj/fuzz/fuzz_%.o $(BUILD)/cov/obj/fuzz/replay.o \
        $$(patsubst %.c,$(BUILD)/cov/obj/%.o,$$(sort $$(FUZZ_SRC_$$*)))
	@mkdir -p $(dir $@)
	@echo "  LD-COV  $@"
	$(Q)$(UNIT_CC) $(COV_CFLAGS) $^ $(UNIT_LIBS) -o $@

# What each object was built from, as the compiler wrote it (no file yet on a first build).
-include $(shell find $(BUILD)/rel $(BUILD)/unit/obj $(BUILD)/unit-vg/obj $(BUILD)/cov/obj $(BUILD)/cov-rel $(BUILD)/knockout \
    -name '*.d' 2>/dev/null)
