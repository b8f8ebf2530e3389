# rooflined - one GNU Makefile for everything.
#
#   make [VARIANT=debug|san|release]   build programs, plugins, CUDA kernels
#   make check                         install deps, start the local cluster,
#                                      run unit + integration tests, stop it
#   make fuzz / fuzz-check             the fuzz targets (mk/fuzz.mk, clang)
#   make demo                          the end-to-end demo
#   make jobside                       only what a compute node needs (libc,
#                                      CUDA): roofline-job, job-side plugins
#   make install PREFIX=/usr/local DESTDIR=   (also SYSCONFDIR, LOCALSTATEDIR:
#                                      mk/flags.mk, mk/install.mk)
#   make deb                           the Debian packages (mk/deb.mk)
#
# Outputs go to build/$(VARIANT)/{bin,lib/rooflined/plugins,tests}.

VARIANT ?= debug

B       := build/$(VARIANT)
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)

# Flags, libraries (pkg-config) and install directories: mk/flags.mk.
include mk/flags.mk

# CUDA architectures this nvcc supports, out of the ones we target.
CUDA_ARCHS := $(if $(NVCC),$(filter $(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed 's/compute_//'),70 80 90))
# NVCC_HOSTFLAGS: flags for nvcc's host compiler and linker (-Xcompiler=...,
# -Xlinker=...): debian/rules passes Debian's hardening through them.
NVCC_HOSTFLAGS ?=
NVCCFLAGS  := -O3 -std=c++17 -lineinfo $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) $(NVCC_HOSTFLAGS)

# ---- modules ---------------------------------------------------------------
# common/: libc-only helpers shared by every program (job side included).
COMMON_SRC := common/log.c common/records.c common/strbuf.c common/util.c \
              common/plugin_loader.c common/options.c common/job_host.c common/app_env.c \
              common/paths.c common/html.c common/utf8.c \
              common/kernel_name.c
# Modules that wrap one external library each.
YAML_SRC   := common/yaml_tree.c
DB_SRC     := daemon/db.c
SLURM_SRC  := daemon/slurm.c

DAEMON_SRC := $(YAML_SRC) $(DB_SRC) $(SLURM_SRC) daemon/config.c \
              daemon/engine.c daemon/engine_state.c daemon/runs.c \
              daemon/launch.c daemon/ingest.c daemon/session_pool.c \
              daemon/schedule.c \
              daemon/migrate.c daemon/step_inputs.c \
              daemon/notify.c daemon/partitions.c \
              daemon/site.c daemon/site_child.c daemon/site_files.c daemon/site_page.c \
              daemon/site_tonight.c daemon/spool_dirs.c \
              daemon/step_policy.c daemon/leader.c daemon/spool_space.c
