/*
 * fuzz_ncu_csv.c - the Nsight Compute CSV reader (plugins/ncu/ncu_csv.h) and
 * what the ncu and ncu_import plugins make of a parsed export: device and
 * kernel records (plugins/ncu/ncu_record.h) and values in base units
 * (plugins/ncu/ncu_value.h).  A user attaches such an export to a run
 * (`roofline submit --attach`).
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ncu/ncu_csv.h"
#include "ncu/ncu_record.h"
#include "ncu/ncu_value.h"

/* Metrics selected, as a metric table would (etc/ncu-metrics.tsv). */
static const char *const metrics[] = {
	"gpu__time_duration.sum", "dram__bytes.sum",
	"dram__cycles_elapsed.avg.per_second",
	"sm__cycles_elapsed.avg.per_second",
	"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"device__attribute_display_name", "launch__grid_size",
};
#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))

static const char *const roles[N_METRICS] = {
	"time", "dram_bytes", "dram_clock_hz", "sm_clock_hz", "fp64_fma",
	NULL, NULL,
};

static void values_of(const struct ncu_csv_launch *l)
{
	for (size_t m = 0; m < N_METRICS; m++) {
		const char *base;
		double v;

		if (!l->values[m])
			continue;
		ncu_value_parse(l->values[m], &v);
		ncu_value_to_base(l->units[m], l->values[m], &v, &base);
	}
}

static void records_of(const struct ncu_csv *t)
{
	static const struct rl_field extra[] = { { "source", "fuzz" },
						 { NULL, NULL } };
	struct ncu_record_column cols[N_METRICS];
	struct ncu_record rec;

	memset(&rec, 0, sizeof(rec));
	for (size_t m = 0; m < N_METRICS; m++)
		cols[m] = (struct ncu_record_column){ metrics[m], roles[m], m };
	for (size_t d = 0; d < t->n_devices; d++)
		ncu_record_device(t, d, extra, &rec);
	for (size_t i = 0; i < t->n_launches; i++) {
		values_of(&t->launches[i]);
		ncu_record_kernel(t, i, cols, N_METRICS, extra, &rec);
	}
	ncu_record_release(&rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[NCU_CSV_ERRLEN];
	struct ncu_csv *t = NULL;
	/* the reader takes a malloc'd buffer with buf[len] == '\0' */
	char *buf = fuzz_text(data, size);

	if (ncu_csv_parse(buf, size, "fuzz.csv", metrics, N_METRICS, &t, err,
			  sizeof(err)) == 0) {
		records_of(t);
		ncu_csv_free(t);
	}
	/* nothing selected: every row must still be valid */
	buf = fuzz_text(data, size);
	if (ncu_csv_parse(buf, size, "fuzz.csv", NULL, 0, &t, err,
			  sizeof(err)) == 0)
		ncu_csv_free(t);
	return 0;
}
