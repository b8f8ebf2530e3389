/* site_tonight.c - see site_tonight.h. */
#include "site_tonight.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "log.h"
#include "site_page.h"
#include "util.h"

#include "site_tonight_js.h" /* generated from site_tonight.js (Makefile) */

#define FLAGGED_ROWS_MAX 500 /* rows of the static flagged table */

/* names seen, in first-seen order (a handful of models, partitions and
 * ceilings: a linear search is enough) */
struct names {
	char **v;
	size_t n;
};

static int name_index(struct names *t, const char *s)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i], s) == 0)
			return (int)i;
	t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->v[t->n] = xstrdup(s);
	return (int)t->n++;
}

static void names_free(struct names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
}

/* A JSON string: " \ and control characters escaped, and < > & as \u00XX
 * so that nothing in the data block can end it or open a tag. */
static void json_str(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			strbuf_addf(sb, "\\u%04x", c);
		else
			strbuf_addch(sb, (char)c);
	}
	strbuf_addch(sb, '"');
}

/* gpus/G<FNV-1a of the UUID>.html: a stable name for any UUID. */
static void gpu_file(char *out, size_t n, const char *uuid)
{
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)uuid; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	snprintf(out, n, "G%016llx", (unsigned long long)h);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum { T_NODE, T_PART, T_INDEX, T_UUID, T_MODEL, T_CEILING, T_PCT, T_THR, T_FLAGGED,
       T_CLASS, T_SEVERITY, T_CAUSE, T_SYNTH, T_RUN, T_PIPE, T_NIGHT };

/* The newest facility run's (0, which matches none, when there is none: a
 * null run would mean the newest of anyone's, a user's too). */
static const char tonight_sql[] =
	"select node, partition, gpu_index, gpu_uuid, gpu_name, ceiling, pct,"
	" threshold_pct, flagged, coalesce(class, ''), coalesce(severity, ''),"
	" coalesce(cause, ''), coalesce(synthetic, ''), run_id, pipeline, night"
	" from rl_fleet_tonight(null, coalesce((select max(s.run_id) from steps s join runs r"
	"  on r.id = s.run_id where s.plugin = 'fleet' and s.state = 'succeeded'"
	"  and r.facility), 0)) where mode = 'sequential' order by node, gpu_uuid, ceiling";

/* The data block: {"run","pipeline","night","synthetic","models","parts",
 * "ceilings","thr":[model][ceiling] median threshold %,"gpus":[[node,
 * index, model, partition, file, [(pct - 100) x 10 per ceiling | null],
 * [flagged ceilings]]]} (rows of r in node, index, ceiling order). */
