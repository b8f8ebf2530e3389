/*
 * rooflined_stats.c - the PostgreSQL server extension `rooflined_stats`:
 * the robust statistics the history queries of sql/ take over each GPU's
 * and each kernel's past, in C instead of two ordered-set aggregates apiece
 * (sql/028_robust_stats.sql, docs/benchmarks.md).  The one file of the
 * project that uses PostgreSQL's server API; the arithmetic is robust.c's.
 *
 *   rl_median_mad(float8[]) -> float8[2]
 *       {median, median absolute deviation} of the array's non-null
 *       elements (every dimension), null when there are none.  Strict.
 *   rl_median_mad_agg(float8) -> float8[2]
 *       the same over a group's non-null values, as an aggregate.
 *
 * Both give the bits percentile_cont(0.5) gives (robust.h): the SQL they
 * replace is kept in the tests as the reference they are compared with.
 *
 * Memory: everything is palloc'd.  The aggregate's state (a growing array
 * of doubles) lives in the aggregate's context and is freed with it; the
 * final function sorts a copy in the calling context, so the state is never
 * modified after its last row and the aggregate may be shared (finalfunc
 * read_only).  The functions are immutable and parallel safe.
 *
 * Safety: callable by any role (the extension is trusted: the database's
 * owner installs it, docs/install.md).  The transition function refuses to
 * run outside an aggregate, the only place a state pointer comes from, so
 * no SQL can hand the final function a pointer of its own making.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "robust.h"

PG_MODULE_MAGIC;

/* The aggregate's state: the group's values so far. */
struct robust_state {
	double *v;
	size_t n, cap;
};

/* {median, mad} of v[0..n) (n > 0, v reordered) as a float8[2]. */
static ArrayType *median_mad_array(double *v, size_t n)
{
	double *scratch = palloc(n * sizeof(*scratch));
	Datum d[2];
	double median, mad;

	robust_median_mad(v, n, scratch, &median, &mad);
	pfree(scratch);
	d[0] = Float8GetDatum(median);
	d[1] = Float8GetDatum(mad);
	return construct_array(d, 2, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
			       TYPALIGN_DOUBLE);
}

PG_FUNCTION_INFO_V1(rl_median_mad);
Datum rl_median_mad(PG_FUNCTION_ARGS)
{
	ArrayType *a = PG_GETARG_ARRAYTYPE_P(0);
	int count = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	size_t n = 0;
	double *v;

	if (ARR_ELEMTYPE(a) != FLOAT8OID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("rl_median_mad takes a double precision array")));
	if (count == 0)
		PG_RETURN_NULL();
	v = palloc((size_t)count * sizeof(*v));
	if (!ARR_HASNULL(a)) {
		/* float8 elements without a null bitmap: one packed run */
		memcpy(v, ARR_DATA_PTR(a), (size_t)count * sizeof(*v));
		n = (size_t)count;
	} else {
		Datum *elems;
		bool *nulls;

		deconstruct_array(a, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
				  TYPALIGN_DOUBLE, &elems, &nulls, &count);
		for (int i = 0; i < count; i++)
			if (!nulls[i])
				v[n++] = DatumGetFloat8(elems[i]);
		if (n == 0)
			PG_RETURN_NULL();
	}
	PG_RETURN_ARRAYTYPE_P(median_mad_array(v, n));
}

PG_FUNCTION_INFO_V1(rl_median_mad_trans);
Datum rl_median_mad_trans(PG_FUNCTION_ARGS)
{
	MemoryContext agg;
	struct robust_state *s;

	if (!AggCheckCallContext(fcinfo, &agg))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("rl_median_mad_trans runs only inside the "
				       "aggregate rl_median_mad_agg")));
	s = PG_ARGISNULL(0) ? NULL : (struct robust_state *)PG_GETARG_POINTER(0);
	if (PG_ARGISNULL(1)) {
		if (!s)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s);
	}
	if (!s) {
		s = MemoryContextAlloc(agg, sizeof(*s));
		s->n = 0;
		s->cap = 16;
		s->v = MemoryContextAlloc(agg, s->cap * sizeof(*s->v));
	} else if (s->n == s->cap) {
		/* repalloc keeps the block in the aggregate's context; past
		 * MaxAllocSize (1 GB, 134 M values) it raises an error */
		s->cap *= 2;
		s->v = repalloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = PG_GETARG_FLOAT8(1);
	PG_RETURN_POINTER(s);
}

PG_FUNCTION_INFO_V1(rl_median_mad_final);
Datum rl_median_mad_final(PG_FUNCTION_ARGS)
{
	struct robust_state *s;
	double *v;

	if (!AggCheckCallContext(fcinfo, NULL))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("rl_median_mad_final runs only inside the "
				       "aggregate rl_median_mad_agg")));
	s = PG_ARGISNULL(0) ? NULL : (struct robust_state *)PG_GETARG_POINTER(0);
	if (!s || s->n == 0)
		PG_RETURN_NULL();
	v = palloc(s->n * sizeof(*v));
	memcpy(v, s->v, s->n * sizeof(*v));
	PG_RETURN_ARRAYTYPE_P(median_mad_array(v, s->n));
}
