/* paths.c - see paths.h. */
#include "paths.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "util.h"

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Set name to the first existing directory among the candidates. */
static void export_first_dir(const char *name, char *const *candidates,
			     size_t n)
{
	const char *cur = getenv(name);

	if (cur && *cur)
		return;
	for (size_t i = 0; i < n; i++) {
		if (candidates[i] && is_dir(candidates[i])) {
			setenv(name, candidates[i], 1);
			return;
		}
	}
}

void paths_export_defaults(void)
{
	char *exe = util_exe_dir();

	if (!exe)
		return;

	char *libexec[] = {
		xasprintf("%s/../lib/rooflined", exe), /* installed */
		xstrdup(exe),                           /* build tree */
	};
	char *etc[] = {
		xasprintf("%s/../../../etc", exe),           /* build/V/bin */
		xasprintf("%s/../share/rooflined/etc", exe), /* installed */
	};

	/* In the build tree the CUDA programs sit beside the binaries. */
	if (is_dir(etc[0]))
		export_first_dir("ROOFLINE_LIBEXEC", libexec + 1, 1);
	else
		export_first_dir("ROOFLINE_LIBEXEC", libexec, ARRAY_SIZE(libexec));
	export_first_dir("ROOFLINE_ETC", etc, ARRAY_SIZE(etc));
	for (size_t i = 0; i < ARRAY_SIZE(libexec); i++)
		free(libexec[i]);
	for (size_t i = 0; i < ARRAY_SIZE(etc); i++)
		free(etc[i]);
	free(exe);
}