static void data_block(struct strbuf *sb, const struct db_result *r)
{
	struct names models = { 0 }, parts = { 0 }, ceilings = { 0 };
	int rows = db_rows(r), ng = 0, *cix = xcalloc((size_t)rows + 1, sizeof(int));
	double **thr;
	size_t *nthr;
	bool synthetic = false;

	for (int i = 0; i < rows; i++) {
		name_index(&models, db_value(r, i, T_MODEL));
		name_index(&parts, db_value(r, i, T_PART));
		cix[i] = name_index(&ceilings, db_value(r, i, T_CEILING));
		synthetic |= *db_value(r, i, T_SYNTH) != '\0';
	}
	thr = xcalloc(models.n * ceilings.n + 1, sizeof(*thr));
	nthr = xcalloc(models.n * ceilings.n + 1, sizeof(*nthr));
	strbuf_addstr(sb, "<script type=\"application/json\" id=\"tonight-data\">{\"run\":");
	strbuf_addstr(sb, rows ? db_value(r, 0, T_RUN) : "null");
	strbuf_addstr(sb, ",\"pipeline\":");
	json_str(sb, rows ? db_value(r, 0, T_PIPE) : "");
	strbuf_addstr(sb, ",\"night\":");
	json_str(sb, rows ? db_value(r, 0, T_NIGHT) : "");
	strbuf_addf(sb, ",\"synthetic\":%s,\"models\":[", synthetic ? "true" : "false");
	for (size_t i = 0; i < models.n; i++)
		strbuf_addstr(sb, i ? "," : ""), json_str(sb, models.v[i]);
	strbuf_addstr(sb, "],\"parts\":[");
	for (size_t i = 0; i < parts.n; i++)
		strbuf_addstr(sb, i ? "," : ""), json_str(sb, parts.v[i]);
	strbuf_addstr(sb, "],\"ceilings\":[");
	for (size_t i = 0; i < ceilings.n; i++)
		strbuf_addstr(sb, i ? "," : ""), json_str(sb, ceilings.v[i]);
	strbuf_addstr(sb, "],\"gpus\":[");
	for (int from = 0, i; from < rows; from = i) {
		char file[32];
		int m;

		for (i = from + 1; i < rows && strcmp(db_value(r, i, T_UUID), db_value(r, from, T_UUID)) == 0 &&
				   strcmp(db_value(r, i, T_NODE), db_value(r, from, T_NODE)) == 0; i++)
			;
		/* one GPU: rows [from, i) */
		m = name_index(&models, db_value(r, from, T_MODEL));
		gpu_file(file, sizeof(file), db_value(r, from, T_UUID));
		strbuf_addstr(sb, ng++ ? ",\n[" : "\n[");
		json_str(sb, db_value(r, from, T_NODE));
		strbuf_addf(sb, ",%s,%d,%d,\"%s\",[", db_value(r, from, T_INDEX) ?
			    db_value(r, from, T_INDEX) : "null", m,
			    name_index(&parts, db_value(r, from, T_PART)), file);
		for (size_t c = 0; c < ceilings.n; c++) {
			const char *v = NULL;

			for (int k = from; k < i; k++)
				if ((size_t)cix[k] == c)
					v = db_value(r, k, T_PCT);
			if (v && *v)
				strbuf_addf(sb, "%s%.0f", c ? "," : "", (strtod(v, NULL) - 100) * 10);
			else
				strbuf_addstr(sb, c ? ",null" : "null");
		}
		strbuf_addstr(sb, "],[");
		for (int k = from, nf = 0; k < i; k++) {
			size_t t = (size_t)m * ceilings.n + (size_t)cix[k];
			const char *tv = db_value(r, k, T_THR);

			if (strcmp(db_value(r, k, T_FLAGGED), "t") == 0)
				strbuf_addf(sb, "%s%d", nf++ ? "," : "", cix[k]);
			if (tv && *tv) {
				thr[t] = xrealloc(thr[t], (nthr[t] + 1) * sizeof(double));
				thr[t][nthr[t]++] = strtod(tv, NULL);
			}
		}
		strbuf_addstr(sb, "]]");
	}
	strbuf_addstr(sb, "],\"thr\":[");
	for (size_t m = 0; m < models.n; m++) {
		strbuf_addstr(sb, m ? ",[" : "[");
		for (size_t c = 0; c < ceilings.n; c++) {
			size_t t = m * ceilings.n + c;

			if (nthr[t]) {
				qsort(thr[t], nthr[t], sizeof(double), cmp_double);
				strbuf_addf(sb, "%s%.2f", c ? "," : "", thr[t][nthr[t] / 2]);
			} else {
				strbuf_addstr(sb, c ? ",null" : "null");
			}
			free(thr[t]);
		}
		strbuf_addch(sb, ']');
	}
	strbuf_addstr(sb, "]}</script>\n");
	free(thr), free(nthr), free(cix);
	names_free(&models), names_free(&parts), names_free(&ceilings);
}

