#!/usr/bin/env bash
# House rules that a machine can check: no banned functions, sources clang-formatted, and the
# structure figures of scripts/check-structure.sh (sizes, layers, the clock, cJSON, copied code).
set -eu
exec "$ROOT/scripts/lint.sh"
