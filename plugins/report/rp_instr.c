/*
 * rp_instr.c - the report's Instruction Roofline section (rp_instr.h).
 */
#include "rp_instr.h"

#include <stdlib.h>
#include <string.h>

#include "rp_text.h"
#include "util.h"

static double num(const struct rl_field *f, const char *key, double dflt)
{
	const char *v = rl_field_get(f, key);
	char *end;
	double x;

	if (!v || !*v)
		return dflt;
	x = strtod(v, &end);
	return *end ? dflt : x;
}

static char *dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

void rp_instr_take(struct rp_instr *ins, const struct rl_field *f)
{
	struct rp_ipoint *p;

	if (!rl_field_get(f, "kernel") || !rl_field_get(f, "level") ||
	    num(f, "intensity", -1) < 0 || num(f, "gips", -1) < 0)
		return;
	if (ins->n == ins->a) {
		ins->a = ins->a ? 2 * ins->a : 16;
		ins->p = xrealloc(ins->p, ins->a * sizeof(*ins->p));
	}
	p = &ins->p[ins->n++];
	p->kernel = dup_or_empty(rl_field_get(f, "kernel"));
	p->level = dup_or_empty(rl_field_get(f, "level"));
	p->bound = dup_or_empty(rl_field_get(f, "bound"));
	p->gpu_name = dup_or_empty(rl_field_get(f, "gpu_name"));
	p->intensity = num(f, "intensity", -1);
	p->gips = num(f, "gips", -1);
	p->roof = num(f, "roof_gips", -1);
	p->pct = num(f, "pct_of_roof", -1);
	p->integer_only = rl_field_get(f, "integer_only") &&
			  strcmp(rl_field_get(f, "integer_only"), "1") == 0;
}

void rp_instr_release(struct rp_instr *ins)
{
	for (size_t i = 0; i < ins->n; i++) {
		free(ins->p[i].kernel);
		free(ins->p[i].level);
		free(ins->p[i].bound);
		free(ins->p[i].gpu_name);
	}
	free(ins->p);
	memset(ins, 0, sizeof(*ins));
}

static void ncell(struct strbuf *sb, double v, const char *suffix)
{
	if (v < 0) {
		strbuf_addstr(sb, "<td class=\"n\" data-v=\"\">&ndash;</td>");
		return;
	}
	strbuf_addf(sb, "<td class=\"n\" data-v=\"%.9g\">", v);
	rp_num(sb, v);
	strbuf_addstr(sb, suffix);
	strbuf_addstr(sb, "</td>");
}

void rp_instr_section(struct strbuf *sb, const struct rp_instr *ins)
{
	if (!ins->n)
		return;
	strbuf_addstr(sb, "<section id=\"instruction\">\n<h2>Instruction Roofline</h2>\n"
		      "<p>Warp instructions per second against warp instructions per "
		      "transaction (32-byte sectors; shared memory: wavefronts). Levels "
		      "<code>global</code> and <code>shared</code> count the load/store "
		      "instructions of that space alone: their intensity is the memory "
		      "wall the kernel sits on (1/4 unit stride, 1/32 uncoalesced; 1/W for a "
		      "W-way bank conflict).</p>\n"
		      "<table class=\"sortable\">\n<thead><tr><th>kernel</th><th>level</th>"
		      "<th>intensity</th><th>warp GIPS</th><th>roof</th><th>% of roof</th>"
		      "<th>bound</th><th>integer-only</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < ins->n; i++) {
		const struct rp_ipoint *p = &ins->p[i];

		strbuf_addstr(sb, "<tr><td>");
		rp_esc(sb, p->kernel);
		strbuf_addstr(sb, "</td><td>");
		rp_esc(sb, p->level);
		strbuf_addstr(sb, "</td>");
		ncell(sb, p->intensity, "");
		ncell(sb, p->gips, "");
		ncell(sb, p->roof, "");
		ncell(sb, p->pct, "");
		strbuf_addstr(sb, "<td>");
		rp_esc(sb, p->bound);
		strbuf_addstr(sb, p->integer_only ? "</td><td>yes</td></tr>\n" : "</td><td></td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table>\n</section>\n");
}
