/* stub_host.c - see stub_host.h. */
#include "stub_host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static void host_log(struct rl_ctx *ctx, enum rl_log_level level,
		     const char *fmt, va_list ap)
{
	struct stub_host *h = ctx->host_data;

	strbuf_addf(&h->log, "%d: ", (int)level);
	strbuf_vaddf(&h->log, fmt, ap);
	strbuf_addch(&h->log, '\n');
}

static int host_emit(struct rl_ctx *ctx, const char *kind,
		     const struct rl_field *fields)
{
	struct stub_host *h = ctx->host_data;
	int rc = h->on_emit ? h->on_emit(h->on_emit_arg, kind, fields) : 0;

	if (rc)
		return rc;
	rc = records_format(&h->records, kind, fields);
	if (rc == 0)
		h->n_records++;
	return rc;
}

/* each_input's callback with the step name put back in. */
struct serve {
	const char *step;
	int (*fn)(void *, const char *, const char *, const struct rl_field *);
	void *arg;
};

static int serve_one(void *arg, const char *kind, const struct rl_field *fields)
{
	struct serve *s = arg;

	return s->fn(s->arg, s->step, kind, fields);
}

static int host_each_input(struct rl_ctx *ctx, const char *kind,
			   int (*fn)(void *, const char *, const char *,
				     const struct rl_field *),
			   void *arg)
{
	struct stub_host *h = ctx->host_data;

	for (size_t i = 0; i < h->n_in; i++) {
		struct serve s = { h->in[i].step, fn, arg };
		struct strbuf err = STRBUF_INIT;
		int rc;

		strbuf_init(&err);
		rc = records_each(h->in[i].path, kind, serve_one, &s, &err);
		if (rc < 0 && err.len)
			strbuf_addf(&h->log, "%d: %s\n", (int)RL_LOG_ERROR, err.buf);
		strbuf_release(&err);
		if (rc)
			return rc;
	}
	return 0;
}

static int host_each_run_info(struct rl_ctx *ctx, const char *kind,
			      int (*fn)(void *, const char *, const char *,
					const struct rl_field *),
			      void *arg)
{
	struct stub_host *h = ctx->host_data;
	struct serve s = { ctx->step_id, fn, arg };

	if (!h->run_info)
		return 0;
	return records_each(h->run_info, kind, serve_one, &s, NULL);
}

static const char *host_input_path(struct rl_ctx *ctx, const char *step,
				   const char *name)
{
	struct stub_host *h = ctx->host_data;
	const char *path = NULL;

	for (size_t i = 0; i < h->n_files && !path; i++)
		if (!strcmp(h->files[i].step, step) && !strcmp(h->files[i].name, name))
			path = h->files[i].path;
	for (size_t i = 0; i < h->n_in && !path; i++)
		if (!strcmp(h->in[i].step, step) && !strcmp(name, "records.tsv"))
			path = h->in[i].path;
	return path && access(path, R_OK) == 0 ? path : NULL;
}

static const struct rl_host stub_host_api = {
	.size = sizeof(struct rl_host),
	.log = host_log,
	.emit = host_emit,
	.each_input = host_each_input,
	.input_path = host_input_path,
	.each_run_info = host_each_run_info,
};

void stub_host_init(struct stub_host *h, const char *run_dir,
		    const char *out_dir)
{
	memset(h, 0, sizeof(*h));
	strbuf_init(&h->records);
	strbuf_init(&h->log);
	h->ctx = (struct rl_ctx){ .host = &stub_host_api, .host_data = h,
				  .run_dir = run_dir, .out_dir = out_dir,
				  .step_id = "test", .node = "test", .run_id = 1,
				  .attempt = 1 };
}

void stub_host_release(struct stub_host *h)
{
	strbuf_release(&h->records);
	strbuf_release(&h->log);
}

int stub_host_add_input(struct stub_host *h, const char *step,
			const char *path)
{
	if (h->n_in == STUB_HOST_MAX_INPUTS)
		return -ENOSPC;
	h->in[h->n_in++] = (struct stub_input){ step, path };
	return 0;
}

int stub_host_add_file(struct stub_host *h, const char *step, const char *name,
		       const char *path)
{
	if (h->n_files == STUB_HOST_MAX_FILES)
		return -ENOSPC;
	h->files[h->n_files++] = (struct stub_file){ step, name, path };
	return 0;
}

void stub_host_reset(struct stub_host *h)
{
	strbuf_reset(&h->records);
	strbuf_reset(&h->log);
	h->n_records = 0;
}

int stub_host_each_record(const struct stub_host *h, const char *kind,
			  records_fn fn, void *arg)
{
	char *copy = xstrdup(strbuf_str(&h->records));
	int rc = records_each_in(copy, "records", kind, fn, arg, NULL);

	free(copy);
	return rc;
}

static int count_one(void *arg, const char *kind, const struct rl_field *fields)
{
	(void)kind, (void)fields;
	++*(long *)arg;
	return 0;
}

long stub_host_count(const struct stub_host *h, const char *kind)
{
	long n = 0;

	stub_host_each_record(h, kind, count_one, &n);
	return n;
}

struct nth {
	long index;
	char *copy;
};

static int copy_nth(void *arg, const char *kind, const struct rl_field *fields)
{
	struct nth *n = arg;
	struct strbuf sb = STRBUF_INIT;

	(void)kind;
	if (n->index-- != 0)
		return 0;
	strbuf_init(&sb);
	for (; fields->key; fields++)
		strbuf_addf(&sb, "%s=%s\n", fields->key, fields->value);
	n->copy = strbuf_detach(&sb);
	return 1;
}

char *stub_host_record(const struct stub_host *h, const char *kind, long index)
{
	struct nth n = { index, NULL };

	stub_host_each_record(h, kind, copy_nth, &n);
	return n.copy;
}

const char *stub_host_get(const char *rec, const char *key)
{
	static char buf[8192];
	size_t klen = strlen(key);
	const char *p, *nl;

	/* the first line that starts with "key=" */
	for (p = rec; p; p = (nl = strchr(p, '\n')) ? nl + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=')
			break;
	if (!p)
		return NULL;
	p += klen + 1;
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}