CLI_SRC    := $(wildcard cli/*.c)

# Plugins: one .c each (plugins/<name>.c) or a directory with <name>.c.
# Adding one: the file, its name here, its test (plugins/README.md).
PLUGINS_JOB    := smoke
PLUGINS_DAEMON :=
PLUGINS         = $(PLUGINS_JOB) $(PLUGINS_DAEMON)
TEST_PLUGINS   := abi_mismatch short_struct no_symbol wrong_name bad_options

# CUDA programs: kernels/<name>.cu -> bin/<name>
CUDA_PROGS := $(basename $(notdir $(wildcard kernels/*.cu)))

-include $(filter-out mk/flags.mk,$(wildcard mk/*.mk))

# Fragments may define targets; `make` alone still means `make all`.
.DEFAULT_GOAL := all

OBJ = $(patsubst %.c,$(B)/obj/%.o,$(1))

.SECONDARY:
.PHONY: FORCE all jobside cuda check unit unit-build integration demo install clean bench \
        layering
all: $(B)/bin/rooflined $(B)/bin/roofline $(B)/bin/roofline-job \
     $(foreach p,$(PLUGINS),$(B)/plugins/$(p).so) cuda

jobside: $(B)/bin/roofline-job $(foreach p,$(PLUGINS_JOB),$(B)/plugins/$(p).so) cuda

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/plugins/%.o: CFLAGS += -fPIC -fvisibility=hidden
$(B)/obj/tests/plugins/%.o: CFLAGS += -fPIC -fvisibility=hidden

# PLUGIN_LIBS_<name>: libraries a plugin links beyond libc (set in mk/).
# -z defs: a plugin names every library it needs (a symbol left to the
# host's would load where the host happens to have that library and fail
# elsewhere: hierarchical.so's fmin on the GPU machine); not in the
# sanitizer builds, whose runtime the host brings.
PLUGIN_ZDEFS := $(if $(filter san fuzz,$(VARIANT)),,-Wl,-z,defs)
$(B)/plugins/%.so: $(B)/obj/plugins/%.o
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) $(PLUGIN_ZDEFS) -o $@ $^ $(PLUGIN_LIBS_$*)

$(B)/test-plugins/%.so: $(B)/obj/tests/plugins/%.o
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -o $@ $^

$(B)/bin/roofline-job: $(call OBJ,jobs/roofline-job.c $(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ -ldl

$(B)/bin/rooflined: $(call OBJ,daemon/rooflined.c $(DAEMON_SRC) $(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ $(YAML_LIBS) $(PQ_LIBS) $(SLURM_LIBS) -ldl

# (mk/pipeline.mk adds the pipeline loader to DAEMON_SRC and roofline)
# (libslurm too: submit checks a pipeline against the cluster, through
# daemon/slurm.c, before queueing it)
$(B)/bin/roofline: $(call OBJ,$(CLI_SRC) $(YAML_SRC) $(DB_SRC) $(SLURM_SRC) $(COMMON_SRC) common/judge.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ $(YAML_LIBS) $(PQ_LIBS) $(SLURM_LIBS) $(JSONC_LIBS) -ldl

$(B)/obj/cli/roofline.o $(B)/obj/jobs/roofline-job.o $(B)/obj/daemon/rooflined.o: \
	CPPFLAGS += $(VERSION_CPPFLAGS)
$(B)/obj/cli/roofline.o $(B)/obj/jobs/roofline-job.o $(B)/obj/daemon/rooflined.o: VERSION
# The daemon's default configuration file (mk/flags.mk); the stamp changes,
# and rooflined.o is rebuilt, only when SYSCONFDIR does.
$(B)/obj/daemon/rooflined.o: CPPFLAGS += -DROOFLINE_CONFIG_FILE='"$(CONFIG_FILE)"'
$(B)/obj/daemon/rooflined.o: $(B)/config-file.stamp
$(B)/config-file.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(CONFIG_FILE)' | cmp -s - $@ || echo '$(CONFIG_FILE)' >$@
# The CLI's client configuration file, the same way.
$(B)/obj/cli/cli_conf.o: CPPFLAGS += -DROOFLINE_CLIENT_CONFIG_FILE='"$(CLIENT_CONFIG_FILE)"'
$(B)/obj/cli/cli_conf.o: $(B)/client-config-file.stamp
$(B)/client-config-file.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(CLIENT_CONFIG_FILE)' | cmp -s - $@ || echo '$(CLIENT_CONFIG_FILE)' >$@
FORCE:
$(B)/obj/cli/cli_json.o: CPPFLAGS += $(JSONC_CFLAGS)
$(B)/obj/tests/unit/test_cli_json.o: CPPFLAGS += -Icli
$(B)/obj/tests/unit/test_cli_conf.o: CPPFLAGS += -Icli \
	-DROOFLINE_CLIENT_CONFIG_FILE_TEST='"$(CLIENT_CONFIG_FILE)"'
$(B)/obj/tests/unit/test_cli_conf.o: $(B)/client-config-file.stamp
$(B)/tests/test_cli_conf: $(B)/obj/cli/cli_conf.o
$(B)/tests/test_cli_json: $(B)/obj/cli/cli_json.o $(B)/obj/daemon/db.o
TEST_LIBS_cli_json := $(PQ_LIBS) $(JSONC_LIBS)

# ---- CUDA --------------------------------------------------------------------
ifeq ($(NVCC),)
cuda:
	@echo "nvcc not found: CUDA kernels and benchmarks not built"
else ifeq ($(VARIANT),san)
# Sanitizers do not reach device code: the debug and release builds compile it.
cuda:
	@echo "VARIANT=san: CUDA programs are built by the debug and release variants"
else
cuda: $(foreach p,$(CUDA_PROGS),$(B)/bin/$(p))
$(B)/bin/%: kernels/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -o $@ $< $(NVCC_LIBS_$*)
endif

# ---- tests -------------------------------------------------------------------
UNIT_TESTS := $(basename $(notdir $(wildcard tests/unit/test_*.c)))
UNIT_BINS  := $(foreach t,$(UNIT_TESTS),$(B)/tests/$(t))

# Every unit test links the stand-in host that plugin tests run plugins against.
$(B)/tests/test_%: $(B)/obj/tests/unit/test_%.o $(B)/obj/tests/unit/stub_host.o \
                   $(call OBJ,$(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ $(TEST_LIBS_$*) $(CMOCKA_LIBS) -ldl -lm

# root's work in the run directories (daemon/spool_dirs.c, site_files.c)
$(B)/tests/test_spool_dirs: $(B)/obj/daemon/spool_dirs.o $(B)/obj/daemon/site_files.o

TEST_DEPS  := $(foreach p,$(TEST_PLUGINS),$(B)/test-plugins/$(p).so) $(B)/tests/slurm_pg_probe
# The benchmarks' C helpers (bench/*.c, mk/bench.mk, analyze.mk, collect.mk)
# are built with the tests, and tests/integration/bench-smoke.t runs them
# through their scripts, so that they do not rot.
TEST_DEPS  += $(foreach p,engine-submit engine-poll findings-bench site-bench analysis-bench \
                ncu-parse-bench,$(B)/bench/$(p))

unit-build: all $(UNIT_BINS) $(TEST_DEPS)

unit: unit-build
	@set -e; for t in $(UNIT_BINS); do \
	  ROOFLINE_BUILD=$(B) $$t; done

# The README's test command.  Installs what is missing, then runs the unit
# tests in the debug and san builds, the layering check (scripts/layering),
# the fuzz targets' short run (mk/fuzz.mk: each target's corpus and 5 s of
# fuzzing), builds the Debian packages from a clean
# copy of the tree (mk/deb.mk: release variant, lintian), and runs the
# integration tests (san build) and the package tests (tests/package/: the
# .debs installed, run and purged; docs/install.md run as written) on three
# freshly started local clusters, which it stops whatever happens.  `make
# package-check` is the package tests alone.  The builds use every core
# (JOBS); within each group the tests run one at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# CUDA code is compiled (not run: no GPU here) for one architecture only,
# sm_90, to keep the check short (the unit-build's and roofline-gpu's,
# DEB_CUDA_ARCHS); `make`, `make VARIANT=release` and `make deb` build every
# architecture.  The integration tests run in four groups at once, each on a
# cluster of its own (scripts/run-integration --jobs 4): they mostly wait.
CHECK_CUDA := ERT_ARCHS=90 CUDA_ARCHS=90

check:
	scripts/deps
	$(MAKE) -j$(JOBS) VARIANT=debug $(CHECK_CUDA) unit-build
	$(MAKE) VARIANT=debug $(CHECK_CUDA) unit
	scripts/layering --build build/debug
	$(MAKE) -j$(JOBS) VARIANT=san unit-build
	$(MAKE) VARIANT=san unit
	$(MAKE) -j$(JOBS) fuzz-check
	$(MAKE) deb DEB_JOBS=$(JOBS) DEB_CUDA_ARCHS=90
	ROOFLINE_DEBS=$(CURDIR)/$(DEB_DIR) \
	  scripts/run-integration VARIANT=san --no-build --jobs 4 \
	  tests/integration/*.t tests/package/*.t

# The layers of docs/architecture.md: includes, calls (nm over this build's
# objects) and loops; seconds.  tests/integration/layering.t tests the check.
layering: unit-build
	scripts/layering --build $(B)

integration: all $(TEST_DEPS)
	scripts/run-integration VARIANT=$(VARIANT) --no-build

demo:
	scripts/deps
	$(MAKE) VARIANT=release all
	scripts/demo

# Each benchmark is a script (they start their own clusters or need the GPU);
# docs/benchmarks.md lists them with their results.  BENCH_SMOKE=1 runs one
# at its smoke size; tests/integration/bench-smoke.t runs them all so.
bench:
	$(MAKE) VARIANT=release all
	@echo "benchmarks: $$(ls bench/*.sh | tr '\n' ' ')"
	@echo "results and the commands that produced them: docs/benchmarks.md"

# install, the generated files (unit, configuration, manuals): mk/install.mk

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
# A dependency file names its object's source first, and -MP gives only the
# headers an empty rule: a source that has moved or gone (a file moved
# between folders) gets one here, so that make rebuilds the object from
# where its source is now (or leaves it, when nothing needs it) instead of
# stopping at a prerequisite it cannot make.
MOVED_SRCS := $(shell find build -name '*.d' -exec awk 'FNR == 1 { s = "" } \
	s == "" { for (i = (FNR == 1 ? 2 : 1); i <= NF; i++) if ($$i != "\\") { s = $$i; break } \
	if (s != "") { if ((getline l < s) < 0) print s; close(s); nextfile } }' {} + 2>/dev/null | sort -u)
$(foreach s,$(MOVED_SRCS),$(eval $(s):))

# Test tools: small programs the integration tests drive.
$(B)/tests/slurm_pg_probe: $(call OBJ,tests/tools/slurm_pg_probe.c $(DB_SRC) $(SLURM_SRC) $(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PQ_LIBS) $(SLURM_LIBS) -ldl
