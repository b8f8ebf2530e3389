/*
 * util.h - small libc-only helpers shared by every program.
 *
 * x* allocators abort with a message on failure (callers never see NULL).
 * File helpers return 0 or -errno.
 */
#ifndef ROOFLINE_UTIL_H
#define ROOFLINE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Seconds from t0 to t (two readings of one clock). */
double util_seconds_between(const struct timespec *t0, const struct timespec *t);

/* asprintf that aborts on failure; caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Write data to path atomically: a temporary file in the same directory,
 * fsync, rename over path, fsync of the directory.  Nothing half-written is
 * ever visible under path.  Returns 0 or -errno.
 */
int util_write_file_atomic(const char *path, const void *data, size_t len,
			   mode_t mode);

/*
 * The same without the fsyncs: readers never see a half-written file, but
 * after a crash of the machine the file may be missing.  For files that are
 * rewritten when missing (the daemon's params.tsv: a step whose launch was
 * cut short is launched again).
 */
int util_write_file_replace(const char *path, const void *data, size_t len,
			    mode_t mode);

/* Read a whole file (NUL-terminated; *len excludes the NUL).  Caller frees
 * *out.  Refuses files over max_bytes with -EFBIG. */
int util_read_file(const char *path, size_t max_bytes, char **out, size_t *len);

/* mkdir -p with mode for each directory created.  0 or -errno. */
int util_mkdir_p(const char *path, mode_t mode);

/* In a child about to exec: every signal back to its default disposition
 * (the daemon ignores SIGPIPE), none blocked, every descriptor above 2
 * closed, so that nothing of the parent's but stdio crosses exec. */
void util_exec_reset(void);

/* True when rel is a relative path that cannot leave the directory it is
 * resolved against: not absolute, not empty, no ".." component. */
bool util_path_is_contained(const char *rel);

/* Levenshtein distance, capped: returns a value > cap as soon as it knows. */
size_t util_edit_distance(const char *a, const char *b, size_t cap);

/* The candidate nearest to word within edit distance 2, or
 * NULL.  candidates ends with NULL; the result is borrowed from it. */
const char *util_did_you_mean(const char *word, const char *const *candidates);

/* Strict number parsing: the whole string, no overflow.  0 or -EINVAL/-ERANGE. */
int util_parse_long(const char *s, long *out);
int util_parse_double(const char *s, double *out);

/*
 * Parse a duration in Slurm's forms ("M", "M:S", "H:M:S", "D-H", "D-H:M",
 * "D-H:M:S") or with a unit suffix ("90s", "15m", "2h", "1d").  Seconds in
 * *out.  0 or -EINVAL (also when the seconds do not fit a long).
 */
int util_parse_duration(const char *s, long *out);

/* Directory of the running executable (from /proc/self/exe); caller frees,
 * NULL when unknown. */
char *util_exe_dir(void);

#endif
