/*
 * stub_host.h - the stand-in host that plugin unit tests run plugins against.
 *
 * A test embeds a struct stub_host, calls stub_host_init, hands &h->ctx to
 * the plugin's init/run, and afterwards reads what the plugin did:
 *
 *   log        every line the plugin logged, as "LEVEL: message\n" (LEVEL is
 *              the enum rl_log_level number), in order
 *   emit       records.tsv lines (common/records.h) in `records`; n_records
 *              counts them; an optional on_emit hook sees each record first
 *   each_input serves the records files added with stub_host_add_input, in
 *              the order added, each under its step name; kind filtering and
 *              the early stop on a nonzero callback value as the real host
 *              (common/job_host.c); a syntax error is logged as level 0
 *   each_run_info serves the records file at `run_info` (NULL: none), under
 *              the ctx's step id, as the daemon's run records
 *   input_path a file registered with stub_host_add_file for that step, or
 *              "records.tsv": the records file served for that step; NULL
 *              when there is none or it cannot be read
 *
 * Tests may change the public fields between runs: reset n_records or the
 * buffers, edit or drop inputs (in[], n_in), set the ctx's step_id, node,
 * run_id or attempt.
 *
 * Ownership: the host owns `records` and `log` (freed by stub_host_release);
 * every string given to it (directories, step names, paths) is borrowed and
 * must outlive the host's use.
 */
#ifndef ROOFLINE_TESTS_STUB_HOST_H
#define ROOFLINE_TESTS_STUB_HOST_H

#include <stddef.h>

#include "records.h"
#include "rooflined/plugin.h"
#include "strbuf.h"

#define STUB_HOST_MAX_INPUTS 16
#define STUB_HOST_MAX_FILES 16

/* A needed step's records file, served by each_input (both borrowed). */
struct stub_input {
	const char *step;
	const char *path;
};

/* A file `name` that needed step `step` wrote, at `path` (all borrowed). */
struct stub_file {
	const char *step;
	const char *name;
	const char *path;
};

struct stub_host {
	struct rl_ctx ctx;       /* what the plugin is handed: &h->ctx */
	struct strbuf records;   /* emitted records, one records.tsv line each */
	long n_records;          /* records emitted */
	struct strbuf log;       /* "LEVEL: message\n" per line logged */
	struct stub_input in[STUB_HOST_MAX_INPUTS];
	size_t n_in;
	struct stub_file files[STUB_HOST_MAX_FILES];
	size_t n_files;
	const char *run_info;    /* records file for each_run_info, borrowed */
	/*
	 * Called with each record before it is kept (NULL: none); a nonzero
	 * value is what emit returns, and the record is not kept.
	 */
	records_fn on_emit;
	void *on_emit_arg;
};

/*
 * Set h up with empty buffers and no inputs; ctx gets the host, run_dir and
 * out_dir (borrowed, may be NULL), step_id "test", node "test", run_id 1 and
 * attempt 1.  Release with stub_host_release.
 */
void stub_host_init(struct stub_host *h, const char *run_dir,
		    const char *out_dir);

/* Free the buffers; h may be set up again with stub_host_init. */
void stub_host_release(struct stub_host *h);

/*
 * Serve the records file at path (borrowed) as needed step `step`
 * (borrowed), after the inputs added before.  0, or -ENOSPC when
 * STUB_HOST_MAX_INPUTS are there.
 */
int stub_host_add_input(struct stub_host *h, const char *step,
			const char *path);

/*
 * Let input_path(step, name) return path (all borrowed).  0, or -ENOSPC
 * when STUB_HOST_MAX_FILES are there.
 */
int stub_host_add_file(struct stub_host *h, const char *step, const char *name,
		       const char *path);

/* Forget what earlier runs emitted and logged (inputs stay). */
void stub_host_reset(struct stub_host *h);

/*
 * Call fn for each emitted record of `kind` (NULL: every kind), in order, on
 * a copy (the plugin may emit meanwhile).  Returns 0, fn's nonzero value
 * (which stops the walk), or -errno.
 */
int stub_host_each_record(const struct stub_host *h, const char *kind,
			  records_fn fn, void *arg);

/* How many emitted records are of `kind` (NULL: all of them). */
long stub_host_count(const struct stub_host *h, const char *kind);

/*
 * The index-th (from 0) emitted record of `kind` as "key=value\n" lines, in
 * field order (caller frees), or NULL when there is none.
 */
char *stub_host_record(const struct stub_host *h, const char *kind, long index);

/*
 * The value of key in rec, "key=value\n" lines as stub_host_record returns
 * (a leading "\n" is fine), or NULL when rec is NULL or lacks the key.  The
 * string is in a static buffer that the next call overwrites.
 */
const char *stub_host_get(const char *rec, const char *key);

#endif
