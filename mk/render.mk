# mk/render.mk - the render stage: the gnuplot plugin and its unit tests.
# Included by the Makefile.
#
#   plugins/gnuplot.c             the plugin (options, run, chart records)
#   (one way: model, layout, drawing, terminal; gp_model.h)
#   plugins/gnuplot/gp_model.c    the model's types: names, tables, arrays
#   plugins/gnuplot/gp_findings_model.c  the fleet's, a GPU's nights' and the
#                                 trajectory step's records read
#   plugins/gnuplot/gp_chart.c    the chart model: records in, points, roofs
#   plugins/gnuplot/gp_layout.c   margins, key, roof labels and their places
#   plugins/gnuplot/gp_draw.c     the gnuplot script and data files
#   plugins/gnuplot/gp_findings.c the fleet's charts (fleet, gpu_history)
#   plugins/gnuplot/gp_term.c     gnuplot's output device (terminal lines)
#   plugins/gnuplot/gp_text.c     quoting, numbers, times
#   common/kernel_name.c          short kernel names (linked PIC)
#   plugins/gnuplot_run/gp_exec.c finding and running gnuplot (fork/exec; the
#                                 instruction plugin's too)
#
# libc and libm only; gnuplot itself (Debian's gnuplot-nox) is a program the
# plugin runs, found through its `gnuplot` option.

# A fragment must not become make's default goal: the one in force before it
# is put back at its end.
RENDER_GOAL := $(.DEFAULT_GOAL)

PLUGINS_DAEMON += gnuplot

# ---- plugin objects: PIC, hidden (the obj/plugins/% pattern flags apply) ----
GNUPLOT_PIC_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard plugins/gnuplot/gp_*.c))

$(B)/plugins/gnuplot.so: $(GNUPLOT_PIC_OBJS) $(B)/obj/plugins/gnuplot_run/gp_exec.o \
	$(B)/obj/plugins/gnuplot/common_kernel_name.o

# common/kernel_name.c (short kernel names, shared with the CLI and the report), PIC
$(B)/obj/plugins/gnuplot/common_%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
# libm: listed before the objects by the .so rule, so kept with --no-as-needed
PLUGIN_LIBS_gnuplot := -lm

# ---- unit tests: the plugin .c is #included by test_gnuplot; test_gnuplot_text
# tests gp_text alone ----
$(B)/tests/test_gnuplot: $(GNUPLOT_PIC_OBJS) $(B)/obj/plugins/gnuplot_run/gp_exec.o
$(B)/tests/test_gnuplot_text: $(B)/obj/plugins/gnuplot/gp_text.o

# (bench/render-bench.sh builds roofline-job and gnuplot.so and times them)

.DEFAULT_GOAL := $(RENDER_GOAL)
