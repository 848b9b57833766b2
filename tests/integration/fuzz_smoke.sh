#!/usr/bin/env bash
# Every fuzz target, built with libFuzzer + ASan + UBSan, replays its committed seed corpus and
# then runs a fixed number of new inputs (FUZZ_SMOKE_RUNS, default 20000): a parser change that
# crashes on a known input fails `make test`, not only `make fuzz`.
set -eu
cd "$ROOT"
command -v clang >/dev/null || { echo "clang is missing (scripts/install-deps.sh test)"; exit 1; }
make --no-print-directory -j2 fuzz-build >/dev/null
bins=()
for src in tests/fuzz/fuzz_*.c; do bins+=("build/fuzz/$(basename "$src" .c)"); done
[ -x "${bins[0]}" ] || { echo "no fuzz targets built"; exit 1; }
# A fixed seed keeps CI repeatable; `make fuzz` explores with fresh seeds.
FUZZ_SEED=${FUZZ_SEED:-1} RUNS=${FUZZ_SMOKE_RUNS:-20000} tests/fuzz/run.sh 60 "${bins[@]}"
