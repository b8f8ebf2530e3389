/* site.c - see site.h. */
#include "site.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "log.h"
#include "site_files.h"
#include "site_page.h"
#include "site_tonight.h"
#include "strbuf.h"
#include "util.h"

#define REPORT_MAX (64u << 20) /* a report bigger than this is not copied */
#define RUNS_PER_GROUP 10      /* runs listed per pipeline (and owner) */
#define TREND_ROWS 60          /* nights per reference kernel */
/* What the web server should send with every page under users/ (server/) */
#define SITE_USERS_CSP "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"

struct site {
	const struct config *cfg;
	struct db *db;
	int root_fd;
	struct site_owner pub;   /* root's pages: 0755 / 0644 */
	gid_t web_gid;
	bool have_web_gid;
	struct site_tonight_prefetch *tonight; /* its rows, read beside the rest */
	int rc;                  /* first failure */
};

static void fail(struct site *s, int rc, const char *what, const char *name)
{
	log_warn("site: cannot write %s%s%s: %s", what, name ? " " : "",
		    name ? name : "", strerror(-rc));
	if (!s->rc)
		s->rc = rc;
}

/* An OS user name usable as a directory name. */
static bool plain_name(const char *s)
{
	if (!*s || *s == '.' || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *s))
			return false;
	return true;
}

/* ---- runs: the index's pipelines, the users' pages, the reports ---------- */

enum { R_ID, R_PIPE, R_OWNER, R_FAC, R_STATE, R_WHEN, R_REPORT_DIR, R_REPORT };

static struct db_result *query_runs(struct site *s)
{
	char n[16];
	const char *params[] = { n };

	snprintf(n, sizeof(n), "%d", RUNS_PER_GROUP);
	return db_query(s->db,
		"select r.id, r.pipeline_name, r.owner, r.facility, r.state,"
		" to_char(coalesce(r.ended_at, r.submitted_at), 'YYYY-MM-DD HH24:MI'),"
		" coalesce(rep.dir, ''), coalesce(rep.file, '') from (select *,"
		" row_number() over (partition by"
		"  facility, case when facility then '' else owner end, pipeline_name"
		"  order by id desc) as rk from runs where state in ('succeeded', 'failed',"
		"  'cancelled') and spool_dir is not null) r"
		" left join lateral (select r.spool_dir || '/' || st.step_id || case when"
		"  st.node = '' then '' else '@' || st.node end || '/attempt-' || x.attempt"
		"  as dir, x.fields->>'file' as file from step_records x join steps st"
		"  on st.id = x.step where x.run_id = r.id and x.kind = 'report'"
		"  order by x.step desc, x.attempt desc limit 1) rep on true"
		" where r.rk <= $1::int"
		" order by r.facility desc, r.owner, r.pipeline_name, r.id desc", 1, params);
}

/*
 * A user's report on the site: the user's HTML is never served as a page of
 * the site's origin.  run-N.html is the site's own page, the report inside
 * it as the srcdoc of an iframe with an empty `sandbox` (an opaque origin:
 * no script, no form, no navigation of this page, nothing of the site's
 * cookies or DOM), and the page's own CSP forbids scripts too (a srcdoc
 * frame inherits it).
 */
static void report_frame(struct strbuf *sb, const char *id, const char *html)
{
	char *title = xasprintf("Report of run %s", id);

	site_page_begin(sb, title, "../../", SITE_PAGE_CSP, NULL);
	strbuf_addstr(sb, "<p class=\"note\">The run's own report, shown in a "
		      "sandboxed frame: it runs no script and cannot reach this "
		      "site (docs/report.md).</p>\n<iframe sandbox=\"\" title=\"");
	html_escape(sb, title);
	strbuf_addstr(sb, "\" style=\"width:100%;height:85vh;border:1px solid #ccc\" "
		      "srcdoc=\"");
	html_escape(sb, html);
	strbuf_addstr(sb, "\"></iframe>\n");
	site_page_end(sb);
	free(title);
}

static void pruned(const char *name, const char *why)
{
	log_warn("site: removed %s from a user's directory: %s", name, why);
}

/* Copy a run's report (file `file` of its attempt directory `dir` in the
 * spool) into dir_fd as run-N.html, unless the site wrote it there already;
 * framed: a user's report (report_frame).  True when it is there after. */
