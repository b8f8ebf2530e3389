/*
 * topo.c - `nvidia-smi topo -m` read for one pair of GPUs (see topo.h).
 */
#include "topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Copy cell [p, p+n) into buf without ANSI escapes (ESC [ ... letter) and
 * without leading/trailing blanks.
 */
static void clean_cell(const char *p, size_t n, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\033') {
			i++;
			if (i < n && p[i] == '[')
				while (i + 1 < n &&
				       !((p[i + 1] >= 'A' && p[i + 1] <= 'Z') ||
					 (p[i + 1] >= 'a' && p[i + 1] <= 'z')))
					i++;
			i++; /* the final letter */
			continue;
		}
		if ((p[i] == ' ' || p[i] == '\r') && o == 0)
			continue;
		if (o + 1 < size)
			buf[o++] = p[i];
	}
	while (o > 0 && (buf[o - 1] == ' ' || buf[o - 1] == '\r'))
		o--;
	if (size)
		buf[o] = '\0';
}

/* Cell k (0-based, TAB-separated) of the line [line, end) into buf. */
static int cell_at(const char *line, const char *end, int k, char *buf,
		   size_t size)
{
	const char *p = line;

	for (int i = 0; i < k; i++) {
		const char *t = memchr(p, '\t', (size_t)(end - p));

		if (!t)
			return -ENOENT;
		p = t + 1;
	}
	const char *t = memchr(p, '\t', (size_t)(end - p));

	clean_cell(p, (size_t)((t ? t : end) - p), buf, size);
	return 0;
}

/* Whether cell text is exactly "GPU<n>". */
static int is_gpu(const char *cell, int n)
{
	char want[24];

	snprintf(want, sizeof(want), "GPU%d", n);
	return !strcmp(cell, want);
}

int topo_link(const char *text, int from, int to, char *buf, size_t size)
{
	const char *line = text, *header = NULL, *hend = NULL;
	char cell[64];
	int col = -1;

	if (size)
		buf[0] = '\0';
	while (*line) {
		const char *end = strchr(line, '\n');

		if (!end)
			end = line + strlen(line);
		if (!header) {
			/* the header: some cell is "GPU0" and the first is empty */
			for (int k = 1; cell_at(line, end, k, cell, sizeof(cell)) == 0;
			     k++)
				if (is_gpu(cell, 0)) {
					header = line;
					hend = end;
					break;
				}
			if (header)
				for (int k = 1; cell_at(header, hend, k, cell,
							sizeof(cell)) == 0; k++)
					if (is_gpu(cell, to)) {
						col = k;
						break;
					}
		} else if (cell_at(line, end, 0, cell, sizeof(cell)) == 0 &&
			   is_gpu(cell, from)) {
			if (col < 0)
				return -ENOENT;
			if (cell_at(line, end, col, buf, size) < 0)
				return -ENOENT;
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return header ? -ENOENT : -EINVAL;
}

double topo_datasheet_Bps(const char *label)
{
	static const char *const pcie[] = { "PIX", "PXB", "PHB", "NODE", "SYS",
					    NULL };
	char *end;

	if (!label)
		return 0;
	if (!strncmp(label, "NV", 2) && label[2] >= '1' && label[2] <= '9') {
		long n = strtol(label + 2, &end, 10);

		return *end == '\0' ? (double)n * 25e9 : 0;
	}
	for (int i = 0; pcie[i]; i++)
		if (!strcmp(label, pcie[i]))
			return 64e9;
	return 0;
}
