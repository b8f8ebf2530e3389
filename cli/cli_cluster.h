/*
 * cli_cluster.h - a pipeline checked against the Slurm cluster this machine
 * is a client of (SLURM_CONF, else /etc/slurm/slurm.conf), through
 * daemon/slurm.c and daemon/pipeline_cluster.c: the partition, gres, time
 * limits and nodes that slurmctld would refuse.
 */
#ifndef ROOFLINE_CLI_CLUSTER_H
#define ROOFLINE_CLI_CLUSTER_H

#include <stdbool.h>

#include "pipeline.h"

/*
 * Check p (borrowed) against the cluster.  0 when it fits, or when it has no
 * Slurm step; -EINVAL when it does not fit, every problem printed to stderr
 * as "file:line:col: message".  A cluster that cannot be reached (no
 * readable configuration, slurmctld not answering) gives, when `required`,
 * one error line and -EIO; otherwise one warning line and 0.  Messages are
 * prefixed by "roofline CMD: ".
 */
int cli_cluster_check(const char *cmd, const struct pipeline *p, bool required);

#endif
