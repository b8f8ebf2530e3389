/*
 * session_pool.c - extra PostgreSQL sessions, and a parallel for over
 * them.  See session_pool.h.
 */
#include <pthread.h>
#include <string.h>

#include "leader.h"
#include "log.h"
#include "session_pool.h"
#include "util.h"

/* Session i of the pool, connected (or mended) now; NULL when it cannot be
 * had (logged). */
static struct db *session(struct session_pool *p, const struct config *cfg,
			  int i)
{
	struct strbuf err = STRBUF_INIT;

	if (p->db[i] && db_ok(p->db[i]))
		return p->db[i];
	if (p->db[i] && db_reconnect(p->db[i]) == 0) {
		leader_name_session(p->db[i], false); /* a reset forgot it */
		return p->db[i];
	}
	db_close(p->db[i]);
	strbuf_init(&err);
	p->db[i] = db_connect(cfg->database, &err);
	if (p->db[i] && db_set_timeouts(p->db[i], cfg->db_lock_timeout_ms,
					cfg->db_statement_timeout_ms) < 0) {
		strbuf_addf(&err, "cannot set the session's timeouts: %s",
			    db_error(p->db[i]));
		db_close(p->db[i]);
		p->db[i] = NULL;
	}
	if (p->db[i])
		leader_name_session(p->db[i], false);
	else
		log_warn("session %d of the pool: %s", i + 1, err.buf);
	strbuf_release(&err);
	return p->db[i];
}

struct pool_run {
	pthread_mutex_t lock;
	size_t next, n;     /* the next item to take, of n */
	session_pool_fn *fn;
	void *arg;
};

struct pool_thread {
	struct pool_run *run;
	struct db *db;
	pthread_t tid;
};

static void *pool_thread(void *arg)
{
	struct pool_thread *t = arg;
	struct pool_run *run = t->run;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&run->lock);
		i = run->next < run->n ? run->next++ : run->n;
		pthread_mutex_unlock(&run->lock);
		if (i == run->n)
			return NULL;
		run->fn(t->db, i, run->arg);
	}
}

int session_pool_for(struct session_pool *p, const struct config *cfg,
		     int sessions, size_t n, session_pool_fn *fn, void *arg)
{
	struct pool_run run = { .next = 0, .n = n, .fn = fn, .arg = arg };
	struct pool_thread t[SESSION_POOL_MAX];
	int want = sessions < SESSION_POOL_MAX ? sessions : SESSION_POOL_MAX;
	int got = 0, started = 0;

	if ((size_t)want > n)
		want = (int)n;
	for (int i = 0; i < want; i++) {
		struct db *db = session(p, cfg, i);

		if (db)
			t[got++] = (struct pool_thread){ .run = &run, .db = db };
	}
	if (got == 0)
		return 0;
	pthread_mutex_init(&run.lock, NULL);
	/* the first session runs in this thread: one thread fewer to make */
	for (int i = 1; i < got; i++) {
		int rc = pthread_create(&t[i].tid, NULL, pool_thread, &t[i]);

		if (rc != 0) {
			log_warn("cannot start a thread of the session pool: %s",
				 strerror(rc));
			break;
		}
		started = i;
	}
	pool_thread(&t[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(t[i].tid, NULL);
	pthread_mutex_destroy(&run.lock);
	return started + 1;
}

void session_pool_close(struct session_pool *p)
{
	for (int i = 0; i < SESSION_POOL_MAX; i++) {
		db_close(p->db[i]);
		p->db[i] = NULL;
	}
}
