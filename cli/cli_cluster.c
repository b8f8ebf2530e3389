/* cli_cluster.c - see cli_cluster.h. */
#include "cli_cluster.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_cluster.h"
#include "slurm.h"
#include "strbuf.h"

static bool has_slurm_steps(const struct pipeline *p)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (!p->steps[i].on_daemon)
			return true;
	return false;
}

/* The cluster cannot be reached: an error or a warning, as asked. */
static int unreachable(const char *cmd, bool required, const char *why)
{
	fprintf(stderr, "roofline %s: %s: partition, gres and time not checked "
			"against the Slurm cluster: %s\n", cmd,
		required ? "error" : "warning", why);
	return required ? -EIO : 0;
}

int cli_cluster_check(const char *cmd, const struct pipeline *p, bool required)
{
	const char *conf = slurm_conf_file();
	struct strbuf err = STRBUF_INIT;
	struct slurm_cluster *c = NULL;
	int rc;

	if (!has_slurm_steps(p))
		return 0;
	strbuf_init(&err);
	/* libslurm ends the process when it cannot read its configuration */
	if (access(conf, R_OK) < 0) {
		strbuf_addf(&err, "cannot read %s: %s", conf, strerror(errno));
		rc = unreachable(cmd, required, err.buf);
		goto out;
	}
	slurm_setup(NULL);
	rc = slurm_cluster_load(&c, &err);
	if (rc < 0)
		rc = unreachable(cmd, required, err.buf);
	else if ((rc = pipeline_cluster_check(p, c, &err)) < 0)
		fputs(err.buf, stderr);
	slurm_cluster_free(c);
	slurm_teardown();
out:
	strbuf_release(&err);
	return rc;
}
