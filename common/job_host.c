/* job_host.c - see job_host.h. */
#include "job_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_env.h"
#include "log.h"
#include "options.h"
#include "plugin_loader.h"
#include "records.h"
#include "utf8.h"
#include "util.h"

void job_spec_init(struct job_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	strbuf_init(&spec->run_info);
	strbuf_init(&spec->app);
}

static void pairs_free(struct job_pair *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].a);
		free(v[i].b);
	}
	free(v);
}

void job_spec_release(struct job_spec *spec)
{
	free(spec->plugin);
	free(spec->step_id);
	free(spec->run_dir);
	free(spec->out_dir);
	pairs_free(spec->opts, spec->n_opts);
	pairs_free(spec->inputs, spec->n_inputs);
	pairs_free(spec->missing, spec->n_missing);
	strbuf_release(&spec->run_info);
	strbuf_release(&spec->app);
	job_spec_init(spec);
}

void job_spec_set(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

static void pairs_add(struct job_pair **v, size_t *n, const char *a,
		      const char *b)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].a = xstrdup(a);
	(*v)[*n].b = xstrdup(b);
	(*n)++;
}

void job_spec_add_option(struct job_spec *spec, const char *key,
			 const char *value)
{
	pairs_add(&spec->opts, &spec->n_opts, key, value);
}

void job_spec_add_input(struct job_spec *spec, const char *step,
			const char *dir)
{
	pairs_add(&spec->inputs, &spec->n_inputs, step, dir);
}

void job_spec_add_missing(struct job_spec *spec, const char *step,
			  const char *why)
{
	pairs_add(&spec->missing, &spec->n_missing, step, why);
}

bool job_spec_is_run_info(const char *kind)
{
	return strcmp(kind, "run") == 0 || strcmp(kind, "run_step") == 0 ||
	       strcmp(kind, "baseline") == 0;
}

int job_spec_add_run_info(struct job_spec *spec, const char *kind,
			  const struct rl_field *fields)
{
	if (!job_spec_is_run_info(kind))
		return -EINVAL;
	return records_format(&spec->run_info, kind, fields);
}

bool job_spec_is_app(const char *kind)
{
	return strcmp(kind, "app") == 0 || strcmp(kind, "env") == 0 ||
	       strcmp(kind, "module") == 0;
}

int job_spec_add_app(struct job_spec *spec, const char *kind,
		     const struct rl_field *fields)
{
	if (!job_spec_is_app(kind))
		return -EINVAL;
	return records_format(&spec->app, kind, fields);
}

void job_spec_format(const struct job_spec *spec, struct strbuf *out)
{
	char run[32], attempt[32];

	snprintf(run, sizeof(run), "%ld", spec->run_id);
	snprintf(attempt, sizeof(attempt), "%d", spec->attempt);
	records_format(out, "step", (const struct rl_field[]){
		{ "plugin", spec->plugin }, { "id", spec->step_id },
		{ "run", run }, { "attempt", attempt },
		{ "run_dir", spec->run_dir }, { "out_dir", spec->out_dir },
		{ NULL, NULL } });
	for (size_t i = 0; i < spec->n_opts; i++)
		records_format(out, "option", (const struct rl_field[]){
			{ "key", spec->opts[i].a }, { "value", spec->opts[i].b },
			{ NULL, NULL } });
	for (size_t i = 0; i < spec->n_inputs; i++)
		records_format(out, "input", (const struct rl_field[]){
			{ "step", spec->inputs[i].a }, { "dir", spec->inputs[i].b },
			{ NULL, NULL } });
	for (size_t i = 0; i < spec->n_missing; i++)
		records_format(out, "missing", (const struct rl_field[]){
			{ "step", spec->missing[i].a }, { "why", spec->missing[i].b },
			{ NULL, NULL } });
	strbuf_add(out, spec->run_info.buf, spec->run_info.len);
	strbuf_add(out, spec->app.buf, spec->app.len);
}

