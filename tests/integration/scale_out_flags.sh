#!/usr/bin/env bash
# The scale-out contract's bad input, refused before anything runs (exit 2, the flag or field
# named, with its range): `sizeup sweep --scale-out 17`, a profile with both scale_out.max and
# scale_out.replicas, a --scale-out-variant (or scale_out.variant) that is not among the
# variants swept, and `kubectl sizeup sweep --scale-out 17`.
set -u
: "${SIZEUP:?}"
W=$(mktemp -d /tmp/sizeup-scaleout.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# COMMAND... : exit status 2 and the first line of stderr containing WANT (the last argument).
refused() {
    local want=${*: -1} rc
    set -- "${@:1:$#-1}"
    "$@" >"$W/out" 2>"$W/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$* exited $rc, want 2: $(head -3 "$W/err")"
    grep -qF -- "$want" "$W/err" || fail "$*: stderr lacks '$want': $(head -3 "$W/err")"
}

# `true` as COMMAND: were any of these to start a sweep, --out would hold files.
sw=("$SIZEUP" sweep --out "$W/out-dir" --configs "1@0.5/256Mi 2@1/512Mi")
refused "${sw[@]}" --scale-out 17 -- true "--scale-out: '17' is not from 0 to 16"
refused "${sw[@]}" --scale-out -1 -- true "--scale-out: '-1' is not a whole number"
refused "${sw[@]}" --scale-out-variant 4@1/1Gi -- true \
    "--scale-out-variant: 4@1/1Gi is not one of the variants swept"
refused "${sw[@]}" --scale-out-variant nonsense -- true "--scale-out-variant: bad variant"

printf 'scale_out:\n  max: 4\n  replicas: [1, 2]\n' >"$W/both.yaml"
refused "${sw[@]}" --profile "$W/both.yaml" -- true \
    "both.yaml:3: scale_out.replicas: max and replicas are mutually exclusive"
printf 'scale_out: { replicas: [1, 4, 2] }\n' >"$W/order.yaml"
refused "${sw[@]}" --profile "$W/order.yaml" -- true "must be sorted and unique"
printf 'scale_out: { max: 3, variant: 2@2/2Gi }\n' >"$W/variant.yaml"
refused "${sw[@]}" --profile "$W/variant.yaml" -- true \
    "scale_out.variant: 2@2/2Gi is not one of the variants swept"
[ -e "$W/out-dir" ] && fail "a refused sweep created its --out directory"

ln -s "$SIZEUP" "$W/kubectl-sizeup"
refused "$W/kubectl-sizeup" sweep deploy/web --scale-out 17 "--scale-out: '17' is not from 0 to 16"
echo "scale_out_flags: ok"
