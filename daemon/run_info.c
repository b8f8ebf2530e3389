/* run_info.c - see run_info.h. */
#include "run_info.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "strbuf.h"

/* Add one record per row of r, field names from the query's columns. */
static int add_rows(struct job_spec *spec, const char *kind,
		    const struct db_result *r)
{
	int ncol = db_columns(r);
	struct rl_field f[16];

	if (ncol > 15)
		return -EINVAL;
	for (int i = 0; i < db_rows(r); i++) {
		for (int c = 0; c < ncol; c++)
			f[c] = (struct rl_field){ db_column_name(r, c), db_value(r, i, c) };
		f[ncol] = (struct rl_field){ NULL, NULL };
		if (job_spec_add_run_info(spec, kind, f) < 0)
			return -EINVAL;
	}
	return 0;
}

/* The query's rows as records of `kind`; 0 or -EIO. */
static int add_query(struct db *db, struct job_spec *spec, const char *kind,
		     const char *sql, int n, const char *const *params)
{
	struct db_result *r = db_query(db, sql, n, params);
	int rc;

	if (!r)
		return -EIO;
	rc = add_rows(spec, kind, r);
	db_result_free(r);
	return rc < 0 ? -EIO : 0;
}

/* The instance names of spec's inputs as a PostgreSQL text[] literal. */
static void needs_array(const struct job_spec *spec, struct strbuf *sb)
{
	strbuf_addch(sb, '{');
	for (size_t i = 0; i < spec->n_inputs; i++) {
		strbuf_addstr(sb, i ? ",\"" : "\"");
		for (const char *p = spec->inputs[i].a; *p; p++) {
			if (*p == '"' || *p == '\\')
				strbuf_addch(sb, '\\');
			strbuf_addch(sb, *p);
		}
		strbuf_addch(sb, '"');
	}
	strbuf_addch(sb, '}');
}

int run_info_add(struct db *db, long run_id, long step_id,
		 struct job_spec *spec)
{
	char id[32], step[32];
	struct strbuf needs = STRBUF_INIT;
	const char *p1[] = { id };
	const char *p2[2], *p3[] = { step };
	int rc;

	snprintf(id, sizeof(id), "%ld", run_id);
	snprintf(step, sizeof(step), "%ld", step_id);
	strbuf_init(&needs);
	needs_array(spec, &needs);
	p2[0] = id;
	p2[1] = needs.buf;
	rc = add_query(db, spec, "run",
		"select id, pipeline_name as pipeline, owner, facility, trigger,"
		" submitted_at, coalesce(started_at::text, '') as started_at,"
		" coalesce(spool_dir, '') as spool_dir from runs where id = $1",
		1, p1);
	if (rc == 0)
		rc = add_query(db, spec, "run_step",
			"select step_id as step, node, plugin, case when on_daemon"
			" then 'daemon' else 'slurm' end as \"on\", state, attempt,"
			" coalesce(slurm_job_id::text, '') as slurm_job,"
			" coalesce(exec_node, '') as exec_node,"
			" coalesce(started_at::text, '') as started_at,"
			" coalesce(ended_at::text, '') as ended_at,"
			" coalesce(error, '') as error"
			" from steps where id = any((select needs from steps"
			"  where id = $1::bigint)::bigint[]) order by id", 1, p3);
	/* the baseline run (sql/011_findings.sql rl_baseline_run: the previous
	 * succeeded run of the same pipeline, owner and facility flag on the
	 * same GPU model, as the regressions plugin and `roofline regressions`
	 * take it), and the attempt directories of the instances this step
	 * needs there */
	if (rc == 0)
		rc = add_query(db, spec, "baseline",
			"select b.id as run, s.step_id || case when s.node = '' then ''"
			" else '@' || s.node end as step, b.spool_dir || '/' || s.step_id ||"
			" case when s.node = '' then '' else '@' || s.node end ||"
			" '/attempt-' || s.attempt as dir, b.submitted_at"
			" from (select p.id, p.spool_dir, p.submitted_at from runs p"
			"  where p.id = rl_baseline_run($1::bigint)"
			"  and p.spool_dir is not null) b"
			" join steps s on s.run_id = b.id and s.state = 'succeeded'"
			" and s.step_id || case when s.node = '' then '' else '@' ||"
			" s.node end = any($2::text[]) order by s.id", 2, p2);
	strbuf_release(&needs);
	return rc;
}
