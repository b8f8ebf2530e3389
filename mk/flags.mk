# mk/flags.mk - the one place for compiler flags, library flags and install
# directories.  Included first by the Makefile (before any fragment).
#
# Libraries come from pkg-config where Debian ships a .pc file (libpq,
# yaml-0.1, cmocka, json-c); libslurm-dev ships none, so -lslurm.  Flags from
# the environment (dpkg-buildflags in a package build: hardening, -ffile-
# prefix-map) come first and ours are appended.

PKG_CONFIG ?= pkg-config
pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null || echo $(2))
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null || echo $(3))

PQ_CFLAGS     := $(call pc_cflags,libpq,-I/usr/include/postgresql)
PQ_LIBS       := $(call pc_libs,libpq,,-lpq)
YAML_CFLAGS   := $(call pc_cflags,yaml-0.1,)
YAML_LIBS     := $(call pc_libs,yaml-0.1,,-lyaml)
CMOCKA_CFLAGS := $(call pc_cflags,cmocka,)
CMOCKA_LIBS   := $(call pc_libs,cmocka,,-lcmocka)
# json-c: cli/cli_json.c only (`roofline ... --json`); -lm for its isfinite
JSONC_CFLAGS  := $(call pc_cflags,json-c,-I/usr/include/json-c)
JSONC_LIBS    := $(call pc_libs,json-c,,-ljson-c) -lm
SLURM_LIBS    := -lslurm

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wno-format-nonliteral -Wpointer-arith -Wcast-qual \
           -Wundef -Wvla -Werror
CSTD    := -std=c11 -D_GNU_SOURCE
# include/: the public plugin ABI (<rooflined/plugin.h>), as plugins outside
# the tree include it from the installed rooflined-dev.
CPPFLAGS += -Iinclude -Icommon -Iplugins -Idaemon -MMD -MP
# Library headers: the objects that include them are the only ones that
# need them, but the include paths are harmless everywhere.
CPPFLAGS += $(PQ_CFLAGS) $(YAML_CFLAGS) $(CMOCKA_CFLAGS)

# The one place the version is written: VERSION, printed by every program's
# --version.
VERSION := $(shell cat VERSION)
VERSION_CPPFLAGS := -DROOFLINE_VERSION='"$(VERSION)"'

# Reproducible: no __DATE__/__TIME__ (-Wdate-time makes one an error with
# -Werror), and the release build records source paths relative to the tree.
CFLAGS_debug   := -O0 -g3
CFLAGS_san     := -O1 -g3 -fsanitize=address,undefined -fno-omit-frame-pointer \
                  -fno-sanitize-recover=undefined
CFLAGS_release := -O2 -g -DNDEBUG -ffile-prefix-map=$(CURDIR)=.
LDFLAGS_san    := -fsanitize=address,undefined
# The fuzz targets (mk/fuzz.mk; clang only): every object instrumented for
# libFuzzer, ASan and UBSan; the targets link libFuzzer's main.
CFLAGS_fuzz    := -O1 -g3 -fsanitize=fuzzer-no-link,address,undefined \
                  -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS_fuzz   := -fsanitize=fuzzer,address,undefined
CPPFLAGS += -Wdate-time
CFLAGS  += $(CSTD) $(WARN) $(CFLAGS_$(VARIANT))
LDFLAGS += $(LDFLAGS_$(VARIANT))

# ---- install directories (make install, the package build) ----------------
# GNU names; /usr gets /etc and /var, any other prefix its own etc/ and var/.
PREFIX        ?= /usr/local
DESTDIR       ?=
BINDIR        ?= $(PREFIX)/bin
SBINDIR       ?= $(PREFIX)/sbin
PKGLIBDIR     ?= $(PREFIX)/lib/rooflined
DATADIR       ?= $(PREFIX)/share
PKGDATADIR    ?= $(DATADIR)/rooflined
INCLUDEDIR    ?= $(PREFIX)/include
MANDIR        ?= $(DATADIR)/man
DOCDIR        ?= $(DATADIR)/doc/rooflined
SYSCONFDIR    ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
LOCALSTATEDIR ?= $(if $(filter /usr,$(PREFIX)),/var,$(PREFIX)/var)
RUNSTATEDIR   ?= $(if $(filter /usr,$(PREFIX)),/run,$(LOCALSTATEDIR)/run)
UNITDIR       ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR   ?= $(DATADIR)/bash-completion/completions

# The two configuration files are the paths compiled in (the others are
# found from the program's own place, common/paths.h): the daemon's default
# configuration and the CLI's client configuration (cli/cli_conf.h).
CONFIG_FILE   := $(SYSCONFDIR)/rooflined/rooflined.yaml
CLIENT_CONFIG_FILE := $(SYSCONFDIR)/rooflined/roofline.conf