static int load_record(void *arg, const char *kind, const struct rl_field *f)
{
	struct job_spec *spec = arg;
	const char *a, *b;

	if (strcmp(kind, "step") == 0) {
		const char *run = rl_field_get(f, "run");
		const char *attempt = rl_field_get(f, "attempt");
		long v;

		job_spec_set(&spec->plugin, rl_field_get(f, "plugin"));
		job_spec_set(&spec->step_id, rl_field_get(f, "id"));
		job_spec_set(&spec->run_dir, rl_field_get(f, "run_dir"));
		job_spec_set(&spec->out_dir, rl_field_get(f, "out_dir"));
		if (run && util_parse_long(run, &v) == 0)
			spec->run_id = v;
		if (attempt && util_parse_long(attempt, &v) == 0)
			spec->attempt = (int)v;
		return 0;
	}
	if (strcmp(kind, "option") == 0 || strcmp(kind, "input") == 0) {
		bool opt = kind[0] == 'o';

		a = rl_field_get(f, opt ? "key" : "step");
		b = rl_field_get(f, opt ? "value" : "dir");
		if (!a || !b)
			return -EINVAL;
		if (opt)
			job_spec_add_option(spec, a, b);
		else
			job_spec_add_input(spec, a, b);
	}
	if (strcmp(kind, "missing") == 0) {
		a = rl_field_get(f, "step");
		b = rl_field_get(f, "why");
		if (!a || !b)
			return -EINVAL;
		job_spec_add_missing(spec, a, b);
	}
	if (job_spec_is_run_info(kind))
		return job_spec_add_run_info(spec, kind, f);
	if (job_spec_is_app(kind))
		return job_spec_add_app(spec, kind, f);
	return 0;
}

int job_spec_load(struct job_spec *spec, const char *path, struct strbuf *err)
{
	int rc = records_each(path, NULL, load_record, spec, err);

	if (rc == -EINVAL && err->len == 0)
		strbuf_addf(err, "%s: option or input record lacks a field", path);
	if (rc == 0 && (!spec->plugin || !spec->step_id || !spec->out_dir ||
			!spec->run_dir)) {
		strbuf_addf(err, "%s: no complete step record", path);
		rc = -EINVAL;
	}
	return rc;
}

/* ---- the host API handed to the plugin -------------------------------- */

struct host_state {
	const struct job_spec *spec;
	const struct rl_plugin *plugin;
	FILE *records;       /* records.tsv.tmp */
	long n_records;
	int emit_errno;      /* first write error, sticky */
	char who[256];
	char last_error[1024];
	char **paths;        /* strings returned by input_path */
	size_t n_paths;
	struct app_env app;  /* the step's settings, applied (app_env.h) */
};

static void host_log(struct rl_ctx *ctx, enum rl_log_level level,
		     const char *fmt, va_list ap)
{
	struct host_state *hs = ctx->host_data;

	if (level == RL_LOG_ERROR) {
		va_list copy;

		va_copy(copy, ap);
		vsnprintf(hs->last_error, sizeof(hs->last_error), fmt, copy);
		va_end(copy);
	}
	log_vmsg(level, hs->who, fmt, ap);
}

static int host_emit(struct rl_ctx *ctx, const char *kind,
		     const struct rl_field *fields)
{
	struct host_state *hs = ctx->host_data;
	struct strbuf line = STRBUF_INIT;
	int rc;

	strbuf_init(&line);
	rc = records_format(&line, kind, fields);
	if (rc < 0) {
		log_msg(RL_LOG_ERROR, hs->who, "plugin emitted an invalid '%s' record",
			kind);
		goto out;
	}
	if (fwrite(line.buf, 1, line.len, hs->records) != line.len) {
		rc = -errno;
		if (!hs->emit_errno)
			hs->emit_errno = errno ? errno : EIO;
		goto out;
	}
	hs->n_records++;
out:
	strbuf_release(&line);
	return rc;
}

struct each_input_arg {
	const char *step;
	int (*fn)(void *, const char *, const char *, const struct rl_field *);
	void *arg;
};

static int each_input_record(void *arg, const char *kind,
			     const struct rl_field *fields)
{
	struct each_input_arg *a = arg;

	return a->fn(a->arg, a->step, kind, fields);
}

static int host_each_input(struct rl_ctx *ctx, const char *kind,
			   int (*fn)(void *, const char *, const char *,
				     const struct rl_field *),
			   void *arg)
{
	struct host_state *hs = ctx->host_data;
	const struct job_spec *spec = hs->spec;

	for (size_t i = 0; i < spec->n_inputs; i++) {
		struct each_input_arg a = { spec->inputs[i].a, fn, arg };
		struct strbuf err = STRBUF_INIT;
		char *path = xasprintf("%s/%s", spec->inputs[i].b,
				       JOB_RECORDS_FILE);
		int rc;

		strbuf_init(&err);
		rc = records_each(path, kind, each_input_record, &a, &err);
		if (rc < 0 && err.len)
			log_msg(RL_LOG_ERROR, hs->who, "%s", err.buf);
		strbuf_release(&err);
		free(path);
		if (rc)
			return rc;
	}
	return 0;
}

