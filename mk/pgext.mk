# mk/pgext.mk - rooflined_stats, the PostgreSQL server extension of pgext/:
# the median and median absolute deviation that the history queries take
# (sql/028_robust_stats.sql).  Included by the Makefile.
#
#   $(B)/pgext/   rooflined_stats.so, .control, --1.sql: what PostgreSQL
#                 loads; scripts/cluster puts this directory's files into
#                 the local cluster's PostgreSQL (ROOFLINE_PGEXT)
#   make install-pgext   into pg_config's library and extension
#                 directories under DESTDIR (the postgresql-15-rooflined
#                 package: debian/rules)
#
# The shared object is built alike in every variant, with our warnings but
# without the sanitizers: it is loaded into the server, which is not built
# with them.  Its arithmetic (pgext/robust.c, libc only) is unit-tested in
# every variant, sanitizers included (tests/unit/test_robust.c).  The
# server's headers come from postgresql-server-dev-15 (scripts/deps).

PG_CONFIG     ?= pg_config
PG_SERVER_INC := $(shell $(PG_CONFIG) --includedir-server 2>/dev/null)
PG_PKGLIBDIR  ?= $(shell $(PG_CONFIG) --pkglibdir 2>/dev/null)
PG_EXTDIR     ?= $(shell $(PG_CONFIG) --sharedir 2>/dev/null)/extension
# CFLAGS and LDFLAGS less the variant's debugging and sanitizer flags (a
# package build's hardening flags stay)
PGEXT_CFLAGS  := $(filter-out -fsanitize% -fno-sanitize% -O0 -O1 -g3 -fno-omit-frame-pointer,$(CFLAGS)) \
                 -O2 -g -fPIC
PGEXT_LDFLAGS := $(filter-out -fsanitize%,$(LDFLAGS))
PGEXT_FILES   := rooflined_stats.control rooflined_stats--1.sql
PGEXT         := $(B)/pgext/rooflined_stats.so $(addprefix $(B)/pgext/,$(PGEXT_FILES))

.PHONY: pgext install-pgext
all: pgext
pgext: $(PGEXT)

$(B)/pgext/rooflined_stats.so: pgext/rooflined_stats.c pgext/robust.c pgext/robust.h
	@test -n "$(PG_SERVER_INC)" -a -f "$(PG_SERVER_INC)/postgres.h" || \
	  { echo "no PostgreSQL server headers ($(PG_CONFIG) --includedir-server): run scripts/deps (postgresql-server-dev-15)" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(PGEXT_CFLAGS) $(PGEXT_LDFLAGS) \
	  -isystem $(PG_SERVER_INC) -shared -o $@ pgext/rooflined_stats.c pgext/robust.c -lm

$(B)/pgext/%: pgext/%
	@mkdir -p $(@D)
	cp $< $@

install-pgext: pgext
	install -D -m 644 $(B)/pgext/rooflined_stats.so $(DESTDIR)$(PG_PKGLIBDIR)/rooflined_stats.so
	install -D -m 644 -t $(DESTDIR)$(PG_EXTDIR) $(addprefix $(B)/pgext/,$(PGEXT_FILES))

$(B)/tests/test_robust: $(B)/obj/pgext/robust.o
$(B)/obj/tests/unit/test_robust.o: CPPFLAGS += -Ipgext
