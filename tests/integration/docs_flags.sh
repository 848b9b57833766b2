#!/usr/bin/env bash
# The usage strings and docs/reference.md agree: the same flags, value names and defaults for
# every command, the same annotation names as the operator's own list, every status it writes.
set -u
: "${SIZEUP:?}" "${ROOT:?}"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
python3 "$ROOT/tests/integration/docs_flags.py" "$SIZEUP" "$ROOT"
