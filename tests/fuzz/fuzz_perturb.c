/*
 * fuzz_perturb.c - the perturbation rules of option `perturb`, one item a
 * line: ncu_import's (plugins/ncu/perturb.h), applied to a kernel record,
 * and ert's and spec's (plugins/ert/replay.h), asked which GPUs they select.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ert/replay.h"
#include "ncu/perturb.h"

#define ITEMS_MAX 16

static void ncu_rules(char *const *items, size_t n)
{
	static const struct rl_field in[] = {
		{ "kernel", "kernel_C(double *, const double *, long)" },
		{ "dram__bytes.sum", "1000" }, { "dram__bytes.avg", "1e308" },
		{ "gpu__time_duration.sum", "8" }, { "lts__t_bytes.sum", "n/a" },
		{ NULL, NULL } };
	struct perturb_rules rules;
	struct rl_field out[8];
	char err[256], text[1024];

	if (perturb_parse(items, n, &rules, err, sizeof(err)) != 0)
		return;
	perturb_apply(&rules, in, out, 8, text, sizeof(text));
	perturb_apply(&rules, in, out, 3, text, sizeof(text));
	perturb_release(&rules);
}

static void replay_rules(char *const *items, size_t n)
{
	struct replay_rules rules = { NULL, 0 };
	char err[512];

	if (replay_rules_parse(items, n, &rules, err, sizeof(err)) != 0)
		return;
	for (size_t i = 0; i < rules.n; i++)
		replay_rule_selects(&rules.v[i], "rl-node2", 1);
	replay_rules_release(&rules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *items[ITEMS_MAX];
	char *text = fuzz_text(data, size), *copy = fuzz_text(data, size);
	size_t n = fuzz_lines(text, items, ITEMS_MAX);

	ncu_rules(items, n);
	n = fuzz_lines(copy, items, ITEMS_MAX);
	replay_rules(items, n);
	free(text);
	free(copy);
	return 0;
}
