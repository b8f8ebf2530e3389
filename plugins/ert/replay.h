/*
 * replay.h - recorded GPUs replayed on the GPUs of a Slurm job, with
 * declared perturbations: a fleet to analyse on machines without a GPU.
 *
 * In replay mode (ert `replay:`, spec `attributes:`) the plugins emit the
 * recorded GPU's figures once per GPU the Slurm job was given, each under
 * that GPU's index and a UUID that says what it is:
 *
 *     GPU-replay-NODE-INDEX-of-RECORDED_UUID
 *
 * and every record carries a field `synthetic` (stored in ceilings.synthetic):
 *
 *     replay of RECORDED_UUID (FILE gpu I)
 *     replay of RECORDED_UUID (FILE gpu I); perturbed: RULE[; RULE...]
 *
 * the second naming, as written, every rule that changed that record.  Real
 * measurements carry no `synthetic` field.  With option `replay_as:
 * recorded` the recording's GPUs are replayed as themselves instead (their
 * indexes and UUIDs, still labelled): a recording of one GPU's ceilings and
 * kernels analysed together, wherever its jobs ran.
 *
 * A perturbation rule (one item of option `perturb`):
 *
 *     NODE/GPU [CEILINGS] CHANGE [CHANGE...]
 *
 *   NODE      a node name or a glob (fnmatch: "*", "rl-node[23]")
 *   GPU       the GPU's index on the node, or "*"
 *   CEILINGS  comma-separated ceiling names or globs ("hbm_*", "tc_*");
 *             absent: every ceiling.  Each must match a known ceiling name.
 *   CHANGE    +N% / -N%      value, min, median and max scaled by 1 + N/100
 *             sm_clock=MHZ   a power-capped clock: SM-clocked ceilings
 *                            (kind compute, l1, shared) scaled by MHZ over
 *                            their recorded sm_clock_mhz, which becomes MHZ;
 *                            other ceilings are left alone
 *             driver=TEXT    the driver version the GPU reports
 *             cuda=TEXT      the CUDA version
 *
 * e.g. "rl-node2/1 hbm_triad -12%", "rl-node3/0 fp64_fma sm_clock=1410",
 * and NODE/GPU "rl-node4" / "*" with "driver=535.54" (every GPU of
 * rl-node4).  Value changes (% and sm_clock) are changes of what was
 * measured and apply to ert's records only; spec's theoretical ceilings
 * take the identity changes (driver, cuda).  Rules apply in the order
 * written.
 *
 * Pure functions over strings and records, libc only; linked into ert.so,
 * spec.so and their tests.
 */
#ifndef ROOFLINE_REPLAY_H
#define ROOFLINE_REPLAY_H

#include <stddef.h>

#include "benchio.h"

struct replay_rule {
	char text[256];      /* the item as written (for labels and errors) */
	char node[64];       /* fnmatch pattern */
	long gpu;            /* -1: every GPU */
	char ceilings[160];  /* comma-separated patterns; "" every ceiling */
	int has_pct;
	double pct;
	double sm_clock;     /* 0: unchanged */
	char driver[64];     /* "": unchanged */
	char cuda[32];
};

struct replay_rules {
	struct replay_rule *v;
	size_t n;
};

/*
 * Parse the items of option `perturb` into rules (caller releases).  0,
 * -ENOMEM, or -EINVAL with a message naming the item and what was expected
 * in err (errsize bytes); rules is empty after a failure.
 */
int replay_rules_parse(char *const *items, size_t n, struct replay_rules *rules,
		       char *err, size_t errsize);

void replay_rules_release(struct replay_rules *rules);

/*
 * The GPUs of a Slurm job: their indexes on the node, from the value of
 * SLURM_JOB_GPUS (what slurmd sets for the job's gres: "0,1"), else from
 * CUDA_VISIBLE_DEVICES (an entry that is not a number counts by position);
 * either may be NULL.  Fills idx (at most max) and returns the count; 0
 * when neither names a GPU (not a Slurm job with GPUs).
 */
size_t replay_job_gpus(const char *slurm_job_gpus, const char *cuda_visible,
		       long *idx, size_t max);

/* One replayed GPU: what it is on the job's node and what it replays. */
struct replay_gpu {
	const char *node;           /* the job's node (borrowed) */
	long index;                 /* its index there */
	const char *recorded_uuid;  /* the recording's (borrowed) */
	const char *recorded_index;
	const char *recording;      /* the recording's file name (borrowed) */
	int as_recorded;            /* keep the recorded UUID (replay_as:
				       recorded): the recording's own GPU */
	unsigned long noise_seed;   /* nonzero: measured ceilings get trial
				       noise (replay_noise_factor) */
};

/*
 * The factor a replayed figure is scaled by to give it realistic noise:
 * 1 + z x sd, where sd is the relative standard deviation its own trials
 * showed (spread_pct over `trials`, as common/judge.h reads a spread) and z
 * a standard normal number drawn deterministically from seed and name (the
 * same seed and name always give the same z).  1 when the spread is
 * unknown.
 */
double replay_noise_factor(unsigned long seed, const char *name,
			   double spread_pct, long trials);

/*
 * "GPU-replay-NODE-INDEX-of-RECORDED_UUID" into buf (truncated to fit); the
 * recorded UUID itself when g->as_recorded.
 */
void replay_uuid(const struct replay_gpu *g, char *buf, size_t size);

/*
 * Copy record `in` (of kind `kind`) into `out` as the replayed GPU g:
 * gpu_index and gpu_uuid replaced, the rules that select g applied to a
 * `ceiling` record (value changes only when `measured`), and `synthetic`
 * added.  *changed (may be NULL) gets a bit per rule (the first 32) that
 * changed the record.  0, or -E2BIG when out overflowed.
 */
int replay_apply(const struct replay_gpu *g, const struct replay_rules *rules,
		 int measured, const char *kind, const struct benchio_rec *in,
		 struct benchio_rec *out, unsigned long *changed);

/* Whether rule r selects GPU index on node (ceilings aside). */
int replay_rule_selects(const struct replay_rule *r, const char *node,
			long index);

#endif /* ROOFLINE_REPLAY_H */
