#!/usr/bin/env bash
# scripts/check-structure.sh fails on each violation it promises to catch, planted one at a time
# into a small clean tree (SIZEUP_STRUCTURE_ROOT), and passes on the clean tree: a file over 800
# lines without a "Size:" reason (and passes with one), an include of a higher layer, an include
# between local and kube, CLOCK_MONOTONIC outside src/core, a dropped cJSON_Add* result, one
# function over 80 lines more than the limit, one call circle more than the limit (files of one room calling each other, seen in the objects'
# symbols), and, when jscpd is available, a copied block over the copy-paste limit.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
check="$ROOT/scripts/check-structure.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
export SIZEUP_OBJ_DIR="$work/t/build/obj"
command -v cc >/dev/null && command -v nm >/dev/null || { echo "lint_structure: needs cc and nm"; exit 77; }

fail() { echo "lint_structure: FAIL $*"; fails=$((fails + 1)); }

# A clean tree: a core module, an output file that checks its cJSON results, a kube file.
clean_tree() {
    rm -rf "$work/t"
    mkdir -p "$work/t/src/core" "$work/t/src/output" "$work/t/src/kube" "$work/t/src/local"
    cat >"$work/t/src/core/clock.c" <<'C'
/* The one clock. */
#include <time.h>
#include "core/clock.h"
long clock_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec; }
C
    printf '/* header */\nlong clock_now(void);\n' >"$work/t/src/core/clock.h"
    cat >"$work/t/src/output/doc.c" <<'C'
/* A document. */
#include <cJSON.h>
#include "core/clock.h"
int doc_add(cJSON *o)
{
    if (!cJSON_AddNumberToObject(o, "now", (double)clock_now()))
        return -1;
    cJSON *a = cJSON_AddArrayToObject(o, "a");
    return a && cJSON_AddItemToArray(a, cJSON_CreateNull()) ? 0 : -1;
}
C
    printf '/* kube */\n#include "core/clock.h"\nint kube_x(void) { return 0; }\n' \
        >"$work/t/src/kube/x.c"
}