static bool copy_report(struct site *s, int dir_fd, const char *id,
			const char *dir, const char *file, uid_t from_uid,
			const struct site_owner *o, bool framed)
{
	char name[64], *data = NULL;
	struct strbuf page = STRBUF_INIT;
	size_t len;
	int rc;

	snprintf(name, sizeof(name), "run-%s.html", id);
	if (!*dir || !*file)
		return false;
	if (site_file_ours(dir_fd, name, o))
		return true;
	rc = site_file_read_owned(dir, file, from_uid, REPORT_MAX, &data, &len);
	if (rc == 0 && framed) {
		strbuf_init(&page);
		report_frame(&page, id, data);
		rc = site_file_write(dir_fd, name, page.buf, page.len, o);
		strbuf_release(&page);
	} else if (rc == 0) {
		rc = site_file_write(dir_fd, name, data, len, o);
	}
	free(data);
	if (rc < 0)
		fail(s, rc, "the report of run", id);
	return rc == 0;
}

/* A run's row; dir: the reports' directory relative to the page. */
static void run_row(struct strbuf *sb, const struct db_result *r, int i,
		    bool report, const char *dir)
{
	strbuf_addstr(sb, "<tr>");
	if (report)
		strbuf_addf(sb, "<td class=\"n\"><a href=\"%srun-%s.html\">%s</a></td>",
			    dir, db_value(r, i, R_ID), db_value(r, i, R_ID));
	else
		site_page_cell(sb, db_value(r, i, R_ID), true);
	site_page_cell(sb, db_value(r, i, R_PIPE), false);
	site_page_cell(sb, db_value(r, i, R_STATE), false);
	site_page_cell(sb, db_value(r, i, R_WHEN), false);
	strbuf_addstr(sb, report ? "<td>report</td></tr>\n" : "<td class=\"note\">no report</td></tr>\n");
}

static const char run_head[] =
	"<table><thead><tr><th>Run</th><th>Pipeline</th><th>State</th><th>Ended</th>"
	"<th></th></tr></thead>\n<tbody>\n";

/* The facility's rows [i, end): runs/run-N.html, listed in the index. */
static int facility_runs(struct site *s, const struct db_result *r, int i,
			 struct strbuf *index)
{
	struct passwd *pw = getpwnam(s->cfg->facility_user);
	int dir = site_dir_open(s->root_fd, "runs", &s->pub);

	strbuf_addstr(index, "<section id=\"pipelines\">\n<h2>Facility runs, per pipeline</h2>\n");
	if (dir < 0)
		fail(s, dir, "directory", "runs");
	strbuf_addstr(index, run_head);
	if (i >= db_rows(r) || strcmp(db_value(r, i, R_FAC), "t") != 0)
		strbuf_addstr(index, "<tr><td colspan=\"5\" class=\"note\">no facility run has "
			      "ended yet</td></tr>\n");
	for (; i < db_rows(r) && strcmp(db_value(r, i, R_FAC), "t") == 0; i++) {
		bool rep = dir >= 0 && pw &&
			   copy_report(s, dir, db_value(r, i, R_ID),
				       db_value(r, i, R_REPORT_DIR),
				       db_value(r, i, R_REPORT), pw->pw_uid, &s->pub,
				       false);

		run_row(index, r, i, rep, "runs/");
	}
	strbuf_addstr(index, "</tbody></table>\n</section>\n");
	if (dir >= 0)
		close(dir);
	return i;
}

