# mk/collect.mk - metric collection: the ncu and ncu_import plugins, the ncu
# CSV reader they share, their unit tests, and the reference kernels' libraries.
# Included by the Makefile.
#
#   plugins/ncu.c, plugins/ncu_import.c   the plugins (libc only)
#   plugins/ncu/argv.c                    the ncu plugin's command line
#   plugins/ncu/adapt.c                   its targeted second pass (tensor work)
#   plugins/ncu/perturb.c                 ncu_import's declared changes (tests)
#   plugins/ncu/ncu_csv.c                 the CSV reader (raw, details pages)
#   plugins/ncu/ncu_table.c               the metric table
#   plugins/ncu/ncu_record.c              device and kernel records
#   plugins/ncu/ncu_text.c, ncu_value.c,  fields, lines, errors; numbers and
#   plugins/ncu/strmap.c                  units; name lookups.  All six are
#                                         linked into both plugins
#   kernels/*.cu                          reference kernels (built by the
#                                         Makefile's kernels rule)
#   etc/ncu-metrics.tsv                   the metric set per architecture

PLUGINS_JOB += ncu ncu_import

# ---- plugin objects: PIC, hidden (the obj/plugins/% pattern flags apply) ----
# The plugins/ncu/ modules both plugins link (mk/analyze.mk links the metric
# table's three into hierarchical.so too); the tests and the benchmark link
# the same objects.
NCU_MODULES  := ncu_csv ncu_table ncu_record ncu_text ncu_value strmap
NCU_PIC_OBJS := $(patsubst %,$(B)/obj/plugins/ncu/%.o,$(NCU_MODULES))
NCU_OBJS     := $(NCU_PIC_OBJS)

$(B)/plugins/ncu.so: $(NCU_PIC_OBJS) $(B)/obj/plugins/ncu/argv.o $(B)/obj/plugins/ncu/gpus.o $(B)/obj/plugins/ncu/launch.o $(B)/obj/plugins/ncu/adapt.o
$(B)/plugins/ncu_import.so: $(NCU_PIC_OBJS) $(B)/obj/plugins/ncu/perturb.o

# ---- unit tests: the plugin .c is #included by its test ----
$(B)/tests/test_ncu_csv: $(NCU_OBJS)
$(B)/tests/test_ncu_plugin: $(NCU_OBJS) $(B)/obj/plugins/ncu/argv.o $(B)/obj/plugins/ncu/gpus.o $(B)/obj/plugins/ncu/launch.o $(B)/obj/plugins/ncu/adapt.o
$(B)/tests/test_ncu_import: $(NCU_OBJS) $(B)/obj/plugins/ncu/perturb.o
$(B)/tests/test_ncu_launch: $(NCU_OBJS) $(B)/obj/plugins/ncu/argv.o $(B)/obj/plugins/ncu/gpus.o $(B)/obj/plugins/ncu/launch.o

# ---- the parse benchmark (bench/ncu-parse-bench.sh builds and runs it) ----
$(B)/bench/ncu-parse-bench: bench/ncu-parse-bench.c $(NCU_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(filter %.c %.o,$^)

# ---- reference kernels ----
NVCC_LIBS_dgemm := -lcublas
NVCC_LIBS_tensor_gemm := -lcublas
NVCC_LIBS_gemm_lt := -lcublasLt
