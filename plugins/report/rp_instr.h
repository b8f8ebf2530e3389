/*
 * rp_instr.h - the report's Instruction Roofline section: the `ipoint`
 * records of a needed instruction step (plugins/instruction.c,
 * docs/instruction-roofline.md), one table row per kernel and level.
 *
 * Ownership: a struct rp_instr owns copies of the records' text;
 * rp_instr_release frees them.
 */
#ifndef ROOFLINE_RP_INSTR_H
#define ROOFLINE_RP_INSTR_H

#include <stdbool.h>
#include <stddef.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

struct rp_ipoint {
	char *kernel, *level, *bound, *gpu_name;
	double intensity, gips, roof, pct; /* roof, pct < 0: none */
	bool integer_only;
};

struct rp_instr {
	struct rp_ipoint *p;
	size_t n, a;
};

/* Take one `ipoint` record (fields borrowed, copied). */
void rp_instr_take(struct rp_instr *ins, const struct rl_field *f);

void rp_instr_release(struct rp_instr *ins);

/* The section (nothing when there is no point): a table of kernel, level,
 * intensity, warp GIPS, roof, % of roof, bound, integer-only. */
void rp_instr_section(struct strbuf *sb, const struct rp_instr *ins);

#endif
