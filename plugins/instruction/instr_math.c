/*
 * instr_math.c - the Instruction Roofline's formulas (instr_math.h), beside
 * the instruction plugin, their one user.
 */
#include "instr_math.h"

#include <math.h>

static double ratio(double a, double b)
{
	if (!isfinite(a) || !isfinite(b) || b <= 0 || a < 0)
		return NAN;
	return a / b;
}

double irm_peak_gips(double sms, double schedulers, double clock_hz)
{
	if (!(sms > 0) || !(schedulers > 0) || !(clock_hz > 0) ||
	    !isfinite(sms * schedulers * clock_hz))
		return NAN;
	return sms * schedulers * clock_hz / 1e9;
}

double irm_intensity(double warp_inst, double transactions)
{
	return ratio(warp_inst, transactions);
}

double irm_gips(double warp_inst, double time_s)
{
	return ratio(warp_inst, time_s) / 1e9;
}

double irm_gtxn(double bytes_per_s, double txn_bytes)
{
	return ratio(bytes_per_s, txn_bytes) / 1e9;
}

double irm_roof(double peak_gips, double gtxn, double intensity)
{
	double bw = intensity * gtxn;

	if (!isfinite(peak_gips) || !isfinite(bw) || peak_gips <= 0 || bw < 0)
		return NAN;
	return bw < peak_gips ? bw : peak_gips;
}

double irm_ridge(double peak_gips, double gtxn)
{
	return ratio(peak_gips, gtxn);
}

double irm_global_wall(int word_bytes, int stride)
{
	long span, sectors;

	if (word_bytes < 1 || word_bytes > 32 || stride < 0)
		return NAN;
	if (stride == 0)
		return 1.0;
	if ((long)stride * word_bytes > (long)IRM_SECTOR_BYTES)
		return 1.0 / IRM_WARP_SIZE;
	span = (long)IRM_WARP_SIZE * stride * word_bytes;
	sectors = (span + (long)IRM_SECTOR_BYTES - 1) / (long)IRM_SECTOR_BYTES;
	if (sectors > IRM_WARP_SIZE)
		sectors = IRM_WARP_SIZE;
	return 1.0 / (double)sectors;
}

double irm_shared_wall(int ways)
{
	if (ways < 1 || ways > IRM_SHARED_BANKS)
		return NAN;
	return 1.0 / ways;
}