static const char *host_input_path(struct rl_ctx *ctx, const char *step,
				   const char *name)
{
	struct host_state *hs = ctx->host_data;
	const struct job_spec *spec = hs->spec;

	if (!util_path_is_contained(name))
		return NULL;
	for (size_t i = 0; i < spec->n_inputs; i++) {
		char *path;

		if (strcmp(spec->inputs[i].a, step) != 0)
			continue;
		path = xasprintf("%s/%s", spec->inputs[i].b, name);
		if (access(path, R_OK) < 0) {
			free(path);
			return NULL;
		}
		hs->paths = xrealloc(hs->paths, (hs->n_paths + 1) * sizeof(char *));
		hs->paths[hs->n_paths++] = path;
		return path;
	}
	return NULL;
}

static int host_each_run_info(struct rl_ctx *ctx, const char *kind,
			      int (*fn)(void *, const char *, const char *,
					const struct rl_field *),
			      void *arg)
{
	struct host_state *hs = ctx->host_data;
	struct each_input_arg a = { hs->spec->step_id, fn, arg };
	char *copy;
	int rc;

	if (!hs->spec->run_info.len)
		return 0;
	copy = xstrdup(hs->spec->run_info.buf);
	rc = records_each_in(copy, JOB_PARAMS_FILE, kind, each_input_record,
			     &a, NULL);
	free(copy);
	return rc;
}

static const char *host_setting(struct rl_ctx *ctx, const char *key)
{
	struct host_state *hs = ctx->host_data;

	return app_env_get(&hs->app, key);
}

static const struct rl_host job_host_api = {
	.size = sizeof(struct rl_host),
	.log = host_log,
	.emit = host_emit,
	.each_input = host_each_input,
	.input_path = host_input_path,
	.each_run_info = host_each_run_info,
	.setting = host_setting,
};

const char *job_result_name(enum rl_result r)
{
	switch (r) {
	case RL_OK: return "ok";
	case RL_RETRY: return "retry";
	case RL_FAIL: return "fail";
	}
	return "fail";
}

/* Write exit.tsv last, atomically. */
static int write_exit(const struct job_spec *spec, enum rl_result r,
		      time_t started, long n_records, const char *error)
{
	char node[256] = "", t0[32], t1[32], nrec[32];
	struct strbuf sb = STRBUF_INIT;
	char *path;
	int rc;

	gethostname(node, sizeof(node) - 1);
	snprintf(t0, sizeof(t0), "%lld", (long long)started);
	snprintf(t1, sizeof(t1), "%lld", (long long)time(NULL));
	snprintf(nrec, sizeof(nrec), "%ld", n_records);
	strbuf_init(&sb);
	records_format(&sb, "exit", (const struct rl_field[]){
		{ "status", job_result_name(r) }, { "node", node },
		{ "started", t0 }, { "ended", t1 }, { "records", nrec },
		{ "error", error ? error : "" }, { NULL, NULL } });
	path = xasprintf("%s/%s", spec->out_dir, JOB_EXIT_FILE);
	rc = util_write_file_atomic(path, sb.buf, sb.len, 0644);
	if (rc < 0)
		log_error("cannot write %s: %s", path, strerror(-rc));
	free(path);
	strbuf_release(&sb);
	return rc;
}

/* Flush records.tsv.tmp to disk and rename it into place. */
static int commit_records(struct host_state *hs, const char *tmp,
			  const char *final)
{
	int rc = 0;

	if (fflush(hs->records) != 0 || fsync(fileno(hs->records)) < 0)
		rc = -errno;
	if (fclose(hs->records) != 0 && !rc)
		rc = -errno;
	hs->records = NULL;
	if (!rc && hs->emit_errno)
		rc = -hs->emit_errno;
	if (!rc && rename(tmp, final) < 0)
		rc = -errno;
	return rc;
}

