/*
 * plot_series.c - the records behind `roofline plot --gpu` and `--trajectory`.
 * See plot_series.h.  Every query runs through db.c with parameters, as the
 * user; what row-level security hides from them is simply not drawn.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "plot_series.h"
#include "records.h"
#include "strbuf.h"
#include "util.h"

/* One GPU's figures per night and its model's fleet those nights.  The
 * GPU's pipelines and nights come from its series (ceiling_series, whose
 * key leads with the GPU: sql/036 dropped the GPU-ordered indexes of
 * `ceilings`), its model from its latest run's ceilings, the fleet's
 * figures from the ceilings of those nights' runs (by run). */
#define GPU_SQL \
	"with s as (" \
	" select s.pipeline_name, s.owner, s.facility, s.nights, s.run_ids" \
	" from ceiling_series s where s.gpu_uuid = $1::text" \
	"   and ($2::text is null or s.pipeline_name = $2::text)" \
	"), latest as (" \
	" select s.pipeline_name, s.owner, s.facility," \
	"        s.run_ids[cardinality(s.run_ids)] as run_id" \
	" from s order by s.nights[cardinality(s.nights)] desc," \
	"   s.run_ids[cardinality(s.run_ids)] desc limit 1" \
	"), me as (" \
	" select (select c.gpu_name from ceilings c where c.run_id = l.run_id" \
	"         and c.gpu_uuid = $1::text and c.method = 'empirical' limit 1) as gpu_name," \
	"        l.pipeline_name, l.owner, l.facility" \
	" from latest l" \
	"), nights as (" \
	" select distinct u.night from me join s using (pipeline_name, owner, facility)," \
	"   unnest(s.nights) u(night)" \
	" order by u.night desc limit $3::integer" \
	"), fig as (" \
	" select distinct on (c.gpu_uuid, c.name, r.night)" \
	"        c.gpu_uuid, c.name, r.night, c.value, c.unit, c.node, c.gpu_index" \
	" from ceilings c join runs r on r.id = c.run_id, me" \
	" where c.method = 'empirical' and c.gpu_name = me.gpu_name" \
	"   and r.pipeline_name = me.pipeline_name and r.owner = me.owner" \
	"   and r.facility = me.facility and r.night in (select night from nights)" \
	" order by c.gpu_uuid, c.name, r.night, r.id desc, c.id desc" \
	")" \
	"select f.night::text as night, f.name as ceiling, max(f.unit) as unit," \
	" max(f.value) filter (where f.gpu_uuid = $1::text) as value," \
	" percentile_cont(0.5) within group (order by f.value) as fleet_median," \
	" min(f.value) as fleet_min, max(f.value) as fleet_max, count(*) as fleet_n," \
	" case when exists (select 1 from finding_nights fn" \
	"   join findings x on x.id = fn.finding_id, me" \
	"   where x.scope = 'gpu' and x.subject = $1::text and x.measure = f.name" \
	"     and x.pipeline_name = me.pipeline_name and fn.night = f.night)" \
	"  then 1 else 0 end as flagged," \
	" $1::text as gpu_uuid, max(f.node) filter (where f.gpu_uuid = $1::text) as node," \
	" max(f.gpu_index) filter (where f.gpu_uuid = $1::text) as gpu_index," \
	" (select gpu_name from me) as gpu_name," \
	" (select pipeline_name from me) as pipeline" \
	" from fig f group by f.night, f.name" \
	" having bool_or(f.gpu_uuid = $1::text)" \
	" order by f.name, f.night"

/* The runs of a kernel's trajectory (oldest first), the latest one's
 * pipeline, owner and facility flag; at most one step's point per level. */
#define TRAJECTORY_SQL \
	"with me as (" \
	" select r.pipeline_name, r.owner, r.facility" \
	" from points p join runs r on r.id = p.run_id" \
	" where p.kernel = $1::text and p.invocation = 'all' and p.is_primary" \
	"   and ($2::text is null or r.pipeline_name = $2::text)" \
	" order by r.id desc limit 1" \
	"), rs as (" \
	" select r.id from runs r, me" \
	" where r.pipeline_name = me.pipeline_name and r.owner = me.owner" \
	"   and r.facility = me.facility and exists (select 1 from points p" \
	"   where p.run_id = r.id and p.kernel = $1::text and p.invocation = 'all'" \
	"     and p.is_primary)" \
	" order by r.id desc limit $3::integer" \
	")" \
	"select distinct on (p.run_id, p.level) p.run_id, p.kernel, p.level," \
	" p.precision, p.ai, p.gflops, p.gpu_name" \
	" from points p where p.run_id in (select id from rs) and p.kernel = $1::text" \
	"  and p.invocation = 'all' and p.is_primary and p.ai > 0 and p.gflops > 0" \
	" order by p.run_id, p.level, p.id desc"

