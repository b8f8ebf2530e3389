-- rooflined_stats--1.sql - the functions of pgext/rooflined_stats.c.
\echo Use "CREATE EXTENSION rooflined_stats" to load this file. \quit

-- {median, median absolute deviation} of the non-null elements, as
-- percentile_cont(0.5) computes both; null when there are none.
create function rl_median_mad(double precision[]) returns double precision[]
	as 'MODULE_PATHNAME', 'rl_median_mad'
	language c immutable strict parallel safe;

create function rl_median_mad_trans(internal, double precision) returns internal
	as 'MODULE_PATHNAME', 'rl_median_mad_trans'
	language c immutable parallel safe;

create function rl_median_mad_final(internal) returns double precision[]
	as 'MODULE_PATHNAME', 'rl_median_mad_final'
	language c immutable parallel safe;

-- The same over a group's values.
create aggregate rl_median_mad_agg(double precision) (
	sfunc = rl_median_mad_trans,
	stype = internal,
	finalfunc = rl_median_mad_final
);
