#!/usr/bin/env bash
# House rules that a machine can check: no banned functions, sources clang-formatted.
set -eu
exec "$ROOT/scripts/lint.sh"
