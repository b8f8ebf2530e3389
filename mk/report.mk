# mk/report.mk - the run report: the report plugin and its unit test.
# Included by the Makefile.
#
#   plugins/report.c              the plugin (options, run, the page file)
#   plugins/report/rp_model.c     records in: kernels, roofs, ceilings, run
#   plugins/report/rp_svg.c       the hierarchical roofline as SVG
#   plugins/report/rp_advice.c    what to try next, per kernel
#   plugins/report/rp_html.c      the page: sections, table, links
#   plugins/report/rp_text.c      HTML escaping, numbers
#   common/strbuf.c, records.c, util.c, html.c, kernel_name.c   linked (PIC)
#                                 into report.so
#
# libc and libm only.

REPORT_GOAL := $(.DEFAULT_GOAL)

PLUGINS_DAEMON += report

REPORT_PIC_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard plugins/report/rp_*.c)) \
                   $(patsubst %,$(B)/obj/plugins/report/common_%.o,strbuf records util html kernel_name)

$(B)/obj/plugins/report/common_%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/plugins/report.so: $(REPORT_PIC_OBJS)
PLUGIN_LIBS_report := -lm

# the plugin .c is #included by its test; the modules are linked
$(B)/tests/test_report: $(patsubst %.c,$(B)/obj/%.o,$(wildcard plugins/report/rp_*.c))

.DEFAULT_GOAL := $(REPORT_GOAL)
