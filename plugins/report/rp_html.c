/* rp_html.c - see rp_html.h. */
#include "rp_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"
#include "rp_advice.h"
#include "rp_svg.h"
#include "rp_text.h"

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:0 auto;"
	"max-width:1180px;padding:0 16px 40px;color:#1a1a1a;background:#fff}\n"
	"h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:26px 0 8px;"
	"border-bottom:1px solid #ccc}\n"
	"dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}"
	"dl.meta dt{color:#555}dl.meta dd{margin:0}\n"
	"table{border-collapse:collapse;font-size:13px;width:100%}"
	"th,td{padding:3px 7px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"th{background:#f3f3f3;position:sticky;top:0}th.sort{cursor:pointer}"
	"th.sort:after{content:' \\2195';color:#999}\n"
	".name{font-family:'DejaVu Sans Mono',monospace;word-break:break-all}\n"
	".chart{max-width:100%;height:auto;display:block}.plot{fill:#fff;stroke:#888}"
	".grid{stroke:#e6e6e6}.tick{font-size:12px;fill:#333}.axis{font-size:13px;fill:#111}\n"
	".roof{stroke-width:2;fill:none}.bw{stroke:#666}.peak{stroke:#222}"
	".nofma{stroke:#222;stroke-dasharray:7 5}.rooflabel{font-size:12px;fill:#333}\n"
	".pt{stroke:#222;stroke-width:.8}.join{stroke-width:1;opacity:.5}"
	".num{font-size:10px;fill:#222}.legend rect{fill:#fff;stroke:#bbb}.legend text{font-size:12px}\n"
	"ol.key{columns:2 380px;font-size:12px;padding-left:0;list-style:none}"
	"ol.key li{break-inside:avoid}.sw{font-size:15px}\n"
	".verdict-latency-bound{color:#8a3b00}.verdict-bandwidth-bound{color:#004c80}"
	".verdict-compute-bound{color:#00603f}\n"
	"dl.advice dt{font-weight:600;margin-top:8px}dl.advice dd{margin:2px 0 0 18px}\n"
	".note{color:#555;font-size:13px}\n";

/* Sorting the kernel table: click a header; numbers by data-v. */
static const char js[] =
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	" t.querySelectorAll('th').forEach(function(th,i){\n"
	"  th.classList.add('sort');\n"
	"  th.addEventListener('click',function(){\n"
	"   var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),"
	"num=th.dataset.type==='num',dir=th.dataset.dir==='asc'?-1:1;\n"
	"   th.dataset.dir=dir===1?'asc':'desc';\n"
	"   rows.sort(function(x,y){var a=x.cells[i],c=y.cells[i];\n"
	"    if(num){var p=parseFloat(a.dataset.v),q=parseFloat(c.dataset.v);"
	"p=isNaN(p)?-Infinity:p;q=isNaN(q)?-Infinity:q;return dir*(p-q);}\n"
	"    return dir*a.textContent.localeCompare(c.textContent);});\n"
	"   rows.forEach(function(r){b.appendChild(r);});});});});\n";

static void meta(struct strbuf *sb, const char *dt, const char *dd)
{
	strbuf_addstr(sb, "<dt>");
	strbuf_addstr(sb, dt);
	strbuf_addstr(sb, "</dt><dd>");
	if (dd && *dd)
		rp_esc(sb, dd);
	else
		strbuf_addstr(sb, "<span class=\"note\">unknown</span>");
	strbuf_addstr(sb, "</dd>\n");
}

/* "12345 (ceilings), 12346 (profile)": the Slurm jobs of the run. */
static void slurm_jobs(struct strbuf *sb, const struct rp_model *m)
{
	bool any = false;

	strbuf_addstr(sb, "<dt>Slurm jobs</dt><dd>");
	for (size_t i = 0; i < m->nsteps; i++) {
		const struct rp_step *s = &m->steps[i];

		if (!s->slurm_job || !*s->slurm_job)
			continue;
		strbuf_addstr(sb, any ? ", " : "");
		rp_esc(sb, s->slurm_job);
		strbuf_addstr(sb, " (");
		rp_esc(sb, s->step);
		if (s->node && *s->node) {
			strbuf_addch(sb, '@');
			rp_esc(sb, s->node);
		}
		strbuf_addch(sb, ')');
		any = true;
	}
	if (!any)
		strbuf_addstr(sb, "<span class=\"note\">none recorded</span>");
	strbuf_addstr(sb, "</dd>\n");
}

static void header(struct strbuf *sb, const struct rp_page *p)
{
	const struct rp_model *m = p->m;
	char passes[32] = "";

	if (m->passes >= 0)
		snprintf(passes, sizeof(passes), "%ld", m->passes);
	strbuf_addstr(sb, "<header>\n<h1>");
	if (p->title)
		rp_esc(sb, p->title);
	else {
		strbuf_addstr(sb, "Roofline report: run ");
		rp_esc(sb, m->run_id ? m->run_id : "?");
		if (m->pipeline) {
			strbuf_addstr(sb, " (");
			rp_esc(sb, m->pipeline);
			strbuf_addch(sb, ')');
		}
	}
	strbuf_addstr(sb, "</h1>\n<dl class=\"meta\" id=\"meta\">\n");
	meta(sb, "Pipeline", m->pipeline);
	meta(sb, "Owner", m->owner);
	meta(sb, "Submitted", m->submitted);
	meta(sb, "Started", m->started);
	slurm_jobs(sb, m);
	meta(sb, "Collected by", m->collect_source);
	meta(sb, "Nsight Compute", m->ncu_version ? m->ncu_version
			: m->collect_source && strcmp(m->collect_source, "ncu-import") == 0
				  ? "not recorded in an imported CSV" : NULL);
	meta(sb, "Replay passes", passes);
	meta(sb, "Clock control", m->clock_control ? m->clock_control
			: m->collect_source && strcmp(m->collect_source, "ncu-import") == 0
				  ? "as set when the CSV was made (not recorded)" : NULL);
	meta(sb, "Report made", p->generated);
	strbuf_addstr(sb, "</dl>\n</header>\n");
}

/*
 * The kernels' names shortened to max bytes, distinct where the names
 * differ (common/kernel_name.h); a name that fits is kept whole.  NULL when
 * out of memory: the full names are shown.  Free with free_names.
 */
static char **short_names(const struct rp_model *m, size_t max)
{
	const char **full = calloc(m->nk ? m->nk : 1, sizeof(*full));
	char **out = calloc(m->nk ? m->nk : 1, sizeof(*out));

	for (size_t i = 0; full && i < m->nk; i++)
		full[i] = m->k[i].name ? m->k[i].name : "";
	if (!full || !out || kernel_names_short(full, m->nk, max, KERNEL_NAME_WHOLE_FITS, out) < 0) {
		free(out);
		out = NULL;
	}
	free(full);
	return out;
}

static void free_names(char **names, size_t n)
{
	if (names)
		kernel_names_free(names, n);
	free(names);
}

static void chart(struct strbuf *sb, const struct rp_page *p)
{
	const struct rp_model *m = p->m;
	char **names = short_names(m, 90);

	strbuf_addstr(sb, "<section id=\"chart\">\n<h2>Hierarchical roofline</h2>\n");
	rp_svg_chart(sb, m, p->width, p->height);
	strbuf_addstr(sb, "<ol class=\"key\" id=\"key\">\n");
	for (size_t i = 0; i < m->nk; i++) {
		const struct rp_kernel *k = &m->k[i];

		if (!k->primary)
			continue;
		strbuf_addf(sb, "<li><span class=\"sw\" style=\"color:%s\">&#9632;</span> %d ",
			    rp_colours[(k->number - 1) % RP_N_COLOURS], k->number);
		strbuf_addstr(sb, "<span class=\"name\">");
		rp_esc(sb, names ? names[i] : k->name);
		strbuf_addf(sb, "</span> [%s]</li>\n", k->precision);
	}
	strbuf_addstr(sb, "</ol>\n</section>\n");
	free_names(names, m->nk);
}

/* A numeric cell: data-v holds the full value for sorting. */
static void ncell(struct strbuf *sb, bool have, double v, const char *suffix)
{
	if (!have) {
		strbuf_addstr(sb, "<td class=\"n\" data-v=\"\">&ndash;</td>");
		return;
	}
	strbuf_addf(sb, "<td class=\"n\" data-v=\"%.9g\">", v);
	rp_num(sb, v);
	strbuf_addstr(sb, suffix);
	strbuf_addstr(sb, "</td>");
}

static void kernel_table(struct strbuf *sb, const struct rp_model *m)
{
	strbuf_addstr(sb, "<section id=\"kernels\">\n<h2>Kernels</h2>\n"
		"<p class=\"note\">Each kernel at its primary precision, summed over its "
		"invocations. Click a column to sort.</p>\n"
		"<table class=\"sortable\" id=\"kernel-table\">\n<thead><tr>"
		"<th data-type=\"num\">#</th><th>Kernel</th><th>Precision</th>"
		"<th data-type=\"num\">AI L1</th><th data-type=\"num\">AI L2</th>"
		"<th data-type=\"num\">AI DRAM</th><th data-type=\"num\">GFLOP/s</th>"
		"<th>Bound</th><th data-type=\"num\">% of roof</th><th>Verdict</th>"
		"<th data-type=\"num\">FMA ratio</th><th data-type=\"num\">Tensor share</th>"
		"<th>Next</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < m->nk; i++) {
		const struct rp_kernel *k = &m->k[i];

		if (!k->primary)
			continue;
		strbuf_addf(sb, "<tr class=\"kernel\"><td class=\"n\" data-v=\"%d\">%d</td>"
			    "<td class=\"name\">", k->number, k->number);
		rp_esc(sb, k->name);
		strbuf_addstr(sb, "</td><td>");
		rp_esc(sb, k->precision);
		strbuf_addstr(sb, "</td>");
		for (int l = 0; l < RP_LEVELS; l++)
			ncell(sb, k->has_ai[l], k->ai[l], "");
		ncell(sb, true, k->gflops, "");
		strbuf_addstr(sb, "<td>");
		rp_esc(sb, k->bound_level);
		strbuf_addstr(sb, "</td>");
		ncell(sb, k->pct_of_bound >= 0, k->pct_of_bound, "");
		strbuf_addstr(sb, "<td class=\"verdict-");
		rp_esc(sb, k->verdict);
		strbuf_addstr(sb, "\">");
		rp_esc(sb, k->verdict);
		strbuf_addstr(sb, "</td>");
		ncell(sb, k->alpha >= 0, k->alpha, "");
		ncell(sb, true, k->tensor_share, "%");
		strbuf_addstr(sb, "<td>");
		strbuf_addstr(sb, rp_advice_tag(m, k));
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table>\n</section>\n");
}

static void advice(struct strbuf *sb, const struct rp_model *m)
{
	char **names = short_names(m, 120);

	strbuf_addstr(sb, "<section id=\"advice\">\n<h2>What to try next</h2>\n<dl class=\"advice\">\n");
	for (size_t i = 0; i < m->nk; i++) {
		const struct rp_kernel *k = &m->k[i];

		if (!k->primary)
			continue;
		strbuf_addf(sb, "<dt>%d <span class=\"name\">", k->number);
		rp_esc(sb, names ? names[i] : k->name);
		strbuf_addstr(sb, "</span></dt><dd>");
		rp_advice(sb, m, k);
		strbuf_addstr(sb, "</dd>\n");
	}
	strbuf_addstr(sb, "</dl>\n</section>\n");
	free_names(names, m->nk);
}

static void baseline(struct strbuf *sb, const struct rp_model *m)
{
	strbuf_addstr(sb, "<section id=\"baseline\">\n<h2>Against the baseline</h2>\n");
	if (!m->base_run || !m->nbase) {
		strbuf_addstr(sb, "<p class=\"note\">No baseline: no earlier succeeded run of this "
			      "pipeline by this owner with the same analysis step.</p>\n</section>\n");
		return;
	}
	strbuf_addstr(sb, "<p>Baseline: run ");
	rp_esc(sb, m->base_run);
	strbuf_addstr(sb, " (submitted ");
	rp_esc(sb, m->base_when);
	strbuf_addstr(sb, "), the previous succeeded run of this pipeline by this owner.</p>\n"
		"<table class=\"sortable\" id=\"baseline-table\"><thead><tr><th data-type=\"num\">#</th>"
		"<th>Kernel</th><th data-type=\"num\">GFLOP/s then</th><th data-type=\"num\">GFLOP/s now</th>"
		"<th data-type=\"num\">Change %</th><th data-type=\"num\">AI DRAM then</th>"
		"<th data-type=\"num\">AI DRAM now</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < m->nk; i++) {
		const struct rp_kernel *k = &m->k[i];
		const struct rp_base *b = k->primary ? rp_model_base_of(m, k) : NULL;

		if (!b)
			continue;
		strbuf_addf(sb, "<tr><td class=\"n\" data-v=\"%d\">%d</td><td class=\"name\">",
			    k->number, k->number);
		rp_esc(sb, k->name);
		strbuf_addstr(sb, "</td>");
		ncell(sb, true, b->gflops, "");
		ncell(sb, true, k->gflops, "");
		ncell(sb, b->gflops > 0, b->gflops > 0 ? (k->gflops / b->gflops - 1) * 100 : 0, "");
		ncell(sb, b->has_ai[RP_DRAM], b->ai[RP_DRAM], "");
		ncell(sb, k->has_ai[RP_DRAM], k->ai[RP_DRAM], "");
		strbuf_addstr(sb, "</tr>\n");
	}
	strbuf_addstr(sb, "</tbody></table>\n</section>\n");
}

static void ceilings(struct strbuf *sb, const struct rp_model *m)
{
	strbuf_addstr(sb, "<section id=\"ceilings\">\n<h2>Ceilings</h2>\n"
		"<p class=\"note\">Measured (ert, empirical: the median of its trials) beside "
		"theoretical (spec); spread is (max - min) / median of the trials.</p>\n"
		"<table class=\"sortable\" id=\"ceiling-table\"><thead><tr><th>Ceiling</th>"
		"<th data-type=\"num\">Measured</th><th data-type=\"num\">Theoretical</th>"
		"<th data-type=\"num\">Measured / theoretical %</th><th data-type=\"num\">Spread %</th>"
		"<th data-type=\"num\">SM clock MHz</th><th data-type=\"num\">Memory clock MHz</th>"
		"<th>Node</th><th>GPU</th><th>GPU UUID</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < m->nceil; i++) {
		const struct rp_ceiling *c = &m->ceil[i];
		bool bw = c->unit && strstr(c->unit, "B/s") && !strstr(c->unit, "FLOP");
		double scale = c->unit && (strcmp(c->unit, "FLOP/s") == 0 ||
					   strcmp(c->unit, "B/s") == 0 || strcmp(c->unit, "OP/s") == 0)
				       ? 1e-9 : 1;

		strbuf_addstr(sb, "<tr><td>");
		rp_esc(sb, c->name);
		if (c->synthetic)
			strbuf_addstr(sb, " <span class=\"note\">(synthetic)</span>");
		strbuf_addstr(sb, "</td>");
		ncell(sb, c->measured > 0, c->measured * scale, bw ? " GB/s" : " GFLOP/s");
		ncell(sb, c->theoretical > 0, c->theoretical * scale, bw ? " GB/s" : " GFLOP/s");
		ncell(sb, c->measured > 0 && c->theoretical > 0,
		      c->theoretical > 0 ? c->measured / c->theoretical * 100 : 0, "");
		ncell(sb, c->spread_pct >= 0, c->spread_pct, "");
		ncell(sb, c->sm_clock_mhz > 0, c->sm_clock_mhz, "");
		ncell(sb, c->mem_clock_mhz > 0, c->mem_clock_mhz, "");
		strbuf_addstr(sb, "<td>");
		rp_esc(sb, c->node);
		strbuf_addstr(sb, "</td><td>");
		rp_esc(sb, c->gpu_name);
		strbuf_addstr(sb, "</td><td class=\"name\">");
		rp_esc(sb, c->gpu_uuid);
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody></table>\n");
	if (!m->nceil)
		strbuf_addstr(sb, "<p class=\"note\">No ceiling records among this step's inputs "
			      "(add the ert and spec steps to its needs).</p>\n");
	strbuf_addstr(sb, "</section>\n");
}

static void cell(struct strbuf *sb, const char *s)
{
	strbuf_addstr(sb, "<td>");
	rp_esc(sb, s);
	strbuf_addstr(sb, "</td>");
}

static void steps(struct strbuf *sb, const struct rp_model *m)
{
	strbuf_addstr(sb, "<section id=\"steps\">\n<h2>The steps it reports on</h2>\n");
	if (!m->nsteps) {
		strbuf_addstr(sb, "<p class=\"note\">The daemon gave no run records (a report "
			      "made outside rooflined).</p>\n</section>\n");
		return;
	}
	strbuf_addstr(sb, "<table id=\"step-table\"><thead><tr><th>Step</th><th>Node</th>"
		"<th>Plugin</th><th>Where</th><th>State</th><th>Attempt</th><th>Slurm job</th>"
		"<th>Ran on</th><th>Started</th><th>Ended</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < m->nsteps; i++) {
		const struct rp_step *s = &m->steps[i];

		strbuf_addstr(sb, "<tr>");
		cell(sb, s->step);
		cell(sb, s->node);
		cell(sb, s->plugin);
		cell(sb, s->on);
		cell(sb, s->state);
		cell(sb, s->attempt);
		cell(sb, s->slurm_job);
		cell(sb, s->exec_node);
		cell(sb, s->started);
		cell(sb, s->ended);
		strbuf_addstr(sb, "</tr>\n");
	}
	strbuf_addstr(sb, "</tbody></table>\n</section>\n");
}

void rp_html_href(struct strbuf *sb, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			strbuf_addch(sb, (char)*p);
		else
			strbuf_addf(sb, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

static void files(struct strbuf *sb, const struct rp_page *p)
{
	strbuf_addstr(sb, "<section id=\"files\">\n<h2>Files</h2>\n<ul>\n");
	for (size_t i = 0; i < p->nlinks; i++) {
		strbuf_addstr(sb, "<li><a href=\"");
		rp_html_href(sb, p->links[i].href);
		strbuf_addstr(sb, "\">");
		rp_esc(sb, p->links[i].text);
		strbuf_addstr(sb, "</a></li>\n");
	}
	strbuf_addstr(sb, "</ul>\n<p class=\"note\">The same rows are in PostgreSQL: "
		      "<code>roofline show");
	if (p->m->run_id) {
		strbuf_addch(sb, ' ');
		rp_esc(sb, p->m->run_id);
	}
	strbuf_addstr(sb, "</code>, or the views <code>roofline_points</code> and "
		      "<code>ceilings</code>.</p>\n</section>\n");
}

void rp_html_page(struct strbuf *sb, const struct rp_page *p)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<title>");
	if (p->title)
		rp_esc(sb, p->title);
	else {
		strbuf_addstr(sb, "Roofline report: run ");
		rp_esc(sb, p->m->run_id ? p->m->run_id : "?");
	}
	strbuf_addstr(sb, "</title>\n<style>\n");
	strbuf_addstr(sb, css);
	strbuf_addstr(sb, "</style>\n</head>\n<body>\n");
	header(sb, p);
	if (p->m->nprimary) { /* else: an Instruction Roofline alone */
		chart(sb, p);
		kernel_table(sb, p->m);
		advice(sb, p->m);
		baseline(sb, p->m);
	}
	rp_instr_section(sb, &p->m->instr);
	ceilings(sb, p->m);
	steps(sb, p->m);
	files(sb, p);
	strbuf_addstr(sb, "<script>\n");
	strbuf_addstr(sb, js);
	strbuf_addstr(sb, "</script>\n</body>\n</html>\n");
}
