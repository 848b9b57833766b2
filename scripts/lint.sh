#!/usr/bin/env bash
# Lint: banned functions (house rule 14), clang-format conformance of the C sources, and the
# structure checks of scripts/check-structure.sh. The call-circle count reads the objects of
# BUILD (default build; `make lint` builds them, tests/run-tests.sh exports its BUILD).
# Without clang-format the run fails: a lint that skips its formatting check passes code it
# never looked at.
set -u
cd "$(dirname "$0")/.."
export SIZEUP_OBJ_DIR=${SIZEUP_OBJ_DIR:-${BUILD:-build}/obj}
rc=0
banned='\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|gets|strerror|gmtime|localtime|ctime|asctime)[[:space:]]*\('
if grep -rnE "$banned" src tests/unit tests/kube tests/fuzz --include='*.c' --include='*.h' | grep -v 'lint: allow'; then
    echo "lint: banned functions above (use snprintf, strtol, err_str, gmtime_r ...)"
    rc=1
else
    echo "lint: no banned functions"
fi
if command -v clang-format >/dev/null; then
    bad=$(find src tests/unit tests/kube tests/fuzz -name '*.[ch]' -print0 |
          xargs -0 -n1 sh -c 'clang-format --dry-run --Werror "$0" >/dev/null 2>&1 || echo "$0"')
    if [ -n "$bad" ]; then
        echo "lint: not clang-formatted (run 'make format'):"; echo "$bad"; rc=1
    else
        echo "lint: formatting clean"
    fi
else
    echo "lint: FAIL clang-format not found: install it (apt-get install clang-format, or" \
        "scripts/install-deps.sh test)"
    rc=1
fi
# The structure figures (file sizes, layers, the clock, cJSON results, copied code).
scripts/check-structure.sh || rc=1
exit $rc