/* Load the plugin and build its config; on failure log and return NULL. */
static struct options *configure(const struct job_spec *spec,
				 const struct rl_plugin *p,
				 struct host_state *hs)
{
	struct strbuf err = STRBUF_INIT;
	struct options *o = options_new(p);

	strbuf_init(&err);
	for (size_t i = 0; i < spec->n_opts; i++) {
		if (options_set(o, spec->opts[i].a, spec->opts[i].b, &err) < 0)
			goto fail;
	}
	if (options_finish(o, &err) < 0)
		goto fail;
	strbuf_release(&err);
	return o;
fail:
	snprintf(hs->last_error, sizeof(hs->last_error), "%s", err.buf);
	log_msg(RL_LOG_ERROR, hs->who, "%s", err.buf);
	strbuf_release(&err);
	options_free(o);
	return NULL;
}

static enum rl_result run_plugin(struct host_state *hs, struct rl_ctx *ctx,
				 const struct options *o)
{
	const struct rl_plugin *p = hs->plugin;
	void *state = NULL;
	enum rl_result r;
	int rc;

	if (p->init) {
		rc = p->init(ctx, o->config, &state);
		if (rc < 0) {
			if (!hs->last_error[0])
				snprintf(hs->last_error, sizeof(hs->last_error),
					 "plugin init failed: %s", strerror(-rc));
			return rc == -EAGAIN ? RL_RETRY : RL_FAIL;
		}
	}
	r = p->run(ctx, o->config, state);
	if (p->fini)
		p->fini(state);
	if (r != RL_OK && r != RL_RETRY)
		r = RL_FAIL;
	return r;
}

/* Say which needed instances the step runs without, in its log and as
 * `missing_input` records ahead of the plugin's own. */
static void note_missing(struct host_state *hs, struct rl_ctx *ctx)
{
	const struct job_spec *spec = hs->spec;

	if (spec->n_missing)
		log_msg(RL_LOG_WARNING, hs->who, "running over %zu input(s); "
			"%zu needed instance(s) missing", spec->n_inputs,
			spec->n_missing);
	for (size_t i = 0; i < spec->n_missing; i++) {
		log_msg(RL_LOG_WARNING, hs->who, "missing %s: %s",
			spec->missing[i].a, spec->missing[i].b);
		host_emit(ctx, "missing_input", (const struct rl_field[]){
			{ "step", spec->missing[i].a },
			{ "why", spec->missing[i].b }, { NULL, NULL } });
	}
}

enum rl_result job_host_run(const struct job_spec *spec, const char *plugin_dir)
{
	struct host_state hs = { .spec = spec };
	struct strbuf err = STRBUF_INIT;
	struct plugin_handle *h;
	struct options *o = NULL;
	char *tmp, *final;
	time_t started = time(NULL);
	enum rl_result r = RL_FAIL;
	char node[256] = "";
	int cwd = -1;

	strbuf_init(&err);
	gethostname(node, sizeof(node) - 1);
	tmp = xasprintf("%s/%s.tmp", spec->out_dir, JOB_RECORDS_FILE);
	final = xasprintf("%s/%s", spec->out_dir, JOB_RECORDS_FILE);
	snprintf(hs.who, sizeof(hs.who), "%s step=%s run=%ld attempt=%d",
		 spec->plugin, spec->step_id, spec->run_id, spec->attempt);