/* One user's rows [i, end): users/NAME/ with their reports and index. */
static int user_runs(struct site *s, const struct db_result *r, int i,
		     int users_fd, struct strbuf *index)
{
	const char *owner = db_value(r, i, R_OWNER);
	struct passwd *pw = getpwnam(owner);
	struct site_owner o, dir_o;
	struct strbuf sb = STRBUF_INIT;
	int start = i, dir = -EPERM, rc;
	char *title;

	while (i < db_rows(r) && strcmp(db_value(r, i, R_OWNER), owner) == 0)
		i++;
	if (!pw || !plain_name(owner) || pw->pw_uid == 0 || users_fd < 0)
		return i;
	/* root's directory (no user plants a page or a link there): the web
	 * group reads it, else only the user reads the files, by name */
	if (s->have_web_gid)
		o = (struct site_owner){ s->pub.uid, s->web_gid, 0750, 0640 };
	else
		o = (struct site_owner){ pw->pw_uid, pw->pw_gid, 0711, 0600 };
	dir_o = (struct site_owner){ s->pub.uid, s->have_web_gid ? s->web_gid
								: s->pub.gid,
				     o.dir_mode, o.file_mode };
	dir = site_dir_open(users_fd, owner, &dir_o);
	if (dir < 0) {
		fail(s, dir, "the directory of user", owner);
		return i;
	}
	site_dir_prune(dir, &o, pruned);
	strbuf_init(&sb);
	title = xasprintf("Runs of %s", owner);
	site_page_begin(&sb, title, "../../", SITE_PAGE_CSP, NULL);
	strbuf_addstr(&sb, "<section id=\"runs\">\n");
	strbuf_addstr(&sb, run_head);
	for (int k = start; k < i; k++)
		run_row(&sb, r, k, copy_report(s, dir, db_value(r, k, R_ID),
					       db_value(r, k, R_REPORT_DIR),
					       db_value(r, k, R_REPORT), pw->pw_uid,
					       &o, true), "");
	strbuf_addstr(&sb, "</tbody></table>\n</section>\n");
	site_page_end(&sb);
	rc = site_file_write(dir, "index.html", sb.buf, sb.len, &o);
	if (rc < 0)
		fail(s, rc, "the index of user", owner);
	strbuf_addstr(index, "<li><a href=\"users/");
	html_escape(index, owner);
	strbuf_addstr(index, "/index.html\">");
	html_escape(index, owner);
	strbuf_addf(index, "</a> (%d runs listed)</li>\n", i - start);
	free(title);
	strbuf_release(&sb);
	close(dir);
	return i;
}

static void build_runs(struct site *s, struct strbuf *index)
{
	struct db_result *r = query_runs(s);
	int i = 0, users;

	if (!r) {
		log_warn("site: cannot read the runs: %s", db_error(s->db));
		s->rc = s->rc ? s->rc : -EIO;
		return;
	}
	i = facility_runs(s, r, 0, index);
	users = site_dir_open(s->root_fd, "users", &s->pub);
	if (users < 0)
		fail(s, users, "directory", "users");
	strbuf_addstr(index, "<section id=\"users\">\n<h2>Users</h2>\n<p class=\"note\">Each "
		      "user's page and reports are readable by that user (and, served "
		      "through the web server, by staff): docs/report.md.</p>\n<ul>\n");
	while (i < db_rows(r))
		i = user_runs(s, r, i, users, index);
	strbuf_addstr(index, "</ul>\n</section>\n");
	if (users >= 0)
		close(users);
	db_result_free(r);
}

/* ---- the fleet tonight ------------------------------------------------------ */

/* Each facility pipeline's newest run with ceilings, as a PostgreSQL
 * bigint[] literal, or NULL with the reason logged: its runs newest first,
 * each probed through ceilings_run_idx.  Its own query, so that the page's
 * query gets the runs as a parameter: planned for their values, it reads
 * those runs' partitions and index entries only (a join of every ceiling
 * with its run took 11.7 s at 13 M ceilings, the runs as a subquery 3-16 s;
 * as a parameter, 0.4 s). */
static char *fleet_runs(struct site *s)
{
	struct db_result *r = db_query(s->db,
		"select coalesce(array_agg(id order by id), '{}') from (select (select r.id"
		" from runs r where r.facility and r.pipeline_name = p.pipeline_name"
		" and exists (select 1 from ceilings c where c.run_id = r.id)"
		" order by r.id desc limit 1) as id"
		" from (select distinct pipeline_name from runs where facility) p) x"
		" where id is not null", 0, NULL);
	char *runs = NULL;

	if (r && db_rows(r) == 1 && db_value(r, 0, 0))
		runs = xstrdup(db_value(r, 0, 0));
	else
		log_warn("site: cannot find the fleet's runs: %s", db_error(s->db));
	db_result_free(r);
	return runs;
}

