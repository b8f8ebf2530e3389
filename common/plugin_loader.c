/* plugin_loader.c - see plugin_loader.h. */
#include "plugin_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "util.h"


/* The struct as far as this host reads it: every field up to fini. */
#define PLUGIN_MIN_SIZE \
	(offsetof(struct rl_plugin, fini) + sizeof(((struct rl_plugin *)0)->fini))

const char *plugin_stage_name(enum rl_stage stage)
{
	switch (stage) {
	case RL_STAGE_CEILINGS: return "ceilings";
	case RL_STAGE_COLLECT: return "collect";
	case RL_STAGE_ANALYZE: return "analyze";
	case RL_STAGE_RENDER: return "render";
	case RL_STAGE_UTILITY: return "utility";
	}
	return "?";
}

bool plugin_name_is_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-'))
			return false;
	return true;
}

/*
 * Check that path is an ELF shared library and not a program: e_type ET_DYN
 * and no PT_INTERP (a position-independent executable is ET_DYN too, but
 * names an interpreter).  Returns NULL or a static reason.
 */
static const char *elf_shared_object_fault(const char *path)
{
	Elf64_Ehdr eh;
	const char *fault = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return strerror(errno);
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		fault = "not a shared object (no ELF header)";
		goto out_close;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN) {
		fault = "not a shared object (ELF file of another type)";
		goto out_close;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)eh.e_phoff + (off_t)i * eh.e_phentsize;

		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph)) {
			fault = "not a shared object (truncated ELF file)";
			break;
		}
		if (ph.p_type == PT_INTERP) {
			fault = "not a shared object (it is a program)";
			break;
		}
	}
out_close:
	close(fd);
	return fault;
}

static bool stage_is_known(enum rl_stage s)
{
	return s >= RL_STAGE_CEILINGS && s <= RL_STAGE_UTILITY;
}

/* Check the exported struct; append "path: fault" to err on a refusal. */
static int verify_plugin(const char *path, const struct rl_plugin *p,
			 struct strbuf *err)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t stem = strlen(base);

	if (p->abi != ROOFLINE_PLUGIN_ABI) {
		strbuf_addf(err, "%s: plugin ABI %u, this host speaks ABI %u",
			    path, p->abi, ROOFLINE_PLUGIN_ABI);
		return -EPROTO;
	}
	if (p->size < PLUGIN_MIN_SIZE) {
		strbuf_addf(err,
			    "%s: plugin struct is %u bytes, shorter than the %zu this host reads",
			    path, p->size, (size_t)PLUGIN_MIN_SIZE);
		return -EPROTO;
	}
	if (stem > 3 && strcmp(base + stem - 3, ".so") == 0)
		stem -= 3;
	if (!p->name || strlen(p->name) != stem ||
	    strncmp(p->name, base, stem) != 0) {
		strbuf_addf(err, "%s: plugin calls itself '%s', not '%.*s'", path,
			    p->name ? p->name : "(null)", (int)stem, base);
		return -EPROTO;
	}
	if (!stage_is_known(p->stage)) {
		strbuf_addf(err, "%s: unknown stage %d", path, (int)p->stage);
		return -EPROTO;
	}
	if (!p->run) {
		strbuf_addf(err, "%s: plugin has no run function", path);
		return -EPROTO;
	}
	if (options_table_check(p, path, err) < 0)
		return -EPROTO;
	return 0;
}

struct plugin_handle *plugin_loader_open(const char *path, struct strbuf *err)
{
	const struct rl_plugin *p;
	const char *fault;
	void *dl;

	fault = elf_shared_object_fault(path);
	if (fault) {
		strbuf_addf(err, "%s: %s", path, fault);
		return NULL;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		strbuf_addf(err, "%s: cannot load: %s", path, dlerror());
		return NULL;
	}
	p = dlsym(dl, ROOFLINE_PLUGIN_SYMBOL);
	if (!p) {
		strbuf_addf(err, "%s: missing symbol '%s' (not a rooflined plugin)",
			    path, ROOFLINE_PLUGIN_SYMBOL);
		dlclose(dl);
		return NULL;
	}
	if (verify_plugin(path, p, err) < 0) {
		dlclose(dl);
		return NULL;
	}

	struct plugin_handle *h = xcalloc(1, sizeof(*h));

	h->plugin = p;
	h->path = xstrdup(path);
	h->dl = dl;
	return h;
}

struct plugin_handle *plugin_loader_find(const char *dir, const char *name,
					 struct strbuf *err)
{
	struct plugin_handle *h;
	char *file, *path;

	if (!plugin_name_is_valid(name)) {
		strbuf_addf(err, "invalid plugin name '%s'", name);
		return NULL;
	}
	file = xstrdup(name);
	for (char *c = file; *c; c++)
		if (*c == '-')
			*c = '_';
	path = xasprintf("%s/%s.so", dir, file);
	if (access(path, F_OK) < 0) {
		strbuf_addf(err, "unknown plugin '%s' (no %s)", name, path);
		h = NULL;
	} else {
		h = plugin_loader_open(path, err);
	}
	free(path);
	free(file);
	return h;
}

void plugin_loader_close(struct plugin_handle *h)
{
	if (!h)
		return;
	dlclose(h->dl);
	free(h->path);
	free(h);
}

const char *const *plugin_history_sets(const struct rl_plugin *p)
{
	size_t end = offsetof(struct rl_plugin, history) + sizeof(p->history);

	return p->size >= end ? p->history : NULL;
}
