#!/bin/sh
# Makes the certificates the unit tests of ../self_signed.rs verify (OpenSSL 3; run here).
# They are checked in, valid for a hundred years; their keys are thrown away, as the
# tests verify certificates, not handshakes.
set -eu

# A self-signed certificate as the PostgreSQL manual's recipe makes one (`openssl req
# -new -x509 -nodes -subj "/CN=..."`): openssl marks it a CA's, and `-addext` adds to it.
self_signed() {
    name=$1 subject=$2
    shift 2
    openssl req -new -x509 -days 36500 -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -keyout /dev/null -out "$name.crt" -subj "$subject" "$@"
}

self_signed self-signed /CN=localhost
self_signed other /CN=localhost
self_signed sans /CN=localhost -addext subjectAltName=DNS:db.example,IP:127.0.0.1
self_signed address-in-cn /CN=127.0.0.1 -addext subjectAltName=DNS:db.example
self_signed wildcard '/CN=*.example.test'
self_signed client-only /CN=localhost -addext extendedKeyUsage=clientAuth
self_signed ca-key-usage /CN=localhost -addext keyUsage=critical,keyCertSign,cRLSign

# A CA's certificate for localhost that a CA issued, not self-signed.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl req -x509 -days 36500 -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$work/issuer.key" -out "$work/issuer.pem" -subj '/CN=stead test issuer'
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout /dev/null -out "$work/issued.csr" -subj /CN=localhost
printf 'basicConstraints=critical,CA:TRUE\n' >"$work/issued.ext"
openssl x509 -req -days 36500 -in "$work/issued.csr" -CA "$work/issuer.pem" \
    -CAkey "$work/issuer.key" -set_serial 1 -extfile "$work/issued.ext" -out issued-ca.crt