static void build_fleet(struct site *s, struct strbuf *index)
{
	static const char *const head[] = { "Pipeline", "Run", "Measured", "Node", "GPU",
		"Index", "GPU UUID", "FP64 FMA GFLOP/s", "spec", "SM MHz", "HBM triad GB/s",
		"spec", "L2 GB/s", "L1 GB/s", "Synthetic" };
	char *runs = fleet_runs(s);
	const char *params[] = { runs };
	struct db_result *r = !runs ? NULL : db_query(s->db,
		"select pipeline_name, run_id, to_char(measured_at, 'YYYY-MM-DD HH24:MI'),"
		" node, coalesce(gpu_name, ''), gpu_index, coalesce(gpu_uuid, ''),"
		" coalesce(round(fp64_fma / 1e9)::text, ''), coalesce(round(fp64_fma_spec / 1e9)::text, ''),"
		" coalesce(fp64_sm_clock_mhz::text, ''), coalesce(round(hbm_triad / 1e9)::text, ''),"
		" coalesce(round(hbm_spec / 1e9)::text, ''), coalesce(round(l2 / 1e9)::text, ''),"
		" coalesce(round(l1 / 1e9)::text, ''), case when synthetic then 'yes' ||"
		" coalesce(' (' || perturbed || ')', '') else '' end"
		" from fleet_ceilings where run_id = any($1::bigint[])"
		" order by pipeline_name, node, gpu_index", 1, params);
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!r) {
		if (runs)
			log_warn("site: cannot read the fleet's ceilings: %s", db_error(s->db));
		s->rc = s->rc ? s->rc : -EIO;
		free(runs);
		return;
	}
	strbuf_init(&sb);
	site_page_begin(&sb, "The fleet tonight", "", SITE_PAGE_CSP, NULL);
	strbuf_addstr(&sb, "<p class=\"note\">Each GPU's headline ceilings from the latest run "
		      "of each facility pipeline that measured ceilings (view fleet_ceilings; a "
		      "user's own runs are never on this page), measured "
		      "beside theoretical (spec).</p>\n<table id=\"fleet\"><thead><tr>");
	for (size_t k = 0; k < ARRAY_SIZE(head); k++)
		strbuf_addf(&sb, "<th>%s</th>", head[k]);
	strbuf_addstr(&sb, "</tr></thead>\n<tbody>\n");
	if (!db_rows(r))
		strbuf_addf(&sb, "<tr><td colspan=\"%zu\" class=\"note\">no ceilings measured "
			    "yet</td></tr>\n", ARRAY_SIZE(head));
	for (int i = 0; i < db_rows(r); i++) {
		strbuf_addstr(&sb, "<tr>");
		for (int k = 0; k < db_columns(r); k++)
			site_page_cell(&sb, db_value(r, i, k), k == 1 || (k >= 5 && k <= 13 && k != 6));
		strbuf_addstr(&sb, "</tr>\n");
	}
	strbuf_addstr(&sb, "</tbody></table>\n");
	site_page_end(&sb);
	rc = site_file_write(s->root_fd, "fleet.html", sb.buf, sb.len, &s->pub);
	if (rc < 0)
		fail(s, rc, "fleet.html", NULL);
	strbuf_addf(index, "<section id=\"fleet\">\n<h2>The fleet tonight</h2>\n<p><a "
		    "href=\"fleet.html\">Ceilings per GPU</a>: %d GPUs.</p>\n</section>\n",
		    db_rows(r));
	strbuf_release(&sb);
	db_result_free(r);
	free(runs);
}

/* The tonight page (site_tonight.c). */
static void build_tonight(struct site *s, struct strbuf *index)
{
	int rc = site_tonight_build(s->db, s->tonight, s->root_fd, &s->pub, index);

	s->tonight = NULL; /* taken */

	if (rc < 0 && !s->rc)
		s->rc = rc;
}

/* ---- reference kernels: every kernel of a facility run ------------------------ */

/* FNV-1a of the kernel's name: a stable file name for any name. */
static void kernel_file(char *out, size_t n, const char *kernel)
{
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)kernel; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	snprintf(out, n, "K%016llx.html", (unsigned long long)h);
}

enum { K_KERNEL, K_WHEN, K_NODE, K_GPU, K_GFLOPS, K_AI1, K_AI2, K_AID, K_PCT, K_VERDICT, K_RUN };