/* The latest run's roofs: its step_records of kind roof, field by field. */
#define ROOFS_SQL \
	"select r.step, r.seq, f.key, f.value from step_records r," \
	" jsonb_each_text(r.fields) f where r.run_id = $1::bigint and r.kind = 'roof'" \
	" order by r.step, r.seq"

/* The last step's pairs, as `roofline regressions` reads them. */
#define STEP_SQL \
	"with n as (select * from rl_run_points($1::bigint))," \
	" b as (select * from rl_run_points($2::bigint))," \
	" z as (select * from rl_kernel_noise($1::bigint, 10))" \
	"select level, n.ai, n.gflops, n.roof, b.ai, b.gflops, b.roof, z.n, z.ai_cv," \
	" z.gflops_cv from n join b using (kernel, level, \"precision\")" \
	" left join z using (kernel, level, \"precision\")" \
	" where kernel = $3::text and \"precision\" = $4::text order by level"

static struct db_result *query(struct db *db, const char *sql, int n,
			       const char *const *params)
{
	struct db_result *r = db_query(db, sql, n, params);

	if (!r)
		fprintf(stderr, "roofline plot: %s\n", db_error(db));
	return r;
}

/* Each row of r as a record of `kind`, a field per non-NULL column, and
 * the extra field key=value when key is not NULL. */
static void rows_to_records(const struct db_result *r, const char *kind,
			    const char *key, const char *value, struct strbuf *out)
{
	struct rl_field f[64];

	for (int i = 0; i < db_rows(r); i++) {
		int n = 0;

		for (int c = 0; c < db_columns(r) && n < 62; c++)
			if (db_value(r, i, c))
				f[n++] = (struct rl_field){ db_column_name(r, c), db_value(r, i, c) };
		if (key)
			f[n++] = (struct rl_field){ key, value };
		f[n] = (struct rl_field){ NULL, NULL };
		records_format(out, kind, f);
	}
}

static int write_records(const char *dir, const struct strbuf *out)
{
	char *path = xasprintf("%s/records.tsv", dir);
	int rc = util_mkdir_p(dir, 0755);

	if (rc == 0)
		rc = util_write_file_atomic(path, out->buf, out->len, 0644);
	if (rc < 0)
		fprintf(stderr, "roofline plot: cannot write '%s': %s\n", path, strerror(-rc));
	free(path);
	return rc < 0 ? -EIO : 0;
}

int plot_series_gpu(struct db *db, const char *uuid, const char *pipeline,
		    long nights, const char *dir)
{
	char n[32];
	const char *params[] = { uuid, pipeline, n };
	struct strbuf out = STRBUF_INIT;
	struct db_result *r;
	int rc;

	snprintf(n, sizeof(n), "%ld", nights);
	if (!(r = query(db, GPU_SQL, 3, params)))
		return -EIO;
	strbuf_init(&out);
	rows_to_records(r, "gpu_night", NULL, NULL, &out);
	rc = db_rows(r) ? write_records(dir, &out) : -ENOENT;
	strbuf_release(&out);
	db_result_free(r);
	return rc;
}

/* The latest run's roofs, each with series "run N". */
static int add_roofs(struct db *db, const char *run, const char *series, struct strbuf *out)
{
	const char *params[] = { run };
	struct db_result *r = query(db, ROOFS_SQL, 1, params);
	struct rl_field f[66];
	int n = 0;

	if (!r)
		return -EIO;
	for (int i = 0; i < db_rows(r); i++) {
		if (n < 64) /* a roof record has a dozen fields */
			f[n++] = (struct rl_field){ db_value(r, i, 2), db_value(r, i, 3) };
		if (i + 1 == db_rows(r) || strcmp(db_value(r, i, 0), db_value(r, i + 1, 0)) ||
		    strcmp(db_value(r, i, 1), db_value(r, i + 1, 1))) {
			f[n++] = (struct rl_field){ "series", series };
			f[n] = (struct rl_field){ NULL, NULL };
			records_format(out, "roof", f);
			n = 0;
		}
	}
	db_result_free(r);
	return 0;
}

static double val(const struct db_result *r, int row, int col)
{
	const char *v = db_value(r, row, col);

	return v ? strtod(v, NULL) : NAN;
}

/* Regressions first, the worst first (as the regressions plugin ranks
 * them), then faster, then unchanged. */
