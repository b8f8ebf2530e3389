# mk/deb.mk - the Debian packages (debian/), built from a clean copy of the
# tree, and the check that installs, runs and purges them.  Included by the
# Makefile.
#
#   make deb             build/deb/*.deb from a copy of the tree's files
#                        (git's tracked and untracked-not-ignored files: no
#                        build/, no var/), dpkg-buildpackage -us -uc -b, then
#                        lintian (errors fail).  roofline-gpu (the CUDA
#                        programs) where nvcc is found; elsewhere (or with
#                        NVCC=) the build profile pkg.rooflined.nogpu leaves
#                        it out.  DEB_CUDA_ARCHS="90" narrows its GPU
#                        architectures (debian/rules)
#   make deb-reproducible  build twice, compare the .debs byte for byte
#   make package-check   make deb, then tests/package/*.t against a fresh
#                        local cluster (run-integration): packages.t installs
#                        the .debs on this machine, runs the packaged daemon,
#                        the smoke pipeline through it, purges, compares file
#                        lists; install-doc.t runs docs/install.md's setup
#                        and removal as written, on Debian's PostgreSQL
#
# Needs root for package-check (dpkg -i); debhelper, scdoc and lintian are
# build packages of scripts/deps.

DEB_GOAL := $(.DEFAULT_GOAL)

DEB_DIR  := build/deb
DEB_SRC  := $(DEB_DIR)/rooflined-$(VERSION)
DEB_JOBS ?= 2
# Without nvcc, no roofline-gpu (debian/rules, debian/control).
DEB_PROFILES := $(if $(NVCC),,pkg.rooflined.nogpu)
DEB_CUDA_ARCHS ?=

.PHONY: deb deb-tree deb-reproducible package-check

deb-tree:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard | \
	  xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
	  tar --null -T - -cf - | tar -xf - -C $(DEB_SRC)

deb: deb-tree
	cd $(DEB_SRC) && DEB_BUILD_OPTIONS="parallel=$(DEB_JOBS) noddebs" \
	  DEB_CUDA_ARCHS="$(DEB_CUDA_ARCHS)" \
	  dpkg-buildpackage -us -uc -b $(if $(DEB_PROFILES),-P$(DEB_PROFILES))
	lintian --fail-on error \
	  $(DEB_DIR)/rooflined_$(VERSION)_*.changes
	@ls -l $(DEB_DIR)/*.deb

deb-reproducible:
	$(MAKE) deb
	mkdir -p build/deb-first && rm -f build/deb-first/*.deb
	cp $(DEB_DIR)/*.deb build/deb-first/
	$(MAKE) deb
	cd $(DEB_DIR) && for d in *.deb; do \
	  cmp ../deb-first/$$d $$d || { echo "$$d differs between two builds"; exit 1; }; \
	  echo "$$d: identical"; done

package-check: deb
	ROOFLINE_DEBS=$(CURDIR)/$(DEB_DIR) scripts/run-integration VARIANT=release \
	  --no-build tests/package/packages.t tests/package/install-doc.t

.DEFAULT_GOAL := $(DEB_GOAL)