static void kernel_page(struct site *s, int dir, const struct db_result *r,
			int from, int to, struct strbuf *index)
{
	static const char *const head[] = { "When", "Node", "GPU", "GFLOP/s", "AI L1",
					    "AI L2", "AI DRAM", "% of roof", "Verdict", "Run" };
	const char *kernel = db_value(r, from, K_KERNEL);
	struct strbuf sb = STRBUF_INIT;
	char file[64];
	int rc;

	kernel_file(file, sizeof(file), kernel);
	strbuf_init(&sb);
	site_page_begin(&sb, kernel, "../", SITE_PAGE_CSP, NULL);
	strbuf_addstr(&sb, "<table id=\"history\"><thead><tr>");
	for (size_t k = 0; k < ARRAY_SIZE(head); k++)
		strbuf_addf(&sb, "<th>%s</th>", head[k]);
	strbuf_addstr(&sb, "</tr></thead>\n<tbody>\n");
	for (int i = from; i < to; i++) {
		strbuf_addstr(&sb, "<tr>");
		for (int k = K_WHEN; k <= K_RUN; k++)
			site_page_cell(&sb, db_value(r, i, k), k >= K_GFLOPS && k != K_VERDICT);
		strbuf_addstr(&sb, "</tr>\n");
	}
	strbuf_addstr(&sb, "</tbody></table>\n");
	site_page_end(&sb);
	rc = site_file_write(dir, file, sb.buf, sb.len, &s->pub);
	if (rc < 0)
		fail(s, rc, "the history of", kernel);
	strbuf_addf(index, "<li><a href=\"kernels/%s\" class=\"name\">", file);
	html_escape(index, kernel);
	strbuf_addf(index, "</a> (%d runs)</li>\n", to - from);
	strbuf_release(&sb);
}

static void build_kernels(struct site *s, struct strbuf *index)
{
	char n[16];
	const char *params[] = { n };
	struct db_result *r;
	int dir, from = 0;

	snprintf(n, sizeof(n), "%d", TREND_ROWS);
	r = db_query(s->db,
		"select kernel, to_char(run_at, 'YYYY-MM-DD HH24:MI'), node,"
		" coalesce(gpu_name, ''), round(gflops::numeric, 1),"
		" coalesce(round(ai_l1::numeric, 4)::text, ''), coalesce(round(ai_l2::numeric, 4)::text, ''),"
		" coalesce(round(ai_dram::numeric, 4)::text, ''),"
		" coalesce(round(pct_of_roof::numeric, 1)::text, ''), coalesce(verdict, ''), run_id"
		" from (select t.*, row_number() over (partition by t.kernel order by"
		"  t.run_at desc) as rk from kernel_trend t join runs r on r.id = t.run_id"
		"  where r.facility) x where rk <= $1::int order by kernel, run_at", 1, params);
	strbuf_addstr(index, "<section id=\"kernels\">\n<h2>Reference kernels</h2>\n"
		      "<p class=\"note\">Every kernel of a facility run: its history.</p>\n<ul>\n");
	if (!r) {
		log_warn("site: cannot read the kernels' history: %s", db_error(s->db));
		s->rc = s->rc ? s->rc : -EIO;
		strbuf_addstr(index, "</ul>\n</section>\n");
		return;
	}
	dir = site_dir_open(s->root_fd, "kernels", &s->pub);
	if (dir < 0)
		fail(s, dir, "directory", "kernels");
	for (int i = 1; dir >= 0 && i <= db_rows(r); i++) {
		if (i < db_rows(r) && strcmp(db_value(r, i, K_KERNEL), db_value(r, from, K_KERNEL)) == 0)
			continue;
		kernel_page(s, dir, r, from, i, index);
		from = i;
	}
	if (!db_rows(r))
		strbuf_addstr(index, "<li class=\"note\">none yet: no facility run has profiled a kernel</li>\n");
	strbuf_addstr(index, "</ul>\n</section>\n");
	if (dir >= 0)
		close(dir);
	db_result_free(r);
}

/* ---- the whole site ----------------------------------------------------------- */

/* The index's parts, in page order.  The findings issue adds its builder
 * here (and its own pages beside fleet.html).  A part marked last is built
 * after the others (its rows are read beside them: the tonight page's,
 * site_tonight_prefetch), its section still in page order. */