static int class_rank(enum judge_class c)
{
	return c == JUDGE_MOVED_LEFT ? 5 : c == JUDGE_ROOF_CHANGED ? 4 :
	       c == JUDGE_DROPPED ? 3 : c == JUDGE_FASTER ? 2 : c == JUDGE_UNCHANGED ? 1 : 0;
}

/* The `trajectory_step` record: run `to` against `from` at precision prec,
 * per level by judge_point; the kernel's class is its worst level's. */
static int add_step(struct db *db, const char *kernel, const char *prec, const char *from,
		    const char *to, struct strbuf *out)
{
	struct judge_params p = { atof(JUDGE_DEFAULT_K), atof(JUDGE_DEFAULT_FLOOR_PCT), 2,
				  atol(JUDGE_DEFAULT_MIN_HISTORY) };
	const char *params[] = { to, from, kernel, prec };
	struct db_result *r = query(db, STEP_SQL, 4, params);
	struct judge_point_result best = { .class = JUDGE_NEW }, res;
	char levels[64] = "", fr[40], tr[40], ai[32], gf[32];

	if (!r)
		return -EIO;
	for (int i = 0; i < db_rows(r); i++) {
		struct judge_point now = { val(r, i, 1), val(r, i, 2), val(r, i, 3) };
		struct judge_point base = { val(r, i, 4), val(r, i, 5), val(r, i, 6) };
		struct judge_point_noise noise = { db_value(r, i, 7) ? db_long(r, i, 7) : 0,
						   val(r, i, 8), val(r, i, 9) };

		judge_point(&p, &now, &base, db_value(r, i, 7) ? &noise : NULL, &res);
		if (class_rank(res.class) > class_rank(best.class))
			best = res, levels[0] = '\0';
		if (res.class == best.class)
			snprintf(levels + strlen(levels), sizeof(levels) - strlen(levels), "%s%s",
				 levels[0] ? "," : "", db_value(r, i, 0));
	}
	db_result_free(r);
	if (best.class == JUDGE_NEW) /* no level in both runs */
		return 0;
	snprintf(fr, sizeof(fr), "run %s", from);
	snprintf(tr, sizeof(tr), "run %s", to);
	snprintf(ai, sizeof(ai), "%.4f", best.ai_change_pct);
	snprintf(gf, sizeof(gf), "%.4f", best.gflops_change_pct);
	records_format(out, "trajectory_step", (const struct rl_field[]){
		{ "kernel", kernel }, { "precision", prec }, { "from", fr }, { "to", tr },
		{ "class", judge_class_name(best.class) }, { "levels", levels },
		{ "ai_change_pct", ai }, { "gflops_change_pct", gf }, { NULL, NULL } });
	return 0;
}

int plot_series_trajectory(struct db *db, const char *kernel, const char *pipeline,
			   long runs, const char *dir, int *nruns)
{
	char n[32], series[40], prev[32] = "", last[32] = "";
	const char *params[] = { kernel, pipeline, n };
	struct strbuf out = STRBUF_INIT;
	struct db_result *r;
	int rc = 0, i;

	*nruns = 0;
	snprintf(n, sizeof(n), "%ld", runs);
	if (!(r = query(db, TRAJECTORY_SQL, 3, params)))
		return -EIO;
	strbuf_init(&out);
	for (i = 0; i < db_rows(r); i++) {
		if (strcmp(last, db_value(r, i, 0))) {
			snprintf(prev, sizeof(prev), "%s", last);
			snprintf(last, sizeof(last), "%s", db_value(r, i, 0));
			snprintf(series, sizeof(series), "run %s", last);
			(*nruns)++;
		}
		records_format(&out, "point", (const struct rl_field[]){
			{ "kernel", db_value(r, i, 1) }, { "invocation", "all" },
			{ "level", db_value(r, i, 2) }, { "precision", db_value(r, i, 3) },
			{ "ai", db_value(r, i, 4) }, { "gflops", db_value(r, i, 5) },
			{ "gpu_name", db_value(r, i, 6) ? db_value(r, i, 6) : "" },
			{ "primary", "1" }, { "series", series }, { NULL, NULL } });
	}
	if (!db_rows(r))
		rc = -ENOENT;
	if (rc == 0)
		rc = add_roofs(db, last, series, &out);
	if (rc == 0 && prev[0])
		rc = add_step(db, kernel, db_value(r, db_rows(r) - 1, 3), prev, last, &out);
	if (rc == 0)
		rc = write_records(dir, &out);
	strbuf_release(&out);
	db_result_free(r);
	return rc;
}
