/*
 * perturb.h - declared changes to imported kernel metrics: recorded
 * profiles replayed as a kernel that changed (tests of the regression
 * analysis, docs/findings.md), labelled synthetic.
 *
 * A rule (one item of ncu-import's option `perturb`):
 *
 *     KERNEL METRICS CHANGE
 *
 *   KERNEL   a glob (fnmatch) over the kernel's name as ncu printed it,
 *            e.g. "kernel_C*"
 *   METRICS  a glob over metric names, e.g. "dram__bytes.*"
 *   CHANGE   +N% or -N%: every matching metric's value scaled by 1 + N/100
 *
 * e.g. "kernel_C* dram__bytes.* +60%" (more DRAM traffic per FLOP: the
 * kernel moves left) and "kernel_A* gpu__time_duration.* +30%" (slower at
 * the same AI: it dropped).  A record a rule changed gets a field
 * `synthetic` naming the rules.  Pure functions, libc only.
 */
#ifndef ROOFLINE_NCU_PERTURB_H
#define ROOFLINE_NCU_PERTURB_H

#include <stddef.h>

#include "rooflined/plugin.h"

struct perturb_rule {
	char text[256];
	char kernel[128];
	char metrics[96];
	double factor;
};

struct perturb_rules {
	struct perturb_rule *v;
	size_t n;
};

/* Parse items into rules (caller releases).  0, -ENOMEM, or -EINVAL with
 * the item and what was expected in err. */
int perturb_parse(char *const *items, size_t n, struct perturb_rules *rules,
		  char *err, size_t errsize);

void perturb_release(struct perturb_rules *rules);

/*
 * Apply the rules to a record's fields (NULL-terminated) into out: room for
 * max fields (the terminator included), values changed into `text`
 * (textsize bytes, owned by the caller), a `synthetic` field appended when
 * a rule changed something.  Returns the number of rules that changed the
 * record (0: out is a plain copy), or -E2BIG when out or text is too small.
 */
int perturb_apply(const struct perturb_rules *rules,
		  const struct rl_field *in, struct rl_field *out, size_t max,
		  char *text, size_t textsize);

#endif /* ROOFLINE_NCU_PERTURB_H */
