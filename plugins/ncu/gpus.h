/*
 * gpus.h - which GPU the ncu plugin profiles on, and the UUID of each GPU
 * its kernels ran on (libc only; the plugin runs the programs).
 *
 * Nsight Compute 2025.3.1 prints no UUID among its device__attribute_*
 * columns (none in ../shared/reference's GH100 metric list), but it prints
 * the PCI domain, bus and device of every GPU (device__attribute_pci_*_id,
 * decimal).  nvidia-smi --query-gpu=pci.bus_id,uuid gives the same address
 * ("00000000:19:00.0", hex) with the UUID, so each ncu device is matched to
 * its UUID by address, whatever CUDA_VISIBLE_DEVICES or CUDA's device order
 * did to the indices.
 */
#ifndef ROOFLINE_NCU_GPUS_H
#define ROOFLINE_NCU_GPUS_H

#include <stddef.h>

#include "ncu_csv.h"

#define GPUS_MAX 64

struct gpus {
	size_t n;
	struct gpus_entry {
		unsigned long domain, bus, device;
		char uuid[96];
	} v[GPUS_MAX];
};

/*
 * Parse the output of `nvidia-smi --query-gpu=pci.bus_id,uuid
 * --format=csv,noheader` (one "DOMAIN:BUS:DEVICE.FUNCTION, UUID" line per
 * GPU, hex address) into g (zeroed here).  Lines that do not parse are
 * skipped.  Returns the number of GPUs read.
 */
size_t gpus_parse_smi(const char *text, struct gpus *g);

/* The UUID of ncu device d (borrowed from g), matched by its
 * device__attribute_pci_{domain,bus,device}_id columns; NULL when d lacks
 * them or no GPU of g has that address. */
const char *gpus_uuid_of(const struct gpus *g, const struct ncu_csv_device *d);

/*
 * The CUDA_VISIBLE_DEVICES value that makes GPU `device` of this job the
 * only one a program sees: entry `device` (0-based) of visible (the job's
 * CUDA_VISIBLE_DEVICES: indices or UUIDs, comma-separated), or when visible
 * is NULL or empty the index itself.  Into out (size bytes).  0, or -ERANGE
 * when visible has no such entry or it does not fit.
 */
int gpus_pick(const char *visible, long device, char *out, size_t size);

#endif
