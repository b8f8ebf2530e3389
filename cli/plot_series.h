/*
 * plot_series.h - the records behind `roofline plot --gpu` and `roofline
 * plot --trajectory`, read from PostgreSQL as the user who typed the
 * command (row-level security decides what they see: their own runs and the
 * facility's), written as one record file for the gnuplot plugin
 * (plugins/gnuplot/gp_findings.h names the records).
 */
#ifndef ROOFLINE_PLOT_SERIES_H
#define ROOFLINE_PLOT_SERIES_H

#include "db.h"

/*
 * One GPU's ceilings over its latest `nights` nights of `pipeline` (NULL:
 * the pipeline of the latest run that measured it), with its model's fleet
 * each night (the same pipeline, owner and facility flag: median, min, max,
 * count) and whether a finding flagged it that night: a `gpu_night` record
 * per (ceiling, night) into dir/records.tsv (dir is created).  All strings
 * borrowed.  0; -ENOENT when the user can see no measured ceiling of that
 * GPU; -EIO on a database or file error (printed, prefixed "roofline plot").
 */
int plot_series_gpu(struct db *db, const char *uuid, const char *pipeline,
		    long nights, const char *dir);

/*
 * One kernel's trajectory: its aggregate points at its primary precision in
 * the latest `runs` runs of `pipeline` (NULL: the pipeline of its latest
 * run) that have it, a `point` record per run and level with series "run
 * N"; the latest run's `roof` records; and a `trajectory_step` record, the
 * last step judged by common/judge.h judge_point (the previous run of the
 * trajectory as the baseline, the kernel's noise over the 10 runs before
 * the latest, as `roofline regressions` judges), into dir/records.tsv.
 * *nruns gets the runs drawn.  0, -ENOENT (no such kernel the user can see)
 * or -EIO.
 */
int plot_series_trajectory(struct db *db, const char *kernel, const char *pipeline,
			   long runs, const char *dir, int *nruns);

#endif
