#!/usr/bin/env bash
# Promise: no credential in any log. Scans every log kept by this reliability run (operator,
# fake API server and request logs, loadtest and client output, in REL_LOGS) for every bearer
# token issued during the run (REL_SECRETS) and for the string "Authorization" (the header's name; case-sensitive, so that the API group
# authorization.k8s.io in a request log's discovery paths is not counted).
set -u
. "$(dirname "$0")/lib.sh"
mapfile -t secrets < <(grep -v '^$' "$REL_SECRETS" | sort -u)
mapfile -t files < <(find "$REL_LOGS" -type f ! -name results ! -name .secrets ! -name 'p_logscan.out' | sort)
bytes=$(cat "${files[@]}" /dev/null | wc -c)
tok_hits=0
for s in "${secrets[@]}"; do
    n=$(grep -rlF -- "$s" "${files[@]}" /dev/null | wc -l)
    [ "$n" -gt 0 ] && echo "token ${s:0:4}... found in: $(grep -rlF -- "$s" "${files[@]}" /dev/null | head -n 3)"
    tok_hits=$((tok_hits + n))
done
auth_hits=$(cat "${files[@]}" /dev/null | grep -c 'Authorization')
[ "$auth_hits" -gt 0 ] && grep -l 'Authorization' "${files[@]}" | head -n 5
verdict=PASS
[ "$tok_hits" -eq 0 ] && [ "$auth_hits" -eq 0 ] || verdict=FAIL
[ ${#files[@]} -gt 0 ] || verdict=FAIL
result $verdict log-scan "${#secrets[@]} tokens and 'Authorization' searched in ${#files[@]} logs ($bytes bytes): $tok_hits files with a token, $auth_hits lines with 'Authorization'"
[ $verdict = PASS ]
