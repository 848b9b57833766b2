#!/usr/bin/env bash
# The Universal Scalability Law fit (src/advise/usl.c) against an independent non-linear fit by
# scipy (curve_fit with bounds) on the R `usl` package's public data sets (raytracer, specsdm91)
# and a synthetic curve: s, k and the peak agree within 10%. The fit is reached through the unit
# test binary's `--fit` mode, which reads "N X" lines and prints the fit as JSON.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build/asan}
bin="$BUILD/tests/test_usl"
[ -x "$bin" ] || { echo "FAIL: $bin not built (make unit-bins)"; exit 1; }
# Debian's scipy is the system python's: a python3 earlier on PATH (a virtualenv, pyenv) may
# not have it.
py=
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import scipy' 2>/dev/null; then
        py=$cand
        break
    fi
done
[ -n "$py" ] || { echo "FAIL: no python3 with scipy (scripts/install-deps.sh test)"; exit 1; }

"$py" "$ROOT/tests/integration/usl_fit.py" "$bin" || { echo "FAIL: the fits differ"; exit 1; }

# Bad input reaches the caller as an error, not a fit.
out=$(printf '2 180\n3 250\n' | "$bin" --fit)
[ $? -eq 1 ] || { echo "FAIL: a fit without a point at 1 replica succeeded: $out"; exit 1; }
case $out in *"at 1 replica"*) ;; *) echo "FAIL: unclear error: $out"; exit 1 ;; esac
# A contended point is listed but left out.
a=$(printf '1 100 1\n2 190 1\n3 270 1\n' | "$bin" --fit)
b=$(printf '1 100 1\n2 190 1\n3 270 1\n4 120 1 excluded\n' | "$bin" --fit)
[ "${a%\"used\"*}" = "${b%\"used\"*}" ] || { echo "FAIL: an excluded point moved the fit"; exit 1; }
echo "usl_fit: ok"