/* The flagged (GPU, ceiling) pairs, lowest first: a table without script. */
static void flagged_table(struct strbuf *sb, const struct db_result *r)
{
	static const char *const head[] = { "Node", "GPU", "Model", "Partition", "Ceiling",
		"% of median", "Threshold %", "Class", "Severity", "Likely cause", "History" };
	int *v = xcalloc((size_t)db_rows(r) + 1, sizeof(int)), n = 0;

	for (int i = 0; i < db_rows(r); i++)
		if (strcmp(db_value(r, i, T_FLAGGED), "t") == 0)
			v[n++] = i;
	/* lowest % first: a selection sort is enough for the few flagged */
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (strtod(db_value(r, v[k], T_PCT), NULL) < strtod(db_value(r, v[i], T_PCT), NULL)) {
				int t = v[i];

				v[i] = v[k], v[k] = t;
			}
	strbuf_addf(sb, "<h2>Flagged tonight</h2>\n<p class=\"note\" id=\"flagged-count\">%d "
		    "flagged (GPU, ceiling) pairs%s.</p>\n<table id=\"flagged\"><thead><tr>", n,
		    n > FLAGGED_ROWS_MAX ? "; the lowest 500 listed" : "");
	for (size_t k = 0; k < ARRAY_SIZE(head); k++)
		strbuf_addf(sb, "<th>%s</th>", head[k]);
	strbuf_addstr(sb, "</tr></thead>\n<tbody>\n");
	for (int j = 0; j < n && j < FLAGGED_ROWS_MAX; j++) {
		int i = v[j];
		char file[32], pct[32];

		gpu_file(file, sizeof(file), db_value(r, i, T_UUID));
		snprintf(pct, sizeof(pct), "%.1f", strtod(db_value(r, i, T_PCT), NULL));
		strbuf_addstr(sb, "<tr class=\"flag\">");
		site_page_cell(sb, db_value(r, i, T_NODE), false);
		site_page_cell(sb, db_value(r, i, T_INDEX), true);
		site_page_cell(sb, db_value(r, i, T_MODEL), false);
		site_page_cell(sb, *db_value(r, i, T_PART) ? db_value(r, i, T_PART) : "(default)", false);
		site_page_cell(sb, db_value(r, i, T_CEILING), false);
		site_page_cell(sb, pct, true);
		site_page_cell(sb, db_value(r, i, T_THR), true);
		site_page_cell(sb, db_value(r, i, T_CLASS), false);
		site_page_cell(sb, db_value(r, i, T_SEVERITY), false);
		site_page_cell(sb, db_value(r, i, T_CAUSE), false);
		strbuf_addf(sb, "<td><a href=\"gpus/%s.html\">history</a></td></tr>\n", file);
	}
	if (!n)
		strbuf_addstr(sb, "<tr><td colspan=\"11\" class=\"note\">none</td></tr>\n");
	strbuf_addstr(sb, "</tbody></table>\n");
	free(v);
}

static const char explorer[] =
	"<section id=\"explorer\" hidden>\n<h2>Every GPU</h2>\n<div class=\"controls\">"
	"<label>Model <select id=\"f-model\"></select></label>"
	"<label>Partition <select id=\"f-part\"></select></label>"
	"<label>Ceiling <select id=\"f-ceiling\"></select></label>"
	"<label>Node <input id=\"f-node\" size=\"12\"></label>"
	"<label><input type=\"checkbox\" id=\"f-flagged\"> flagged only</label>"
	"<label>Sort <select id=\"f-sort\"><option value=\"flagged\">flagged first, lowest %</option>"
	"<option value=\"pct\">lowest % first</option><option value=\"pct-desc\">highest % first"
	"</option><option value=\"node\">node and GPU</option></select></label></div>\n"
	"<h3>Per model and ceiling: % of the model's median</h3>\n<table id=\"summary\"><thead><tr>"
	"<th>Model</th><th>Ceiling</th><th>GPUs</th><th>Flagged</th><th>Min</th><th>5 %</th>"
	"<th>Median</th><th>95 %</th><th>Max</th><th>Noise band</th></tr></thead>"
	"<tbody id=\"summary-body\"></tbody></table>\n<p id=\"count\" class=\"note\"></p>\n"
	"<p><button id=\"prev\">previous page</button> <button id=\"next\">next page</button></p>\n"
	"<table id=\"gpus\"><thead><tr><th>Node</th><th>GPU</th><th>Model</th><th>Partition</th>"
	"<th>Ceiling</th><th>% of median</th><th>Flagged</th><th></th></tr></thead>"
	"<tbody id=\"gpus-body\"></tbody></table>\n</section>\n";

/* The first row of r (ordered by column 0, bytewise) whose column 0 is
 * uuid; db_rows(r) when none is. */