# The objects of the small tree, which the circle count reads. A planted file that does not
# compile (an include of a header the small tree lacks) gets an empty object: the circle count
# is not what those cases check.
build_objs() {
    local c o
    rm -rf "$work/t/build"
    for c in "$work"/t/src/*/*.c; do
        o="$work/t/build/obj/src/${c#"$work"/t/src/}"
        o=${o%.c}.o
        mkdir -p "$(dirname "$o")"
        cc -std=c11 -I"$work/t/src" -c "$c" -o "$o" 2>/dev/null ||
            cc -c -x c /dev/null -o "$o"
    done
}

# expect NAME PATTERN: the check fails on the tree and prints a FAIL line matching PATTERN.
expect_fail() {
    local out
    build_objs
    if out=$(SIZEUP_STRUCTURE_ROOT="$work/t" "$check" "${2:+--no-cpd}" 2>&1); then
        fail "$1: passed"
    elif ! grep -qE "FAIL .*$3" <<<"$out"; then
        fail "$1: no FAIL line matching '$3':"; echo "$out"
    else
        echo "lint_structure: ok: $1 fails ($(grep -E "FAIL .*$3" <<<"$out" | head -n 1))"
    fi
}

expect_pass() {
    local out
    build_objs
    if ! out=$(SIZEUP_STRUCTURE_ROOT="$work/t" "$check" --no-cpd 2>&1); then
        fail "$1: failed:"; echo "$out"
    else
        echo "lint_structure: ok: $1 passes"
    fi
}

clean_tree
expect_pass "the clean tree"

clean_tree
{ echo '/* A long file. */'; for i in $(seq 1 820); do echo "int v$i = $i;"; done; } \
    >"$work/t/src/output/long.c"
expect_fail "an 821-line file without a reason" no-cpd 'src/output/long.c: 821 lines'
sed -i '1s|.*|/* A long file. Size: one table, split it and the rows scatter. */|' \
    "$work/t/src/output/long.c"
expect_pass "the same file with its Size: reason"

clean_tree
echo '#include "operator/operator.h"' >>"$work/t/src/output/doc.c"
expect_fail "output including operator" no-cpd 'src/output/doc.c:11: output includes operator/operator.h'

clean_tree
echo '#include "kube/platform.h"' >>"$work/t/src/local/y.c"
expect_fail "local including kube" no-cpd 'local includes kube/platform.h \(a same-rank'

clean_tree
printf '#include <time.h>\nvoid t(struct timespec *x) { clock_gettime(CLOCK_MONOTONIC, x); }\n' \
    >"$work/t/src/kube/t.c"
expect_fail "the monotonic clock in kube" no-cpd 'src/kube/t.c:2: reads the monotonic clock'

clean_tree
printf '#include <cJSON.h>\nvoid d(cJSON *o)\n{\n    if (o)\n        cJSON_AddStringToObject(o, "k", "v");\n}\n' \
    >"$work/t/src/output/drop.c"
expect_fail "a dropped cJSON_Add result" no-cpd 'src/output/drop.c:5: cJSON_AddStringToObject result unchecked'

# Call circles: one more than the script's limit, each a pair of sweep files calling each other
# (a.c's function calls b.c's and b.c's calls back), and a chain that is no circle beside them.
limit=$(sed -n 's/^CIRCLES_MAX=\([0-9]*\).*/\1/p' "$check")
clean_tree
mkdir -p "$work/t/src/sweep"
for i in $(seq 0 "$limit"); do
    printf 'int b%d(int);\nint a%d(int x) { return x ? b%d(x - 1) : 0; }\n' $i $i $i \
        >"$work/t/src/sweep/a$i.c"
    printf 'int a%d(int);\nint b%d(int x) { return a%d(x); }\n' $i $i $i >"$work/t/src/sweep/b$i.c"
done
printf 'int a0(int);\nint top(void) { return a0(3); }\n' >"$work/t/src/sweep/top.c"
expect_fail "$((limit + 1)) call circles (limit $limit)" no-cpd \
    "$((limit + 1)) call circles is over the limit $limit"
out=$(SIZEUP_STRUCTURE_ROOT="$work/t" "$check" --no-cpd 2>&1)
if ! grep -q 'circle in src/sweep: a0.c <-> b0.c$' <<<"$out"; then
    fail "the circle a0.c <-> b0.c is not named:"; echo "$out"
elif grep -q 'circle in src/sweep: .*top.c' <<<"$out"; then
    fail "top.c, which only calls into a circle, is counted in it:"; echo "$out"
elif ! grep -q "(nm): $((limit + 1)) (limit $limit; core 0, kube 0, local 0, output 0, sweep $((limit + 1)))" <<<"$out"; then
    fail "no per-room count:"; echo "$out"
else
    echo "lint_structure: ok: each circle is named with its files and counted per room"
fi
rm -f "$work/t/src/sweep/a0.c"
expect_pass "the same tree with one circle fewer (at the limit)"
rm -f "$work/t/src/sweep/b0.c"

# Functions over 80 lines: one more than the limit fails, and the report names them.
flimit=$(sed -n 's/^LONG_FUNCS_MAX = \([0-9]*\).*/\1/p' "$ROOT/scripts/check-structure.py")
clean_tree
{ echo '/* Long functions. */'
  for i in $(seq 0 "$flimit"); do
      echo "int long_$i(int x)"; echo "{"
      for j in $(seq 1 80); do echo "    x += $j;"; done
      echo "    return x;"; echo "}"
  done; } >"$work/t/src/output/long.c"
expect_fail "$((flimit + 1)) functions over 80 lines (limit $flimit)" no-cpd \
    "long function src/output/long.c:2: long_0, 84 lines"

# A stale object (older than its source) fails rather than count yesterday's calls.
clean_tree
build_objs
touch -d '1 hour ago' "$work/t/build/obj/src/kube/x.o"
if out=$(SIZEUP_STRUCTURE_ROOT="$work/t" "$check" --no-cpd 2>&1); then
    fail "a stale object: passed"
elif ! grep -q 'FAIL objects missing or older than their source' <<<"$out"; then
    fail "a stale object: no FAIL line:"; echo "$out"
else
    echo "lint_structure: ok: a stale object fails"
fi

# Copied code: one 40-line function in two files is far over the limit.
if "$ROOT/scripts/install-jscpd.sh" >/dev/null 2>&1; then
    clean_tree
    for f in a b; do
        { echo "/* copy $f */"; echo "int f_$f(int x)"; echo "{"; echo "    int s = 0;"
          for i in $(seq 1 40); do echo "    s += x * $i + (x >> ($i % 7)) - $i;"; done
          echo "    return s;"; echo "}"; } >"$work/t/src/output/copy_$f.c"
    done
    expect_fail "a copied function" "" 'copied code .* is over the limit'
else
    echo "lint_structure: jscpd unavailable: the copy-paste case is not checked here"
fi

if [ $fails -ne 0 ]; then
    echo "lint_structure: $fails case(s) failed"
    exit 1
fi
echo "lint_structure: every planted violation fails the check; the clean tree passes"
