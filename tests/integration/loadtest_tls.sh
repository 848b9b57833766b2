#!/usr/bin/env bash
# HTTPS: against a local TLS server whose certificate comes from a CA this test generates, the
# run verifies it (by IP address and by host name with SNI) and succeeds; trusting another CA
# gives TLS errors and exit 99; --insecure skips verification. Also IPv6 ([::1]) over plain HTTP.
set -u
. "$ROOT/tests/servers/lib.sh"
command -v openssl >/dev/null || skip "openssl CLI is not installed"

d=$SRV_TMP
gen_ca() { # NAME
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj "/CN=sizeup test $1" -keyout "$d/$1.key" -out "$d/$1.pem" 2>/dev/null ||
        fail "openssl: cannot create CA $1"
}
gen_ca ca
gen_ca otherca
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$d/srv.key" -out "$d/srv.csr" 2>/dev/null || fail "openssl: server key"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$d/ext"
openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
    -days 1 -extfile "$d/ext" -out "$d/srv.pem" 2>/dev/null || fail "openssl: server cert"

srv_start tls --tls-cert "$d/srv.pem" --tls-key "$d/srv.key"
P=$SRV_PORT_tls

run() { # NAME, CA file, args...
    local name=$1 ca=$2; shift 2
    SSL_CERT_FILE=$ca timeout 30 "$SIZEUP" loadtest --json --out "$d/$name.json" \
        --duration 1s --warmup 0 --users 2 --threads 1 "$@"
    rc=$?
    echo "$name: exit $rc, $(jget "$d/$name.json" '"%d requests, %d failed, tls errors %d" % (j["requests"], j["failed"], j["errors"]["tls"])')"
}

run ip "$d/ca.pem" --url "https://127.0.0.1:$P"
[ $rc -eq 0 ] || fail "verified HTTPS by IP: exit $rc"
[ "$(jget "$d/ip.json" 'j["failed"] == 0 and j["requests"] > 10')" = True ] || fail "verified HTTPS by IP"

run name "$d/ca.pem" --url "https://localhost:$P"
[ $rc -eq 0 ] || fail "verified HTTPS by name (SNI): exit $rc"

run wrongca "$d/otherca.pem" --url "https://127.0.0.1:$P"
[ $rc -eq 99 ] || fail "wrong CA: exit $rc, want 99"
[ "$(jget "$d/wrongca.json" 'j["errors"]["tls"] > 0 and j["responses"] == 0')" = True ] ||
    fail "wrong CA must give TLS errors and no responses"

run insecure "$d/otherca.pem" --url "https://127.0.0.1:$P" --insecure
[ $rc -eq 0 ] || fail "--insecure: exit $rc"

# A certificate for localhost/127.0.0.1 does not cover another name of this machine.
run wrongname "$d/ca.pem" --url "https://$(hostname):$P"
if getent hosts "$(hostname)" | grep -q '^127\.'; then
    [ "$(jget "$d/wrongname.json" 'j["errors"]["tls"] > 0')" = True ] ||
        fail "a host name outside the certificate must fail verification"
fi

srv_start v6 --bind ::1
timeout 30 "$SIZEUP" loadtest --url "http://[::1]:$SRV_PORT_v6" --users 2 --duration 1s \
    --warmup 0 --json --out "$d/v6.json" || fail "IPv6 run exit $?"
[ "$(jget "$d/v6.json" 'j["failed"] == 0 and j["requests"] > 10')" = True ] || fail "IPv6"
echo ok
