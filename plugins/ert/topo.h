/*
 * topo.h - the link between two GPUs as `nvidia-smi topo -m` names it.
 *
 * The matrix nvidia-smi prints (captured to a file by the caller; ert-bench
 * never runs a shell) is TAB-separated: a header line whose cells are ""
 * then "GPU0", "GPU1"..., then one row per GPU: "GPUi" then one cell per
 * column, " X " on the diagonal and a link label elsewhere ("NV18": 18
 * NVLinks; "PIX", "PXB", "PHB", "NODE", "SYS": PCIe paths).  Cells may
 * carry spaces and ANSI colour codes (a terminal's copy); both are dropped.
 *
 * Pure C (libc only): linked into ert-bench (C++, extern "C") and the
 * plugin's unit tests.
 */
#ifndef ROOFLINE_TOPO_H
#define ROOFLINE_TOPO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The label of the link from GPU `from` to GPU `to` in the matrix `text`
 * (NUL-terminated) into buf (size bytes, truncated to fit).  Returns 0;
 * -ENOENT when the matrix has no row GPU<from> or no column GPU<to>;
 * -EINVAL when text holds no header line naming GPU0.
 */
int topo_link(const char *text, int from, int to, char *buf, size_t size);

/*
 * The datasheet bandwidth, bytes/s per direction, of a link label: NV<n> on
 * Hopper (NVLink 4: 25 GB/s per link per direction, 18 links 450 GB/s), a
 * PCIe label (PIX PXB PHB NODE SYS: PCIe Gen5 x16, 64 GB/s per direction,
 * what an H100 SXM/PCIe host gives at best).  0 for a label it does not know.
 */
double topo_datasheet_Bps(const char *label);

#ifdef __cplusplus
}
#endif

#endif /* ROOFLINE_TOPO_H */
