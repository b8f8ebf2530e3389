# mk/pipeline.mk - the pipeline front end: YAML tree, cron schedules, the
# pipeline loader and checker, `roofline validate`, and their tests.
#
# Included by the Makefile after the module lists are set and before any
# rule uses them.  OBJ is not defined yet at this point: objects are named
# with $(B)/obj/... directly.

# cron is libc only: every program may use it (the daemon fires schedules).
COMMON_SRC += common/cron.c

# The pipeline loader: daemon/pipeline.c checks a file with the help of
# daemon/plugin_check.c (plugins and their options) and common/yaml_tree.c
# (libyaml).  Extra prerequisites of a link rule land in its $^ once each,
# whether or not the Makefile's own lists name them too.
PIPELINE_OBJS := $(B)/obj/daemon/pipeline.o $(B)/obj/daemon/plugin_check.o \
                 $(B)/obj/daemon/pipeline_app.o $(B)/obj/common/yaml_tree.o
$(B)/bin/roofline: $(PIPELINE_OBJS)
$(B)/bin/rooflined: $(PIPELINE_OBJS)
# The check against the cluster (roofline submit, validate --cluster): plain
# data in, so its test needs no libslurm.
$(B)/bin/roofline: $(B)/obj/daemon/pipeline_cluster.o

# Unit tests: the Makefile links tests/unit/stub_host.o (the stand-in host)
# and $(COMMON_SRC) objects plus $(TEST_LIBS_x); extra objects come in as
# prerequisites.  test_pipeline loads the smoke plugin and the test plugins
# (order-only: built, not linked).
TEST_LIBS_yaml_tree := $(YAML_LIBS)
TEST_LIBS_pipeline  := $(YAML_LIBS)
$(B)/tests/test_yaml_tree: $(B)/obj/common/yaml_tree.o
TEST_LIBS_pipeline_cluster := $(YAML_LIBS)
$(B)/tests/test_pipeline_cluster: $(PIPELINE_OBJS) $(B)/obj/daemon/pipeline_cluster.o
$(B)/tests/test_pipeline: $(PIPELINE_OBJS) | $(B)/plugins/smoke.so \
	$(B)/test-plugins/pipetest.so $(B)/test-plugins/abi_mismatch.so

# A test plugin with one option of every type (list, command, path, ...).
$(B)/obj/tests/pipelines/%.o: CFLAGS += -fPIC -fvisibility=hidden
$(B)/test-plugins/pipetest.so: $(B)/obj/tests/pipelines/pipetest.o
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -o $@ $^
