/*
 * launch.h - the ncu plugin's MPI path: a step with `tasks` starts its
 * program as that many ranks through a launcher (srun by default, or
 * mpirun), and ncu wraps the ranks the step names (option `ranks`), one
 * collection per rank, as NERSC's "Nsight Compute under srun" does:
 *
 *   srun --kill-on-bad-exit=1 [--gpu-bind=per_task:G] /bin/bash -c SCRIPT rooflined-rank
 *        OUT RANKS KIND N NCU-ARGS(N items) PROGRAM ARGS...
 *   mpirun -np TASKS /bin/bash -c SCRIPT ...   (the same after it)
 *
 * SCRIPT is constant text (the user's words are only ever its arguments):
 * each rank finds its number (SLURM_PROCID under srun; OMPI_COMM_WORLD_RANK,
 * PMIX_RANK or PMI_RANK under mpirun), writes OUT/rank-R.node (its node:
 * SLURMD_NODENAME under srun, else the host name) and OUT/rank-R.gpus
 * (nvidia-smi --query-gpu=pci.bus_id,uuid, empty without one), then execs
 *   NCU-ARGS --log-file OUT/ncu.rank-R.csv -- PROGRAM ARGS   (a named rank)
 *   PROGRAM ARGS                                             (the others)
 * with stdout and stderr in OUT/program.rank-R.log.
 *
 * libc only; nothing here is exported from the .so.
 */
#ifndef ROOFLINE_NCU_LAUNCH_H
#define ROOFLINE_NCU_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu/argv.h"
#include "ncu/gpus.h"

#define LAUNCH_RANKS_MAX 100000

/* Which ranks ncu profiles: all of them, or the listed ones. */
struct launch_ranks {
	bool all;
	long *v;        /* sorted, distinct, each < tasks */
	size_t n;
};

/*
 * Parse the `ranks` option (items "all" or rank numbers; none: rank 0)
 * against tasks.  0, or -EINVAL with why in err (err_size bytes).
 */
int launch_ranks_parse(const struct rl_strlist *items, long tasks,
		       struct launch_ranks *r, char *err, size_t err_size);
void launch_ranks_release(struct launch_ranks *r);
/* The i-th profiled rank (i < launch_ranks_count). */
size_t launch_ranks_count(const struct launch_ranks *r, long tasks);
long launch_ranks_at(const struct launch_ranks *r, size_t i);

/*
 * The launcher's command line around ncu_argv (argv_build's, which holds
 * "--log-file" PATH "--" PROGRAM ARGS...: the log file is replaced per
 * rank) into out (empty, zeroed).  launcher_path: srun's or mpirun's
 * path; mpirun gets "-np TASKS"; srun gets "--gpu-bind=per_task:G" when
 * gpus_per_task G > 0 (Slurm 22.05's srun gives every task all of the
 * job's GPUs of its node otherwise, whatever the job's --gpus-per-task).  Borrows everything; 0 or -ENOMEM or
 * -EINVAL (ncu_argv without "--log-file").
 */
int launch_build(struct argv_buf *out, const char *launcher,
		 const char *launcher_path, long tasks, long gpus_per_task,
		 const struct launch_ranks *r, const char *out_dir,
		 char *const *ncu_argv);

/* What rank `rank` wrote about itself into out_dir: its node (into node,
 * "" when unknown) and the GPUs of that node (g, zeroed; none without
 * nvidia-smi).  0 or -errno when the node file is missing (the rank never
 * started). */
int launch_rank_info(const char *out_dir, long rank, char *node,
		     size_t node_size, struct gpus *g);

#endif
