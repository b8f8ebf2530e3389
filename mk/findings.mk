# mk/findings.mk - findings: the fleet and regressions plugins, the judging
# rule they share with `roofline regressions`, and their tests.  Included by
# the Makefile.
#
#   plugins/fleet.c          each GPU's ceilings against its fleet and past
#   plugins/regressions.c    each kernel of a run against its baseline
#   common/judge.c           noise, thresholds and classes (libc, libm)

PLUGINS_DAEMON += fleet regressions

JUDGE_PIC_OBJ := $(B)/obj/plugins/findings/judge.o

$(JUDGE_PIC_OBJ): common/judge.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/plugins/fleet.so: $(JUDGE_PIC_OBJ)
$(B)/plugins/regressions.so: $(JUDGE_PIC_OBJ)

$(B)/tests/test_judge: $(B)/obj/common/judge.o
$(B)/tests/test_fleet: $(B)/obj/common/judge.o
$(B)/tests/test_regressions: $(B)/obj/common/judge.o
PLUGIN_LIBS_fleet := -lm
PLUGIN_LIBS_regressions := -lm
