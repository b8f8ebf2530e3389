/*
 * benchio.h - what the ceiling plugins (ert, spec) share: running a CUDA
 * benchmark program without a shell and reading its output.
 *
 * The output format is ert-bench's (plugins/ert/bench_main.cu): one line per
 * record, TAB-separated, the first field a type, every other field
 * key=value split at the first '='; '#' lines are comments.
 *
 * Linked into ert.so and spec.so (PIC, hidden) and into their unit tests.
 * libc only.
 */
#ifndef ROOFLINE_BENCHIO_H
#define ROOFLINE_BENCHIO_H

#include <stddef.h>

#include "rooflined/plugin.h"

struct benchio_line {
	const char *type;
	struct rl_field *fields;   /* NULL-terminated, points into the doc */
	size_t nfields;
	size_t lineno;             /* 1-based line in the file */
};

/* A parsed output; owns its text and line tables. */
struct benchio_doc {
	char *buf;
	struct benchio_line *lines;
	size_t n;
};

/*
 * Parse buf (NUL-terminated; takes ownership, it is split in place).
 * Returns 0, -ENOMEM, or -EINVAL for a line with a field lacking '=' or an
 * empty key (*bad_line gets its 1-based number; doc is empty then).
 */
int benchio_parse(char *buf, struct benchio_doc *doc, size_t *bad_line);

/* Read the file at path and parse it.  0, -errno, or as benchio_parse. */
int benchio_load(const char *path, struct benchio_doc *doc, size_t *bad_line);

void benchio_release(struct benchio_doc *doc);

/* Value of key in line, or NULL. */
const char *benchio_get(const struct benchio_line *l, const char *key);

/* Value of key as a finite double: 0, -ENOENT (absent) or -EINVAL. */
int benchio_get_double(const struct benchio_line *l, const char *key,
		       double *out);

/*
 * The program to run: explicit (when not NULL and not empty), else
 * $ROOFLINE_LIBEXEC/name when that file is executable, else name itself (to
 * be looked up in PATH).  Caller frees.  NULL only when out of memory.
 */
char *benchio_resolve(const char *explicit_path, const char *name);

/*
 * Run argv[0] with argv (no shell: execv when argv[0] holds a '/', execvp
 * otherwise), stdin from /dev/null, stdout to out_path and stderr to
 * err_path (both created or truncated).  Waits at most timeout_s seconds
 * (0: no limit), then kills it.  Returns 0 with *status set to the exit
 * status (128 + signal number when a signal ended it); -ENOENT, -EACCES...
 * when it could not be started; -ETIMEDOUT when it was killed for time; or
 * another -errno (files, fork).
 */
int benchio_run(char *const argv[], const char *out_path, const char *err_path,
		long timeout_s, int *status);

/*
 * The last non-empty line of the file at path, without its newline, into
 * buf (size bytes; truncated to fit).  Returns 0, -ENOENT when the file is
 * missing or has no such line, or -errno.
 */
int benchio_last_line(const char *path, char *buf, size_t size);

/*
 * A record being built for rl_emit: fields whose text lives in the struct.
 * Adding past BENCHIO_REC_FIELDS fields or BENCHIO_REC_POOL bytes of text
 * sets `overflow` and adds nothing; check it before emitting.
 */
#define BENCHIO_REC_FIELDS 48
/* ert's sweep record holds a series' points as six lists: up to 256
 * points (ERT_MAX_POINTS) of at most ~100 bytes each */
#define BENCHIO_REC_POOL 32768

struct benchio_rec {
	struct rl_field f[BENCHIO_REC_FIELDS + 1];
	char pool[BENCHIO_REC_POOL];
	size_t nf, used;
	int overflow;
};

void benchio_rec_init(struct benchio_rec *r);
/* Add key=value (both copied; a NULL value adds nothing). */
void benchio_rec_add(struct benchio_rec *r, const char *key, const char *value);
/* Add a number as "%.17g" (exact round trip). */
void benchio_rec_addd(struct benchio_rec *r, const char *key, double v);
/* Add an integer. */
void benchio_rec_addl(struct benchio_rec *r, const char *key, long long v);

/*
 * Add the GPU identity fields every ceiling record carries, from an `attr`
 * line: gpu_index, gpu_uuid, gpu_name, driver, cuda, cc.
 */
void benchio_rec_add_gpu(struct benchio_rec *r, const struct benchio_line *attr);

#endif /* ROOFLINE_BENCHIO_H */
