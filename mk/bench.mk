# mk/bench.mk - the engine benchmark's helpers (bench/engine-bench.sh builds
# and runs them; results in docs/engine-bench.md).  Included by the Makefile.
#
#   bench/engine-submit.c   Slurm's own submit rate through daemon/slurm.c
#   bench/engine-poll.c     one slurm_poll() alone: wall and CPU
#
# OBJ is not defined yet where mk/*.mk are read: objects are named directly.
# Both link the one libslurm file and the libc-only common/ modules.
# A fragment must not become make's default goal: the one in force before
# it is put back at its end.
ENGINE_BENCH_GOAL := $(.DEFAULT_GOAL)

ENGINE_BENCH_OBJS = $(B)/obj/daemon/slurm.o \
                    $(patsubst %.c,$(B)/obj/%.o,$(COMMON_SRC))

$(B)/bench/engine-submit: $(B)/obj/bench/engine-submit.o $(ENGINE_BENCH_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(SLURM_LIBS) -ldl

$(B)/bench/engine-poll: $(B)/obj/bench/engine-poll.o $(ENGINE_BENCH_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(SLURM_LIBS) -ldl

.PHONY: engine-bench-tools
engine-bench-tools: $(B)/bench/engine-submit $(B)/bench/engine-poll

.DEFAULT_GOAL := $(ENGINE_BENCH_GOAL)

# bench/findings-bench.c: a findings step as the daemon runs it
# (bench/findings-bench.sh): daemon/step_inputs.c's step_inputs_prepare() and the
# database module, then roofline-job on the attempt directory.
FINDINGS_BENCH_GOAL := $(.DEFAULT_GOAL)

$(B)/bench/findings-bench: $(B)/obj/bench/findings-bench.o \
                           $(B)/obj/daemon/step_inputs.o $(B)/obj/daemon/db.o \
                           $(B)/obj/daemon/spool_dirs.o $(B)/obj/daemon/site_files.o \
                           $(B)/obj/daemon/session_pool.o $(B)/obj/daemon/leader.o \
                           $(patsubst %.c,$(B)/obj/%.o,$(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PQ_LIBS) -ldl

.DEFAULT_GOAL := $(FINDINGS_BENCH_GOAL)

# bench/site-bench.c: the facility site rebuilt as the daemon does it
# (bench/findings-bench.sh with SITE=1, bench/night-scale.sh).
SITE_BENCH_GOAL := $(.DEFAULT_GOAL)

# every daemon/site*.c: the site's page builders, however many files
$(B)/bench/site-bench: $(B)/obj/bench/site-bench.o $(B)/obj/daemon/db.o \
                       $(patsubst %.c,$(B)/obj/%.o,$(wildcard daemon/site*.c)) \
                       $(patsubst %.c,$(B)/obj/%.o,$(COMMON_SRC))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PQ_LIBS) -ldl

.DEFAULT_GOAL := $(SITE_BENCH_GOAL)
