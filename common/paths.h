/*
 * paths.h - where a program finds its plugins, CUDA programs and data files.
 *
 * Resolved from the running executable, so the build tree (build/V/bin) and an
 * installed tree (PREFIX/bin) both work without configuration; environment
 * variables override:
 *   ROOFLINE_PLUGIN_DIR  plugins (*.so)
 *   ROOFLINE_LIBEXEC     CUDA programs plugins run (ert-bench, kernels)
 *   ROOFLINE_ETC         data tables (spec-ceilings.tsv, ncu-metrics.tsv)
 */
#ifndef ROOFLINE_PATHS_H
#define ROOFLINE_PATHS_H

/* Set ROOFLINE_LIBEXEC and ROOFLINE_ETC in the environment when unset, so
 * plugins and their children see them.  Call once at start. */
void paths_export_defaults(void);

#endif
