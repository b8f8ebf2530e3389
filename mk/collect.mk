# mk/collect.mk - metric collection: the ncu and ncu_import plugins, the ncu
# CSV reader they share, their unit tests, and the reference kernels' libraries.
# Included by the Makefile.
#
#   plugins/ncu.c, plugins/ncu_import.c   the plugins (libc only)
#   common/ncu_csv.c                      CSV reader, metric table, kernel
#                                         records: linked (PIC) into both
#   kernels/*.cu                          reference kernels (built by the
#                                         Makefile's kernels rule)
#   etc/ncu-metrics.tsv                   the metric set per architecture

PLUGINS_JOB += ncu ncu_import

# ---- plugin objects: PIC, hidden (the obj/plugins/% pattern flags apply) ----
NCU_PIC_OBJS := $(B)/obj/plugins/ncu/ncu_csv.o

$(B)/obj/plugins/ncu/ncu_csv.o: common/ncu_csv.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/plugins/ncu.so: $(NCU_PIC_OBJS)
$(B)/plugins/ncu_import.so: $(NCU_PIC_OBJS)

# ---- unit tests: the plugin .c is #included by its test ----
$(B)/tests/test_ncu_csv: $(B)/obj/common/ncu_csv.o
$(B)/tests/test_ncu_plugin: $(B)/obj/common/ncu_csv.o
$(B)/tests/test_ncu_import: $(B)/obj/common/ncu_csv.o

# ---- the parse benchmark (bench/ncu-parse-bench.sh builds and runs it) ----
$(B)/bench/ncu-parse-bench: bench/ncu-parse-bench.c $(B)/obj/common/ncu_csv.o
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^

# ---- reference kernels ----
NVCC_LIBS_dgemm := -lcublas
