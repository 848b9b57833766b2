#!/usr/bin/env bash
# scripts/check-structure.sh fails on each violation it promises to catch, planted one at a time
# into a small clean tree (SIZEUP_STRUCTURE_ROOT), and passes on the clean tree: a file over 800
# lines without a "Size:" reason (and passes with one), an include of a higher layer, an include
# between local and kube, CLOCK_MONOTONIC outside src/core, a dropped cJSON_Add* result, and,
# when jscpd is available, a copied block over the copy-paste limit.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
check="$ROOT/scripts/check-structure.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

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

# expect NAME PATTERN: the check fails on the tree and prints a FAIL line matching PATTERN.
expect_fail() {
    local out
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
