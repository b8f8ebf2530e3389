# mk/ceilings.mk - the ceilings stage: plugins ert and spec, the CUDA program
# ert-bench they run, and their unit tests.  Included by the Makefile.
#
#   plugins/ert.c, plugins/spec.c   the plugins (libc + libm only)
#   plugins/ert/benchio.c           fork/exec + TSV parsing, linked into both
#   common/plateau.c                plateau detector, linked into ert.so and
#                                   the tests (ert-bench uses its point type)
#   common/judge.c                  a trial spread as a standard deviation
#                                   (the replay's noise), into both
#   plugins/ert/topo.c              `nvidia-smi topo -m` read for a pair of
#                                   GPUs: into ert-bench and its unit test
#   plugins/ert/bench_*.cu          ert-bench (CUDA C++17), built into bin/:
#                                   bench_main.cu (command line, output format)
#                                   over the groups (compute, memory, hbm,
#                                   tensor, p2p) over bench_core.cu (NVML,
#                                   output lines, timing harness)

PLUGINS_JOB += ert spec

# ---- plugin objects: PIC, hidden (the obj/plugins/% pattern flags apply) ----
ERT_PIC_OBJS := $(B)/obj/plugins/ert/benchio.o $(B)/obj/plugins/ert/replay.o \
                $(B)/obj/plugins/ert/plateau.o

$(B)/obj/plugins/ert/plateau.o: common/plateau.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/plugins/ert/judge.o: common/judge.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/plugins/ert.so: $(ERT_PIC_OBJS) $(B)/obj/plugins/ert/judge.o
$(B)/plugins/spec.so: $(B)/obj/plugins/ert/benchio.o $(B)/obj/plugins/ert/replay.o \
	$(B)/obj/plugins/ert/judge.o
PLUGIN_LIBS_ert := -lm
PLUGIN_LIBS_spec := -lm

# ---- unit tests: the plugin .c is #included by its test ----
$(B)/tests/test_plateau: $(B)/obj/common/plateau.o
$(B)/tests/test_ert_parse: $(B)/obj/common/plateau.o $(B)/obj/plugins/ert/benchio.o $(B)/obj/plugins/ert/replay.o $(B)/obj/common/judge.o
$(B)/tests/test_ert_topo: $(B)/obj/plugins/ert/topo.o
$(B)/tests/test_ert_replay: $(B)/obj/common/plateau.o $(B)/obj/plugins/ert/benchio.o $(B)/obj/plugins/ert/replay.o $(B)/obj/common/judge.o
$(B)/tests/test_spec: $(B)/obj/plugins/ert/benchio.o $(B)/obj/plugins/ert/replay.o $(B)/obj/common/judge.o

# ---- ert-bench -------------------------------------------------------------
# sm_80 code and compute_80 PTX (JIT for later GPUs: mma.sync loops only),
# sm_86/sm_89 code (fp8 mma.sync needs sm_89), and sm_90a code, the only one
# for Hopper, so the wgmma loops are the ones an H100 runs.
comma       := ,
ERT_CU      := $(wildcard plugins/ert/bench_*.cu)
ERT_ARCHS   := $(if $(NVCC),$(filter $(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed 's/compute_//'),80 86 89 90))
ERT_GENCODE := $(foreach a,$(ERT_ARCHS),-gencode arch=compute_$(a)$(if $(filter 90,$(a)),a),code=sm_$(a)$(if $(filter 90,$(a)),a)) \
               $(if $(filter 80,$(ERT_ARCHS)),-gencode arch=compute_80$(comma)code=compute_80)
ERT_NVCCFLAGS := -O3 -std=c++17 -lineinfo -Icommon $(ERT_GENCODE) $(NVCC_HOSTFLAGS)

ifneq ($(NVCC),)
CUDA_PROGS += ert-bench

$(B)/obj/plugins/ert/%.cu.o: plugins/ert/%.cu plugins/ert/ert_bench.h plugins/ert/bench_mem.h plugins/ert/wgmma_ops.h plugins/ert/topo.h common/plateau.h
	@mkdir -p $(@D)
	$(NVCC) $(ERT_NVCCFLAGS) -c -o $@ $<

$(B)/bin/ert-bench: $(patsubst plugins/ert/%.cu,$(B)/obj/plugins/ert/%.cu.o,$(ERT_CU)) \
                    $(B)/obj/plugins/ert/topo.o
	@mkdir -p $(@D)
	$(NVCC) $(ERT_NVCCFLAGS) -o $@ $^ -ldl
endif
