/*
 * fuzz_pipeline.c - the pipeline loader (daemon/pipeline.h over
 * common/yaml_tree.h): the YAML a user submits, loaded and checked as
 * `roofline validate`, `roofline submit` and the daemon do.  Plugins are not
 * opened (plugin_dir NULL): their option tables are the facility's.
 *
 * A pipeline that loads must also order its steps (no cycle gets through)
 * and find each of its steps by id.
 */
#include <stdlib.h>

#include "harness.h"
#include "pipeline.h"

static void check_loaded(const struct pipeline *p)
{
	size_t *order = calloc(p->n_steps + 1, sizeof(*order));

	if (!order || pipeline_topo_order(p, order) != 0)
		abort();
	for (size_t i = 0; i < p->n_steps; i++)
		if (pipeline_step_find(p, p->steps[i].id) != &p->steps[i])
			abort();
	free(order);
	if (p->slurm.gres) {
		size_t n = 0;
		struct pipeline_gres *g = pipeline_gres_parse(p->slurm.gres, &n);
		char *all = pipeline_gres_resolve(p->slurm.gres, 2);

		pipeline_gres_free(g, n);
		free(all);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf errors = STRBUF_INIT;
	struct pipeline *p;

	strbuf_init(&errors);
	p = pipeline_load("fuzz.yaml", (const char *)data, size, NULL, &errors);
	if (p) {
		check_loaded(p);
		pipeline_free(p);
	} else if (errors.len == 0) {
		abort(); /* refused without a word */
	}
	strbuf_release(&errors);
	return 0;
}