	h = plugin_loader_find(plugin_dir, spec->plugin, &err);
	if (!h) {
		snprintf(hs.last_error, sizeof(hs.last_error), "%s", err.buf);
		log_msg(RL_LOG_ERROR, hs.who, "%s", err.buf);
		goto out_exit;
	}
	hs.plugin = h->plugin;
	snprintf(hs.who, sizeof(hs.who), "%s/%s step=%s run=%ld attempt=%d",
		 plugin_stage_name(h->plugin->stage), h->plugin->name,
		 spec->step_id, spec->run_id, spec->attempt);
	o = configure(spec, h->plugin, &hs);
	if (!o)
		goto out_close;
	/* Relative paths in options are relative to the run directory; the
	 * caller's working directory comes back afterwards. */
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(spec->run_dir) < 0) {
		snprintf(hs.last_error, sizeof(hs.last_error), "cannot enter %s: %s",
			 spec->run_dir, strerror(errno));
		r = RL_RETRY;
		goto out_close;
	}
	/* The user's environment, modules and working directory, checked
	 * here on the node, before the plugin starts anything. */
	if (spec->app.len && app_env_apply(spec->app.buf, spec->run_dir,
					   spec->out_dir, &hs.app, &err) < 0) {
		snprintf(hs.last_error, sizeof(hs.last_error), "%s", err.buf);
		log_msg(RL_LOG_ERROR, hs.who, "%s", err.buf);
		goto out_close;
	}
	hs.records = fopen(tmp, "we");
	if (!hs.records) {
		snprintf(hs.last_error, sizeof(hs.last_error), "cannot create %s: %s",
			 tmp, strerror(errno));
		r = RL_RETRY;
		goto out_close;
	}

	struct rl_ctx ctx = {
		.host = &job_host_api, .host_data = &hs,
		.run_dir = spec->run_dir, .out_dir = spec->out_dir,
		.step_id = spec->step_id, .node = node,
		.run_id = spec->run_id, .attempt = spec->attempt,
	};

	log_msg(RL_LOG_INFO, hs.who, "started on %s", node);
	note_missing(&hs, &ctx);
	r = run_plugin(&hs, &ctx, o);
	if (r == RL_OK) {
		int rc = commit_records(&hs, tmp, final);

		if (rc < 0) {
			snprintf(hs.last_error, sizeof(hs.last_error),
				 "cannot write %s: %s", final, strerror(-rc));
			r = RL_RETRY;
		}
	}
	if (hs.records)
		fclose(hs.records);
	unlink(tmp);
	log_msg(r == RL_OK ? RL_LOG_INFO : RL_LOG_ERROR, hs.who,
		"finished: %s, %ld records", job_result_name(r), hs.n_records);
out_close:
	if (cwd >= 0) {
		if (fchdir(cwd) < 0)
			log_msg(RL_LOG_WARNING, hs.who, "cannot return to the "
				"working directory: %s", strerror(errno));
		close(cwd);
	}
	options_free(o);
	plugin_loader_close(h);
out_exit:
	if (write_exit(spec, r, started, r == RL_OK ? hs.n_records : 0,
		       r == RL_OK ? "" : hs.last_error) < 0)
		r = RL_RETRY;
	for (size_t i = 0; i < hs.n_paths; i++)
		free(hs.paths[i]);
	free(hs.paths);
	app_env_release(&hs.app);
	free(tmp);
	free(final);
	strbuf_release(&err);
	return r;
}

/* ---- reading the exit record back ------------------------------------- */

static int read_exit_record(void *arg, const char *kind,
			    const struct rl_field *f)
{
	struct job_exit *e = arg;
	const char *status = rl_field_get(f, "status");
	const char *v;
	long l;

	(void)kind;
	if (!status)
		return -EINVAL;
	e->status = strcmp(status, "ok") == 0      ? RL_OK
		    : strcmp(status, "retry") == 0 ? RL_RETRY
						   : RL_FAIL;
	/* text the job's user wrote: stored by the daemon, shown in logs */
	if ((v = rl_field_get(f, "node")))
		utf8_sanitize(e->node, sizeof(e->node), v);
	if ((v = rl_field_get(f, "error")))
		utf8_sanitize(e->error, sizeof(e->error), v);
	if ((v = rl_field_get(f, "started")) && util_parse_long(v, &l) == 0 &&
	    l > 0 && l <= JOB_EXIT_TIME_MAX)
		e->started = (time_t)l;
	if ((v = rl_field_get(f, "ended")) && util_parse_long(v, &l) == 0 &&
	    l > 0 && l <= JOB_EXIT_TIME_MAX)
		e->ended = (time_t)l;
	if ((v = rl_field_get(f, "records")) && util_parse_long(v, &l) == 0)
		e->records = l;
	return 1;
}

int job_exit_parse(char *buf, const char *name, struct job_exit *exit_rec)
{
	memset(exit_rec, 0, sizeof(*exit_rec));
	return records_each_in(buf, name, "exit", read_exit_record, exit_rec,
			       NULL) == 1 ? 0 : -EINVAL;
}

int job_exit_read(const char *out_dir, struct job_exit *exit_rec)
{
	char *path = xasprintf("%s/%s", out_dir, JOB_EXIT_FILE);
	char *buf;
	int rc = util_read_file(path, 1 << 20, &buf, NULL);

	if (rc == 0) {
		rc = job_exit_parse(buf, path, exit_rec);
		free(buf);
	}
	free(path);
	return rc;
}
