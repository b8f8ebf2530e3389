#!/bin/bash
# scripts/layering (issue 25): the tree keeps the layers of
# docs/architecture.md, and the check fails, naming the file and line or the
# symbols, on a wrong include in a scratch copy of the tree and on the
# breaches of a small fixture tree (an upward include and call, an include
# across a layer, a call cycle, a folder without a layer).  Needs the build
# (objects of $BUILD), not the cluster.
. "$(dirname "$0")/../lib.sh"

LAYERING=$ROOT/scripts/layering

# ---- the tree itself --------------------------------------------------------
out=$("$LAYERING" --build "$BUILD" 2>&1)
is "$?" 0 "the tree keeps its layers (scripts/layering --build $BUILD)" || diag "$out"
like "$(grep -v 'older than their source' <<<"$out")" '^layering: [0-9]+ files in [0-9]+ folders keep their layers; [0-9]+ objects call' \
	"and says how much it read"

# ---- a wrong include in a scratch copy of the tree --------------------------
copy=$TEST_TMP/tree
mkdir -p "$copy"
(cd "$ROOT" && git ls-files -z -- '*.c' '*.h' '*.cu' docs/architecture.md Makefile mk |
	tar --null -T - -cf -) | tar -xf - -C "$copy" || bail_out "cannot copy the tree"
out=$("$LAYERING" --root "$copy" --no-calls 2>&1)
is "$?" 0 "the copy keeps its layers before the edit" || diag "$out"
# common/ (layer 1) including the daemon's engine header (layer 4)
line=$(grep -n '^#include' "$copy/common/util.c" | tail -1 | cut -d: -f1)
cp "$copy/common/util.c" "$TEST_TMP/util.c.orig"
sed -i "${line}a #include \"engine.h\"" "$copy/common/util.c"
out=$("$LAYERING" --root "$copy" --no-calls 2>&1)
is "$?" 1 "common/util.c including daemon/engine.h: the check fails (exit 1)"
like "$out" "common/util.c:$((line + 1)): includes daemon/engine.h: common \\(layer 1\\) may not use daemon \\(layer 4\\)" \
	"naming the file, the line and the layers"
# a plugin reaching into the daemon (the same layer, another folder)
cp "$TEST_TMP/util.c.orig" "$copy/common/util.c"
sed -i '0,/^#include/s//#include "step_policy.h"\n&/' "$copy/plugins/smoke.c"
out=$("$LAYERING" --root "$copy" --no-calls 2>&1)
is "$?" 1 "plugins/smoke.c including daemon/step_policy.h: the check fails"
like "$out" 'plugins/smoke.c:[0-9]+: includes daemon/step_policy.h: plugins \(layer 4\) may not use daemon \(layer 4\)' \
	"a folder of the same layer is not below"

# ---- a fixture: two layers, objects built here --------------------------------
fx=$TEST_TMP/fixture
mkdir -p "$fx/docs" "$fx/lib" "$fx/app" "$fx/build/obj/lib" "$fx/build/obj/app"
cat >"$fx/docs/architecture.md" <<'EOF'
# a fixture

```layers
0 lib
1 app
```
EOF
printf 'int lib_a(void);\n' >"$fx/lib/a.h"
printf 'int lib_b(void);\n' >"$fx/lib/b.h"
printf 'int app_main(void);\n' >"$fx/app/app.h"
printf '#include "a.h"\n#include "b.h"\nint lib_a(void) { return lib_b() + 1; }\n' >"$fx/lib/a.c"
printf '#include "b.h"\nint lib_b(void) { return 1; }\n' >"$fx/lib/b.c"
printf '#include "../lib/a.h"\n#include "app.h"\nint app_main(void) { return lib_a(); }\n' >"$fx/app/app.c"
build_fixture() {
	local f
	for f in lib/a lib/b app/app; do
		cc -c -o "$fx/build/obj/$f.o" "$fx/$f.c" || return 1
	done
}
ok "the fixture builds" build_fixture
out=$("$LAYERING" --root "$fx" --build "$fx/build" 2>&1)
is "$?" 0 "calls that flow down (app -> lib/a -> lib/b) pass" || diag "$out"

# b calls a back: a loop inside one folder
printf '#include "a.h"\n#include "b.h"\nint lib_b(void) { return 1; }\nint lib_c(void);\nint lib_c(void) { return lib_a(); }\n' >"$fx/lib/b.c"
build_fixture
out=$("$LAYERING" --root "$fx" --build "$fx/build" 2>&1)
is "$?" 1 "lib/a.c and lib/b.c calling each other: the check fails"
like "$out" 'lib/a.c: files call each other in a loop: lib/a.c -> lib/b.c \(lib_b\); lib/b.c -> lib/a.c \(lib_a\)' \
	"naming the loop and the symbols"

# lib calls up into app (no include: declared by hand), the calls' own rule
printf '#include "b.h"\nint app_main(void);\nint lib_b(void) { return app_main(); }\n' >"$fx/lib/b.c"
build_fixture
out=$("$LAYERING" --root "$fx" --build "$fx/build" 2>&1)
is "$?" 1 "lib/b.c calling app_main in app/: the check fails"
like "$out" 'lib/b.c: calls app/app.c \(app_main\): lib \(layer 0\) may not use app \(layer 1\)' \
	"naming the call up"
like "$out" 'files call each other in a loop: app/app.c -> lib/a.c \(lib_a\); lib/a.c -> lib/b.c \(lib_b\); lib/b.c -> app/app.c \(app_main\)' \
	"and the loop of three it closes"

# an include up, and a folder the doc does not place
printf '#include "../app/app.h"\n#include "b.h"\nint lib_b(void) { return 1; }\n' >"$fx/lib/b.c"
mkdir -p "$fx/extra"
printf 'int extra(void);\n' >"$fx/extra/extra.h"
out=$("$LAYERING" --root "$fx" --no-calls 2>&1)
is "$?" 1 "an include up and an unplaced folder: the check fails"
like "$out" 'lib/b.c:1: includes app/app.h: lib \(layer 0\) may not use app \(layer 1\)' "the include up"
like "$out" 'extra/: a folder of sources with no layer in docs/architecture.md' "the folder without a layer"

# a doc without the block is a setup error, not a pass
printf '# nothing\n' >"$fx/docs/architecture.md"
out=$("$LAYERING" --root "$fx" --no-calls 2>&1)
is "$?" 2 "a doc without a layers block: exit 2"
like "$out" 'no ```layers block' "saying so"

done_testing