static const struct builder {
	void (*build)(struct site *, struct strbuf *);
	bool last;
} builders[] = {
	{ build_runs, false }, { build_tonight, true }, { build_fleet, false },
	{ build_kernels, false },
};

/* server/nginx.conf and server/apache.conf: what a web server serving
 * web_root must do for users/ (docs/report.md shows them in place). */
static void write_server_snippets(struct site *s)
{
	struct strbuf sb = STRBUF_INIT;
	int dir = site_dir_open(s->root_fd, "server", &s->pub), rc;

	if (dir < 0) {
		fail(s, dir, "directory", "server");
		return;
	}
	strbuf_init(&sb);
	strbuf_addstr(&sb, "# rooflined: inside the location that serves users/ of the\n"
		      "# facility site (docs/report.md).  Users' pages run no script\n"
		      "# and no link there is followed.\n"
		      "disable_symlinks on;\n"
		      "add_header Content-Security-Policy \"" SITE_USERS_CSP "\" always;\n"
		      "add_header X-Content-Type-Options nosniff always;\n");
	rc = site_file_write(dir, "nginx.conf", sb.buf, sb.len, &s->pub);
	if (rc < 0)
		fail(s, rc, "server/", "nginx.conf");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "# rooflined: users' pages of the facility site (docs/report.md)\n"
		    "<Directory \"%s/users\">\n"
		    "    Options -FollowSymLinks -SymLinksIfOwnerMatch -Indexes -Includes -ExecCGI\n"
		    "    AllowOverride None\n"
		    "    Header always set Content-Security-Policy \"" SITE_USERS_CSP "\"\n"
		    "    Header always set X-Content-Type-Options nosniff\n"
		    "</Directory>\n", s->cfg->web_root);
	rc = site_file_write(dir, "apache.conf", sb.buf, sb.len, &s->pub);
	if (rc < 0)
		fail(s, rc, "server/", "apache.conf");
	strbuf_release(&sb);
	close(dir);
}

int site_rebuild(const struct config *cfg, struct db *db)
{
	struct site s = { .cfg = cfg, .db = db, .root_fd = -1,
			  .pub = { 0, 0, 0755, 0644 } };
	struct strbuf index = STRBUF_INIT, part[ARRAY_SIZE(builders)];
	struct group *gr;
	int rc;

	if (!cfg->web_root || !cfg->web_root[0])
		return 0;
	if (cfg->web_group[0] && (gr = getgrnam(cfg->web_group))) {
		s.web_gid = gr->gr_gid;
		s.have_web_gid = true;
	} else if (cfg->web_group[0]) {
		log_warn("site: web_group '%s' is not a group: users' pages stay "
			    "theirs alone", cfg->web_group);
	}
	s.pub.uid = geteuid();
	s.pub.gid = getegid();
	/* the daemon's umask is 077: the root is made, then opened up */
	if (util_mkdir_p(cfg->web_root, 0755) < 0 ||
	    (s.root_fd = open(cfg->web_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fchmod(s.root_fd, 0755) < 0) {
		rc = -errno ? -errno : -EIO;
		log_warn("site: cannot open web_root '%s': %s", cfg->web_root, strerror(-rc));
		if (s.root_fd >= 0)
			close(s.root_fd);
		return rc;
	}
	s.tonight = site_tonight_prefetch(cfg->database);
	write_server_snippets(&s);
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < ARRAY_SIZE(builders); i++)
			if (builders[i].last == last) {
				strbuf_init(&part[i]);
				builders[i].build(&s, &part[i]);
			}
	site_tonight_prefetch_cancel(s.tonight); /* NULL: taken */
	strbuf_init(&index);
	site_page_begin(&index, "Roofline runs", "", SITE_PAGE_CSP, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(builders); i++) {
		strbuf_add(&index, part[i].buf, part[i].len);
		strbuf_release(&part[i]);
	}
	site_page_end(&index);
	rc = site_file_write(s.root_fd, "index.html", index.buf, index.len, &s.pub);
	if (rc < 0)
		fail(&s, rc, "index.html", NULL);
	strbuf_release(&index);
	close(s.root_fd);
	return s.rc;
}
