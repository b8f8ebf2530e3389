# mk/findings.mk - findings: the fleet and regressions plugins, the judging
# rule they share with `roofline regressions`, and their tests.  Included by
# the Makefile.
#
#   plugins/fleet.c          each GPU's ceilings against its fleet and past
#   plugins/regressions.c    each kernel of a run against its baseline
#   common/judge.c           noise, thresholds and classes (libc, libm)
#   common/strtab.c          the names both keep once (libc)

PLUGINS_DAEMON += fleet regressions

FINDINGS_PIC_OBJS := $(B)/obj/plugins/findings/judge.o $(B)/obj/plugins/findings/strtab.o

$(B)/obj/plugins/findings/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/plugins/fleet.so: $(FINDINGS_PIC_OBJS)
$(B)/plugins/regressions.so: $(FINDINGS_PIC_OBJS)

$(B)/tests/test_judge: $(B)/obj/common/judge.o
$(B)/tests/test_strtab: $(B)/obj/common/strtab.o
$(B)/tests/test_fleet: $(B)/obj/common/judge.o $(B)/obj/common/strtab.o
$(B)/tests/test_regressions: $(B)/obj/common/judge.o $(B)/obj/common/strtab.o
PLUGIN_LIBS_fleet := -lm
PLUGIN_LIBS_regressions := -lm
