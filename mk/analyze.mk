# mk/analyze.mk - the analyze stage: the hierarchical plugin, the arithmetic
# it shares with its tests and benchmark, and the analysis benchmark.
# Included by the Makefile.
#
#   plugins/hierarchical.c             the plugin (libc only): options, inputs,
#                                      matching, planning, warnings
#   plugins/hierarchical/points.c      its emitting half (point, roof records)
#   plugins/hierarchical/roofline_math.c  point arithmetic, kernel-record
#                                      reading, kernel sums, ceilings per GPU
#                                      (no host)
#   plugins/ncu/ncu_table.c            the metric table (etc/ncu-metrics.tsv),
#   plugins/ncu/ncu_text.c, ncu_value.c  with its text and number helpers

PLUGINS_DAEMON += hierarchical

# ---- plugin objects: PIC, hidden (the obj/plugins/% pattern flags apply) ----
HIER_PIC_OBJS := $(B)/obj/plugins/hierarchical/points.o \
                 $(B)/obj/plugins/hierarchical/ranks.o \
                 $(B)/obj/plugins/hierarchical/roofline_math.o \
                 $(B)/obj/plugins/ncu/ncu_table.o \
                 $(B)/obj/plugins/ncu/ncu_text.o \
                 $(B)/obj/plugins/ncu/ncu_value.o

$(B)/plugins/hierarchical.so: $(HIER_PIC_OBJS)

# ---- unit tests: the plugin .c is #included by its test ----
# the metric table and its helpers, as the tests and the benchmark link them
NCU_TABLE_OBJS := $(B)/obj/plugins/ncu/ncu_table.o $(B)/obj/plugins/ncu/ncu_text.o \
                  $(B)/obj/plugins/ncu/ncu_value.o

$(B)/tests/test_roofline_math: $(B)/obj/plugins/hierarchical/roofline_math.o $(NCU_TABLE_OBJS)
$(B)/tests/test_hierarchical: $(B)/obj/plugins/hierarchical/points.o \
	$(B)/obj/plugins/hierarchical/ranks.o \
	$(B)/obj/plugins/hierarchical/roofline_math.o $(NCU_TABLE_OBJS)

# ---- the analysis benchmark (bench/analysis-bench.sh builds and runs it) ----
$(B)/bench/analysis-bench: bench/analysis-bench.c $(B)/obj/plugins/hierarchical/points.o \
	$(B)/obj/plugins/hierarchical/ranks.o \
	$(B)/obj/plugins/hierarchical/roofline_math.o $(NCU_TABLE_OBJS) \
	$(B)/obj/common/records.o $(B)/obj/common/strbuf.o $(B)/obj/common/util.o \
	$(B)/obj/common/options.o
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(filter %.o,$^) -lm

# ---- the instruction plugin (Instruction Roofline; docs/instruction-roofline.md) ----
#   plugins/instruction.c               options, inputs, points, records
#   plugins/instruction/ir_model.c      a kernel's point at a level (the model)
#   plugins/instruction/ir_chart.c      its gnuplot chart (runs gnuplot via
#                                       plugins/gnuplot_run/gp_exec)
#   plugins/instruction/instr_math.c    the model's formulas (libc only)
PLUGINS_DAEMON += instruction
IR_PIC_OBJS := $(B)/obj/plugins/instruction/ir_chart.o \
               $(B)/obj/plugins/instruction/ir_model.o \
               $(B)/obj/plugins/instruction/instr_math.o \
               $(B)/obj/plugins/gnuplot_run/gp_exec.o \
               $(B)/obj/plugins/ncu/ncu_table.o \
               $(B)/obj/plugins/ncu/ncu_text.o \
               $(B)/obj/plugins/ncu/ncu_value.o

$(B)/plugins/instruction.so: $(IR_PIC_OBJS)
$(B)/tests/test_instr_math: $(B)/obj/plugins/instruction/instr_math.o
PLUGIN_LIBS_instruction := -lm
PLUGIN_LIBS_hierarchical := -lm # fmin, fmax (plugins/hierarchical/ranks.c)
$(B)/tests/test_instruction: $(B)/obj/plugins/instruction/ir_chart.o \
	$(B)/obj/plugins/instruction/ir_model.o \
	$(B)/obj/plugins/instruction/instr_math.o $(B)/obj/plugins/gnuplot_run/gp_exec.o \
	$(NCU_TABLE_OBJS)
