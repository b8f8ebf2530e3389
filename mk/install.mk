# mk/install.mk - `make install` in the FHS layout, and the files generated
# from templates on the way: the systemd unit and the configuration (paths
# filled in), the manuals (scdoc).  Included by the Makefile; the
# directories are mk/flags.mk's.
#
#   PREFIX/sbin/{rooflined,roofline-job}   PREFIX/bin/roofline
#   PREFIX/lib/rooflined/plugins/*.so      PREFIX/lib/rooflined/<CUDA programs>
#                                          (install-gpu: where nvcc is found)
#   PREFIX/lib/rooflined/notify/*.sh       (the findings' notify hooks)
#   PREFIX/share/rooflined/{sql,pipelines,etc}
#   PREFIX/include/rooflined/{plugin.h,rooflined_plugin.h}  (the ABI; the
#                                      second the former name, including it)
#   PREFIX/share/man/man{1,5,7,8}/...      PREFIX/share/bash-completion/...
#   SYSCONFDIR/rooflined/rooflined.yaml    SYSCONFDIR/rooflined/pipelines/
#   SYSCONFDIR/rooflined/roofline.conf     (the CLI's client configuration)
#   UNITDIR/rooflined.service
#   LOCALSTATEDIR/lib/rooflined, LOCALSTATEDIR/spool/rooflined (0711)
#
# Installed programs find plugins, migrations and data from their own place
# (common/paths.h), so one build installs under any PREFIX; only the default
# configuration files are compiled in (CONFIG_FILE into rooflined,
# CLIENT_CONFIG_FILE into roofline).
#
# The install-* targets are what the Debian packages split (debian/*.install
# name the same paths); `install` is all of them.  Ownership (the rooflined
# user) is the package's postinst's, not make's: make install runs as anyone.

INSTALL_GOAL := $(.DEFAULT_GOAL)

.PHONY: install install-daemon install-cli install-job install-gpu install-dev install-man \
        man generated

GEN := build/gen
MANS := $(patsubst docs/man/%.scd,build/man/%,$(wildcard docs/man/*.scd))
SCDOC ?= scdoc

# @NAME@ -> the directory, for the templates under etc/
SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
            -e 's|@PKGLIBDIR@|$(PKGLIBDIR)|g' -e 's|@PKGDATADIR@|$(PKGDATADIR)|g' \
            -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g' \
            -e 's|@RUNSTATEDIR@|$(RUNSTATEDIR)|g'

# The directories are part of the output: a stamp that changes with them.
SUBST_DIRS = $(SBINDIR) $(BINDIR) $(PKGLIBDIR) $(PKGDATADIR) $(SYSCONFDIR) \
             $(LOCALSTATEDIR) $(RUNSTATEDIR)
$(GEN)/dirs.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(SUBST_DIRS)' | cmp -s - $@ || echo '$(SUBST_DIRS)' >$@

$(GEN)/%: etc/%.in $(GEN)/dirs.stamp
	@mkdir -p $(@D)
	$(SUBST) $< >$@.tmp && mv $@.tmp $@

generated: $(GEN)/rooflined.service $(GEN)/rooflined.yaml

# scdoc writes no date unless SOURCE_DATE_EPOCH is set (reproducible).
build/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	$(SCDOC) <$< >$@.tmp && mv $@.tmp $@

man: $(MANS)

install: install-daemon install-cli install-job install-gpu install-dev

# compute nodes: roofline-job, job-side plugins, data tables
install-job: $(B)/bin/roofline-job $(foreach p,$(PLUGINS_JOB),$(B)/plugins/$(p).so) man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR)/plugins $(DESTDIR)$(PKGDATADIR)/etc
	install -m 755 $(B)/bin/roofline-job $(DESTDIR)$(SBINDIR)/
	install -m 644 $(foreach p,$(PLUGINS_JOB),$(B)/plugins/$(p).so) $(DESTDIR)$(PKGLIBDIR)/plugins/
	install -m 644 etc/*.tsv $(DESTDIR)$(PKGDATADIR)/etc/
	install -d $(DESTDIR)$(MANDIR)/man8
	$(call install_man,roofline-job.8)

# GPU nodes: the CUDA programs (ert-bench, the reference kernels), where the
# job-side plugins look for them (ROOFLINE_LIBEXEC).  Nothing without nvcc,
# or in the san variant (which builds no device code).
install-gpu: cuda
	$(if $(NVCC),$(if $(filter-out san,$(VARIANT)),install -d $(DESTDIR)$(PKGLIBDIR)))
	$(if $(NVCC),$(if $(filter-out san,$(VARIANT)),install -m 755 $(foreach p,$(CUDA_PROGS),$(B)/bin/$(p)) $(DESTDIR)$(PKGLIBDIR)/))

# the service node: daemon, daemon-side plugins, migrations, pipelines,
# configuration, unit, state directories
install-daemon: $(B)/bin/rooflined $(foreach p,$(PLUGINS_DAEMON),$(B)/plugins/$(p).so) generated man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR)/plugins \
	  $(DESTDIR)$(PKGDATADIR)/sql $(DESTDIR)$(PKGDATADIR)/pipelines \
	  $(DESTDIR)$(SYSCONFDIR)/rooflined/pipelines $(DESTDIR)$(UNITDIR) \
	  $(DESTDIR)$(LOCALSTATEDIR)/lib/rooflined \
	  $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -d -m 711 $(DESTDIR)$(LOCALSTATEDIR)/spool/rooflined
	install -m 755 $(B)/bin/rooflined $(DESTDIR)$(SBINDIR)/
	install -m 644 $(foreach p,$(PLUGINS_DAEMON),$(B)/plugins/$(p).so) $(DESTDIR)$(PKGLIBDIR)/plugins/
	install -m 644 sql/*.sql $(DESTDIR)$(PKGDATADIR)/sql/
	install -m 644 pipelines/*.yaml $(DESTDIR)$(PKGDATADIR)/pipelines/
	install -m 644 $(GEN)/rooflined.yaml $(DESTDIR)$(SYSCONFDIR)/rooflined/
	install -m 644 $(GEN)/rooflined.service $(DESTDIR)$(UNITDIR)/
	install -d $(DESTDIR)$(PKGLIBDIR)/notify
	install -m 755 etc/notify-*.sh $(DESTDIR)$(PKGLIBDIR)/notify/
	$(call install_man,rooflined.8 rooflined.yaml.5 rooflined-pipeline.5)

# login nodes: the CLI, its client configuration and its completion
install-cli: $(B)/bin/roofline man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(SYSCONFDIR)/rooflined
	install -m 755 $(B)/bin/roofline $(DESTDIR)$(BINDIR)/
	install -m 644 etc/roofline.conf $(DESTDIR)$(SYSCONFDIR)/rooflined/
	install -m 644 cli/roofline.bash-completion $(DESTDIR)$(BASHCOMPDIR)/roofline
	$(call install_man,roofline.1)

# plugin authors: the ABI header and its manual
install-dev: man
	install -d $(DESTDIR)$(INCLUDEDIR)/rooflined $(DESTDIR)$(MANDIR)/man7
	install -m 644 include/rooflined/plugin.h include/rooflined/rooflined_plugin.h $(DESTDIR)$(INCLUDEDIR)/rooflined/
	$(call install_man,rooflined-plugin.7)

# install_man PAGE...: build/man/PAGE into MANDIR/manN (N: the suffix)
install_man = $(foreach m,$(1),install -D -m 644 build/man/$(m) \
	$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(m);)


.DEFAULT_GOAL := $(INSTALL_GOAL)
