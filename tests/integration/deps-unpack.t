#!/bin/bash
# scripts/deps --unpack DIR PREFIX [--ldconfig] on packages made here (no
# registry needed): each .deb lands under PREFIX, the update-alternatives
# links are made, PREFIX/lib/rooflined-stack links the libraries by soname
# (not one the system has, not the C library's), and a second --unpack
# --ldconfig links them again (it once took its own earlier links, gone by
# then, for the system's, and linked nothing: seen on the GPU machine).
# --ldconfig writes a private conf and cache here (ROOFLINE_DEPS_LDSO_*).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[[ $EUID == 0 ]] || skip_all "needs root (dpkg-deb, --ldconfig)"
for p in dpkg-deb cc ldconfig; do
	command -v "$p" >/dev/null || skip_all "needs $p"
done

DEPS=$ROOT/scripts/deps
W=$TEST_TMP
# A package PKG holding FILE... (paths under its root, made by the caller).
mkdeb() {
	local pkg=$1 root=$W/$1
	mkdir -p "$root/DEBIAN"
	printf 'Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
		"$pkg" >"$root/DEBIAN/control"
	dpkg-deb -b "$root" "$W/debs/$pkg.deb" >/dev/null
}
mkdir -p "$W/debs"
# libfake: a real shared library with a soname of its own, and a copy
# claiming libz's soname, which the system has.
L=$W/libfake/usr/lib/x86_64-linux-gnu
mkdir -p "$L"
echo 'int fake(void) { return 1; }' >"$W/fake.c"
cc -shared -fPIC -Wl,-soname,librlfake.so.3 -o "$L/librlfake.so.3.1.0" "$W/fake.c"
ln -s librlfake.so.3.1.0 "$L/librlfake.so.3"
cc -shared -fPIC -Wl,-soname,libz.so.1 -o "$L/libz.so.1" "$W/fake.c"
mkdeb libfake
# slurmd: the program under its Debian name, slurmd-wlm.
mkdir -p "$W/slurmd/usr/sbin"
printf '#!/bin/sh\necho fake slurmd\n' >"$W/slurmd/usr/sbin/slurmd-wlm"
chmod 0755 "$W/slurmd/usr/sbin/slurmd-wlm"
mkdeb slurmd

P=$W/prefix
export ROOFLINE_DEPS_LDSO_CONF=$W/ld.so.conf ROOFLINE_DEPS_LDSO_CACHE=$W/ld.so.cache
# The private cache starts as the system's directories (so libz is "had").
printf '%s\n' /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu >"$W/system.conf"
ok "a private ld.so cache of the system's libraries" ldconfig -C "$W/ld.so.cache" -f "$W/system.conf"

out=$("$DEPS" --unpack "$W/debs" "$P" 2>"$W/err")
is "$?" 0 "--unpack DIR PREFIX exits 0"
like "$(cat "$W/err")" "unpacked 2 packages into $P; 1 libraries the system lacks" "... says what it did"
like "$out" "export ROOFLINE_SLURMSTEPD=$P/usr/sbin/slurmstepd" "... prints the variables scripts/cluster reads"
is "$(readlink "$P/usr/sbin/slurmd")" slurmd-wlm "... links slurmd to slurmd-wlm, as update-alternatives would"
is "$(readlink "$P/lib/rooflined-stack/librlfake.so.3")" "$P/usr/lib/x86_64-linux-gnu/librlfake.so.3" \
	"... links the library the system lacks, by its soname"
ok "... not the one whose soname the system has (libz.so.1)" test ! -e "$P/lib/rooflined-stack/libz.so.1"

for round in first second; do
	"$DEPS" --unpack "$W/debs" "$P" --ldconfig >/dev/null 2>"$W/err"
	is "$?" 0 "--unpack --ldconfig, $round time, exits 0"
	ok "... links librlfake.so.3 ($round time)" test -L "$P/lib/rooflined-stack/librlfake.so.3"
	is "$(cat "$W/ld.so.conf")" "$P/lib/rooflined-stack" "... names the directory in the conf file"
	like "$(ldconfig -p -C "$W/ld.so.cache")" "librlfake.so.3 .*=> $P/lib/rooflined-stack/librlfake.so.3" \
		"... and ldconfig's cache has it"
done

"$DEPS" --unpack "$W/debs" / >/dev/null 2>"$W/err"
is "$?" 1 "--unpack into / is refused"
like "$(cat "$W/err")" "refusing to unpack into /" "... saying so"
done_testing
