# mk/fuzz.mk - fuzz targets for every parser of text a user controls
# (tests/fuzz/, libFuzzer with ASan and UBSan; clang only).  Included by the
# Makefile.
#
#   make fuzz          build them into build/fuzz/fuzz/ (VARIANT=fuzz, clang)
#   make fuzz-check    build, then each target replays its corpus and fuzzes
#                      for FUZZ_SECONDS (default 5); `make check` runs it
#   scripts/fuzz --help   longer runs, one target, where inputs and crashes go
#
# A target is tests/fuzz/fuzz_<name>.c plus the shared harness.c; its seed
# corpus is tests/fuzz/corpus/<name>/ (a regression input for every crash
# found stays there).  Adding one: the file, its name in FUZZ_TARGETS, its
# objects below, a corpus.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 5
FUZZ_TARGETS := records exit_record pipeline ncu_csv perturb cron

.PHONY: fuzz fuzz-build fuzz-check
fuzz:
	$(MAKE) VARIANT=fuzz CC=$(FUZZ_CC) fuzz-build

fuzz-check: fuzz
	scripts/fuzz --seconds $(FUZZ_SECONDS)

ifeq ($(VARIANT),fuzz)
# Everything libc-only that the targets reach (the common/ modules link one
# another: job_host needs the plugin loader and options, ...).
FUZZ_BASE := $(patsubst %,$(B)/obj/%.o,common/log common/records \
               common/strbuf common/util common/plugin_loader common/options \
               common/job_host common/app_env common/paths common/cron common/utf8 \
               tests/fuzz/harness)

$(B)/fuzz/fuzz_pipeline: $(patsubst %,$(B)/obj/%.o,daemon/pipeline \
	daemon/plugin_check daemon/pipeline_app common/yaml_tree)
$(B)/fuzz/fuzz_ncu_csv: $(patsubst %,$(B)/obj/plugins/ncu/%.o,ncu_csv ncu_table \
	ncu_record ncu_text ncu_value strmap)
$(B)/fuzz/fuzz_perturb: $(B)/obj/plugins/ncu/perturb.o \
	$(B)/obj/plugins/ert/replay.o $(B)/obj/plugins/ert/benchio.o \
	$(B)/obj/common/judge.o
FUZZ_LIBS_pipeline := $(YAML_LIBS)
FUZZ_LIBS_perturb  := -lm
FUZZ_LIBS_ncu_csv  := -lm

$(B)/fuzz/fuzz_%: $(B)/obj/tests/fuzz/fuzz_%.o $(FUZZ_BASE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(FUZZ_LIBS_$*) -ldl

fuzz-build: $(foreach t,$(FUZZ_TARGETS),$(B)/fuzz/fuzz_$(t))
endif
