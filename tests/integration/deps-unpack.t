#!/bin/bash
# scripts/deps --unpack DIR PREFIX [--ldconfig] on packages made here (no
# registry needed): each .deb lands under PREFIX, the update-alternatives
# links are made, PREFIX/lib/rooflined-stack links the libraries by soname
# (not one the system has, not the C library's), and a second --unpack
# --ldconfig links them again (it once took its own earlier links, gone by
# then, for the system's, and linked nothing: seen on the GPU machine).
# --ldconfig writes a private conf and cache here (ROOFLINE_DEPS_LDSO_*).
# The printed FONTCONFIG_FILE finds the prefix's font where the system's
# fontconfig file names none (ROOFLINE_DEPS_SYSTEM_FONTS_CONF), and gnuplot
# draws a PNG's text with it (on the GPU machine the PNGs had no text).
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
# fontconfig-config: its fonts.conf names a font directory with no font (as
# the GPU machine's /usr/share/fonts), and so does the "system's" file.
printf '<?xml version="1.0"?>\n<fontconfig><dir>%s</dir><cachedir>%s</cachedir></fontconfig>\n' \
	"$W/no-fonts" "$W/fc-cache" >"$W/system-fonts.conf"
mkdir -p "$W/fontconfig-config/etc/fonts"
cp "$W/system-fonts.conf" "$W/fontconfig-config/etc/fonts/fonts.conf"
mkdeb fontconfig-config
export ROOFLINE_DEPS_SYSTEM_FONTS_CONF=$W/system-fonts.conf
# fonts: the system's DejaVu Sans (fonts-dejavu-core, a test package) as a
# package's font.
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
have_fonts=0
if [[ -r $FONT ]] && command -v fc-list >/dev/null && command -v gnuplot >/dev/null; then
	have_fonts=1
	mkdir -p "$W/fonts/usr/share/fonts/truetype/rl"
	cp "$FONT" "$W/fonts/usr/share/fonts/truetype/rl/"
	mkdeb fonts
fi

P=$W/prefix
export ROOFLINE_DEPS_LDSO_CONF=$W/ld.so.conf ROOFLINE_DEPS_LDSO_CACHE=$W/ld.so.cache
# The private cache starts as the system's directories (so libz is "had").
printf '%s\n' /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu >"$W/system.conf"
ok "a private ld.so cache of the system's libraries" ldconfig -C "$W/ld.so.cache" -f "$W/system.conf"

out=$("$DEPS" --unpack "$W/debs" "$P" 2>"$W/err")
is "$?" 0 "--unpack DIR PREFIX exits 0"
like "$(cat "$W/err")" "unpacked $((3 + have_fonts)) packages into $P; 1 libraries the system lacks" "... says what it did"
like "$out" "export ROOFLINE_SLURMSTEPD=$P/usr/sbin/slurmstepd" "... prints the variables scripts/cluster reads"
is "$(readlink "$P/usr/sbin/slurmd")" slurmd-wlm "... links slurmd to slurmd-wlm, as update-alternatives would"
is "$(readlink "$P/lib/rooflined-stack/librlfake.so.3")" "$P/usr/lib/x86_64-linux-gnu/librlfake.so.3" \
	"... links the library the system lacks, by its soname"
ok "... not the one whose soname the system has (libz.so.1)" test ! -e "$P/lib/rooflined-stack/libz.so.1"

# The fonts, as a job of the daemon's would see them: only the printed
# FONTCONFIG_FILE (the daemon passes it on), HOME and caches of the test's.
if ((have_fonts)); then
	fcf=$(sed -n 's/^export FONTCONFIG_FILE=//p' <<<"$out")
	fc() { env -i PATH=/usr/bin:/bin HOME="$W/home" XDG_CACHE_HOME="$W/cache" ${fcf:+FONTCONFIG_FILE="$fcf"} "$@"; }
	like "$(fc fc-list : file)" "$P/usr/share/fonts/truetype/rl/DejaVuSans.ttf" \
		"... FONTCONFIG_FILE finds the prefix's font (the system's file names none)"
	like "$(fc fc-match sans file)" "$P/usr/share/fonts/" "... and fc-match picks it for 'sans'"
	# One chart with a label and one without: with no font they are the same.
	for t in plain label; do
		lbl=
		[[ $t == label ]] && lbl='set label "rooflined PNG text" at graph 0.2, 0.5'
		printf 'set terminal pngcairo size 320,200\nset output "%s"\nunset tics\nunset key\n%s\nplot [0:1] x\n' \
			"$W/$t.png" "$lbl" >"$W/$t.gp"
		fc gnuplot "$W/$t.gp" 2>>"$W/gnuplot.err"
	done
	# shellcheck disable=SC2317 # called through ok
	differ() { test -s "$1" && test -s "$2" && ! cmp -s "$1" "$2"; }
	ok "... gnuplot's pngcairo draws the text (a PNG with a label differs from one without)" \
		differ "$W/label.png" "$W/plain.png"
else
	skip "needs $FONT (fonts-dejavu-core), fc-list and gnuplot" 3
fi

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
