/* gpus.c - see gpus.h. */
#include "ncu/gpus.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One "0000:19:00.0, GPU-..." line into e; 0 or -EINVAL. */
static int parse_line(const char *line, size_t len, struct gpus_entry *e)
{
	char buf[256], *p, *end, *comma;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, line, len);
	buf[len] = '\0';
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = '\0';
	e->domain = strtoul(buf, &end, 16);
	if (end == buf || *end != ':')
		return -EINVAL;
	p = end + 1;
	e->bus = strtoul(p, &end, 16);
	if (end == p || *end != ':')
		return -EINVAL;
	p = end + 1;
	e->device = strtoul(p, &end, 16);
	if (end == p || (*end != '.' && *end != '\0'))
		return -EINVAL;
	p = comma + 1 + strspn(comma + 1, " \t");
	p[strcspn(p, " \t\r")] = '\0';
	if (!*p || strlen(p) >= sizeof(e->uuid))
		return -EINVAL;
	snprintf(e->uuid, sizeof(e->uuid), "%s", p);
	return 0;
}

size_t gpus_parse_smi(const char *text, struct gpus *g)
{
	memset(g, 0, sizeof(*g));
	while (text && *text && g->n < GPUS_MAX) {
		size_t len = strcspn(text, "\n");

		if (parse_line(text, len, &g->v[g->n]) == 0)
			g->n++;
		text += len + (text[len] == '\n');
	}
	return g->n;
}

/* The decimal value of property name of d; false when absent or bad. */
static bool property(const struct ncu_csv_device *d, const char *name,
		     unsigned long *out)
{
	for (size_t i = 0; i < d->n; i++) {
		char *end;

		if (strcmp(d->names[i], name) != 0)
			continue;
		*out = strtoul(d->values[i], &end, 10);
		return end != d->values[i] && *end == '\0';
	}
	return false;
}

const char *gpus_uuid_of(const struct gpus *g, const struct ncu_csv_device *d)
{
	unsigned long dom, bus, dev;

	if (!property(d, "device__attribute_pci_domain_id", &dom) ||
	    !property(d, "device__attribute_pci_bus_id", &bus) ||
	    !property(d, "device__attribute_pci_device_id", &dev))
		return NULL;
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].domain == dom && g->v[i].bus == bus && g->v[i].device == dev)
			return g->v[i].uuid;
	return NULL;
}

int gpus_pick(const char *visible, long device, char *out, size_t size)
{
	const char *p = visible;
	size_t len;

	if (device < 0)
		return -ERANGE;
	if (!visible || !*visible) {
		int n = snprintf(out, size, "%ld", device);

		return n < 0 || (size_t)n >= size ? -ERANGE : 0;
	}
	for (long i = 0; i < device; i++) {
		p = strchr(p, ',');
		if (!p)
			return -ERANGE;
		p++;
	}
	p += strspn(p, " ");
	len = strcspn(p, ", ");
	if (!len || len >= size)
		return -ERANGE;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}
