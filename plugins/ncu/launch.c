/* launch.c - see launch.h. */
#include "ncu/launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rank_script[] =
	"out=$1 ranks=$2 kind=$3 n=$4; shift 4\n"
	"if [ \"$kind\" = srun ]; then r=${SLURM_PROCID:-}; node=${SLURMD_NODENAME:-$(hostname)}\n"
	"else r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}; node=$(hostname); fi\n"
	"[ -n \"$r\" ] || { echo \"rooflined-rank: no rank number in the environment ($kind)\" >&2; exit 126; }\n"
	"printf '%s\\n' \"$node\" > \"$out/rank-$r.node\"\n"
	"nvidia-smi --query-gpu=pci.bus_id,uuid --format=csv,noheader > \"$out/rank-$r.gpus\" 2>/dev/null || : > \"$out/rank-$r.gpus\"\n"
	"ncu=(\"${@:1:n}\"); shift \"$n\"\n"
	"case \",$ranks,\" in\n"
	"*\",$r,\"*|,all,) exec \"${ncu[@]}\" --log-file \"$out/ncu.rank-$r.csv\" -- \"$@\" > \"$out/program.rank-$r.log\" 2>&1 ;;\n"
	"esac\n"
	"exec \"$@\" > \"$out/program.rank-$r.log\" 2>&1\n";

static int by_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

int launch_ranks_parse(const struct rl_strlist *items, long tasks,
		       struct launch_ranks *r, char *err, size_t err_size)
{
	memset(r, 0, sizeof(*r));
	r->v = calloc(items->n ? items->n : 1, sizeof(long));
	if (!r->v)
		return -ENOMEM;
	if (!items->n) {
		r->v[r->n++] = 0;
		return 0;
	}
	for (size_t i = 0; i < items->n; i++) {
		const char *s = items->v[i];
		char *end;
		long v;

		if (strcmp(s, "all") == 0) {
			r->all = true;
			continue;
		}
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || *end || v < 0 || v >= tasks) {
			snprintf(err, err_size, "ranks: '%s' is not 'all' nor a rank "
				 "of the step's %ld tasks (0 to %ld)", s, tasks,
				 tasks - 1);
			launch_ranks_release(r);
			return -EINVAL;
		}
		r->v[r->n++] = v;
	}
	qsort(r->v, r->n, sizeof(long), by_long);
	for (size_t i = 1; i < r->n; i++)
		if (r->v[i] == r->v[i - 1]) {
			snprintf(err, err_size, "ranks: rank %ld listed twice", r->v[i]);
			launch_ranks_release(r);
			return -EINVAL;
		}
	return 0;
}

void launch_ranks_release(struct launch_ranks *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

size_t launch_ranks_count(const struct launch_ranks *r, long tasks)
{
	return r->all ? (size_t)tasks : r->n;
}

long launch_ranks_at(const struct launch_ranks *r, size_t i)
{
	return r->all ? (long)i : r->v[i];
}

static char *ranks_text(const struct launch_ranks *r)
{
	size_t cap = r->n * 21 + 8, len = 0;
	char *s;

	if (r->all)
		return strdup("all");
	s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < r->n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%ld", i ? "," : "",
					r->v[i]);
	return s;
}

int launch_build(struct argv_buf *out, const char *launcher,
		 const char *launcher_path, long tasks, long gpus_per_task,
		 const struct launch_ranks *r, const char *out_dir,
		 char *const *ncu_argv)
{
	size_t n_ncu = 0, prog;
	char tasks_text[24], count[24];
	int err;

	while (ncu_argv[n_ncu] && strcmp(ncu_argv[n_ncu], "--log-file") != 0)
		n_ncu++;
	if (!ncu_argv[n_ncu] || !ncu_argv[n_ncu + 1] || !ncu_argv[n_ncu + 2] ||
	    strcmp(ncu_argv[n_ncu + 2], "--") != 0 || !ncu_argv[n_ncu + 3])
		return -EINVAL;
	prog = n_ncu + 3;
	snprintf(tasks_text, sizeof(tasks_text), "%ld", tasks);
	snprintf(count, sizeof(count), "%zu", n_ncu);
	err = argv_add(out, launcher_path);
	if (!err && strcmp(launcher, "mpirun") == 0)
		err = argv_add(out, "-np") || argv_add_owned(out, strdup(tasks_text));
	else if (!err)
		err = argv_add(out, "--kill-on-bad-exit=1");
	if (!err && strcmp(launcher, "mpirun") != 0 && gpus_per_task > 0) {
		char bind[48];

		snprintf(bind, sizeof(bind), "--gpu-bind=per_task:%ld", gpus_per_task);
		err = argv_add_owned(out, strdup(bind));
	}
	err = err ? err : argv_add(out, "/bin/bash");
	err = err ? err : argv_add(out, "-c");
	err = err ? err : argv_add(out, rank_script);
	err = err ? err : argv_add(out, "rooflined-rank");
	err = err ? err : argv_add(out, out_dir);
	err = err ? err : argv_add_owned(out, ranks_text(r));
	err = err ? err : argv_add(out, strcmp(launcher, "mpirun") == 0 ? "mpirun" : "srun");
	err = err ? err : argv_add_owned(out, strdup(count));
	for (size_t i = 0; !err && i < n_ncu; i++)
		err = argv_add(out, ncu_argv[i]);
	for (size_t i = prog; !err && ncu_argv[i]; i++)
		err = argv_add(out, ncu_argv[i]);
	return err ? -ENOMEM : 0;
}

/* Up to size-1 bytes of path into buf; 0 or -errno. */
static int slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int launch_rank_info(const char *out_dir, long rank, char *node,
		     size_t node_size, struct gpus *g)
{
	char path[4096], buf[8192];
	int rc;

	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path), "%s/rank-%ld.node", out_dir, rank);
	rc = slurp(path, buf, sizeof(buf));
	if (rc)
		return rc;
	buf[strcspn(buf, "\r\n")] = '\0';
	snprintf(node, node_size, "%s", buf);
	snprintf(path, sizeof(path), "%s/rank-%ld.gpus", out_dir, rank);
	if (slurp(path, buf, sizeof(buf)) == 0)
		gpus_parse_smi(buf, g);
	return 0;
}
