/*
 * pipeline_cluster.h - a loaded pipeline checked against the Slurm cluster
 * it would run on: what slurmctld would refuse at submission, or accept and
 * leave pending for ever, found before anything is queued.
 *
 *   - the partition (slurm.partition) exists; without one, the cluster has
 *     a default partition;
 *   - each gres item names a gres some node of the cluster has, and some
 *     node of the partition has it (with that type, that many);
 *   - each Slurm step's time limit (its `timeout`, else slurm.time), in
 *     whole minutes as Slurm gets it, is within the partition's MaxTime;
 *   - `nodes:` lists only nodes of the partition, or counts no more nodes
 *     than it has.
 *
 * A pipeline without Slurm steps is not checked.  Plain data in, messages
 * out: no libslurm here (daemon/slurm.c loads the cluster).
 */
#ifndef ROOFLINE_PIPELINE_CLUSTER_H
#define ROOFLINE_PIPELINE_CLUSTER_H

#include "pipeline.h"
#include "slurm.h"
#include "strbuf.h"

/*
 * Check p (borrowed) against cluster c (borrowed).  0, or -EINVAL with
 * every problem appended to errors as "file:line:col: message\n" lines (the
 * position of the key's value in p->file), sorted by position.
 */
int pipeline_cluster_check(const struct pipeline *p,
			   const struct slurm_cluster *c,
			   struct strbuf *errors);

#endif