static int first_row(const struct db_result *r, const char *uuid)
{
	int lo = 0, hi = db_rows(r);

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (strcmp(db_value(r, mid, 0), uuid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The series of the GPUs measured in t's run, the last
 * TONIGHT_HISTORY_NIGHTS nights of each: their newest night's figure is
 * the run's (sql/014_ceiling_series.sql).  t has rows.  NULL (logged)
 * when the query failed. */
static struct db_result *history_rows(struct db *db, const struct db_result *t)
{
	char run[32], nights[16];
	const char *params[] = { run, nights, db_value(t, 0, T_PIPE) };
	struct db_result *r;

	snprintf(run, sizeof(run), "%s", db_value(t, 0, T_RUN));
	snprintf(nights, sizeof(nights), "%d", TONIGHT_HISTORY_NIGHTS);
	r = db_query(db, "select gpu_uuid, name, array_to_string(nights[greatest(1,"
		     " cardinality(nights) - $2::int + 1):], ' '), array_to_string(vals["
		     "greatest(1, cardinality(vals) - $2::int + 1):], ' ')"
		     " from ceiling_series where pipeline_name = $3 and facility"
		     " and run_ids[cardinality(run_ids)] = $1::bigint order by gpu_uuid collate \"C\", name",
		     3, params);
	if (!r)
		log_warn("site: cannot read the GPUs' nights: %s", db_error(db));
	return r;
}

/* gpus/G*.html for each GPU of t: its last nights of each ceiling, the
 * rows r of history_rows(). */
static int history_pages(int root_fd, const struct site_owner *o,
			 const struct db_result *t, const struct db_result *r)
{
	struct strbuf sb = STRBUF_INIT;
	int dir, rc = 0;

	if (!db_rows(t))
		return 0;
	if ((dir = site_dir_open(root_fd, "gpus", o)) < 0)
		return dir;
	strbuf_init(&sb);
	for (int i = 0, h; i < db_rows(t) && rc == 0; i++) {
		const char *uuid = db_value(t, i, T_UUID);
		char file[48], *title;

		if (i && strcmp(uuid, db_value(t, i - 1, T_UUID)) == 0)
			continue;
		gpu_file(file, sizeof(file) - 5, uuid);
		strcat(file, ".html");
		title = xasprintf("%s GPU %s", db_value(t, i, T_NODE), db_value(t, i, T_INDEX));
		strbuf_reset(&sb);
		site_page_begin(&sb, title, "../", SITE_PAGE_CSP, NULL);
		strbuf_addstr(&sb, "<p class=\"name\">");
		html_escape(&sb, uuid);
		strbuf_addstr(&sb, " &middot; ");
		html_escape(&sb, db_value(t, i, T_MODEL));
		strbuf_addstr(&sb, "</p>\n<p class=\"note\">Each ceiling's figure per night (the "
			      "newest last), in its unit; <a href=\"../tonight.html\">tonight</a>.</p>\n"
			      "<table id=\"history\"><thead><tr><th>Ceiling</th><th>Nights</th>"
			      "<th>Figures</th></tr></thead>\n<tbody>\n");
		h = first_row(r, uuid);
		for (; h < db_rows(r) && strcmp(db_value(r, h, 0), uuid) == 0; h++) {
			strbuf_addstr(&sb, "<tr>");
			for (int k = 1; k < 4; k++)
				site_page_cell(&sb, db_value(r, h, k), false);
			strbuf_addstr(&sb, "</tr>\n");
		}
		strbuf_addstr(&sb, "</tbody></table>\n");
		site_page_end(&sb);
		rc = site_file_write(dir, file, sb.buf, sb.len, o);
		free(title);
	}
	strbuf_release(&sb);
	close(dir);
	return rc;
}

/* What the pages are made of: the fleet's judgement tonight and its GPUs'
 * nights (NULL when the fleet has no rows).  rc: 0, or -EIO (logged) when
 * a query failed. */
struct tonight_rows {
	struct db_result *fleet, *nights;
	int rc;
};

static void read_rows(struct db *db, struct tonight_rows *rows)
{
	rows->fleet = db_query(db, tonight_sql, 0, NULL);
	rows->nights = NULL;
	rows->rc = 0;
	if (!rows->fleet) {
		log_warn("site: cannot read the fleet tonight: %s", db_error(db));
		rows->rc = -EIO;
	} else if (db_rows(rows->fleet) && !(rows->nights = history_rows(db, rows->fleet))) {
		rows->rc = -EIO;
	}
}

static void rows_release(struct tonight_rows *rows)
{
	db_result_free(rows->fleet);
	db_result_free(rows->nights);
	rows->fleet = rows->nights = NULL;
}

struct site_tonight_prefetch {
	char *conninfo;
	pthread_t thread;
	bool connected;          /* else the rows are read on the caller's session */
	struct tonight_rows rows;
};

static void *prefetch_main(void *arg)
{
	struct site_tonight_prefetch *p = arg;
	struct strbuf err = STRBUF_INIT;
	struct db *db;

	strbuf_init(&err);
	db = db_connect(p->conninfo, &err);
	if (db) {
		p->connected = true;
		read_rows(db, &p->rows);
		db_close(db);
	} else {
		log_warn("site: cannot open a session of its own for the tonight page "
			 "(%s): it is read after the rest of the site", err.buf);
	}
	strbuf_release(&err);
	return NULL;
}

struct site_tonight_prefetch *site_tonight_prefetch(const char *conninfo)
{
	struct site_tonight_prefetch *p = xcalloc(1, sizeof(*p));
	int rc;

	p->conninfo = xstrdup(conninfo ? conninfo : "");
	rc = pthread_create(&p->thread, NULL, prefetch_main, p);
	if (rc != 0) {
		log_warn("site: cannot start reading the tonight page beside the "
			 "rest: %s", strerror(rc));
		free(p->conninfo);
		free(p);
		return NULL;
	}
	return p;
}

/* p's rows into rows (p freed); false when p is NULL or could not connect. */
static bool prefetched(struct site_tonight_prefetch *p, struct tonight_rows *rows)
{
	bool ok;

	if (!p)
		return false;
	pthread_join(p->thread, NULL);
	ok = p->connected;
	*rows = p->rows;
	free(p->conninfo);
	free(p);
	return ok;
}

void site_tonight_prefetch_cancel(struct site_tonight_prefetch *p)
{
	struct tonight_rows rows;

	if (prefetched(p, &rows))
		rows_release(&rows);
}

int site_tonight_build(struct db *db, struct site_tonight_prefetch *pre,
		       int root_fd, const struct site_owner *o, struct strbuf *index)
{
	struct tonight_rows rows;
	struct db_result *f;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!prefetched(pre, &rows))
		read_rows(db, &rows);
	if (!rows.fleet) /* logged */
		return rows.rc;
	f = rows.fleet;
	strbuf_init(&sb);
	site_page_begin(&sb, "Tonight: the fleet's GPUs against their model", "",
			SITE_TONIGHT_CSP, "<script src=\"tonight.js\" defer></script>\n");
	strbuf_addstr(&sb, "<p class=\"note\">The fleet step's verdict on each GPU's measured "
		      "ceilings, as % of the median of its own model tonight (GPU models are never "
		      "compared with each other); flagged: fell by more than the threshold its noise "
		      "gives (docs/findings.md).</p>\n");
	if (db_rows(f))
		strbuf_addf(&sb, "<p id=\"run\">Run %s of <span class=\"name\">%s</span>, night %s.</p>\n",
			    db_value(f, 0, T_RUN), db_value(f, 0, T_PIPE), db_value(f, 0, T_NIGHT));
	flagged_table(&sb, f);
	strbuf_addstr(&sb, explorer);
	data_block(&sb, f);
	site_page_end(&sb);
	rc = site_file_write(root_fd, "tonight.html", sb.buf, sb.len, o);
	if (rc == 0)
		rc = site_file_write(root_fd, "tonight.js", site_tonight_js,
				     sizeof(site_tonight_js) - 1, o);
	if (rc == 0)
		rc = rows.rc ? rows.rc : history_pages(root_fd, o, f, rows.nights);
	if (rc < 0 && rc != rows.rc)
		log_warn("site: cannot write the tonight page: %s", strerror(-rc));
	strbuf_addf(index, "<section id=\"tonight\">\n<h2>Tonight</h2>\n<p><a href=\"tonight.html\">"
		    "Every GPU against its model</a>, flagged first: %zu (GPU, ceiling) figures.</p>\n"
		    "</section>\n", (size_t)db_rows(f));
	strbuf_release(&sb);
	rows_release(&rows);
	return rc;
}
