#!/usr/bin/env bash
# gen-certs.sh DIR [SERVER_CN] - throwaway PKI for drake's HTTPS endpoint:
#   ca.crt/ca.key          a CA that signs both sides
#   server.crt/server.key  drake's serving cert (SANs: localhost, 127.0.0.1, ::1,
#                          drake, drake.<ns>.svc names given in EXTRA_SANS)
#   client.crt/client.key  a client cert (CN=kube-scheduler) for mTLS
#   other-ca.crt, rogue.crt/rogue.key  a client cert from an unrelated CA, for tests
# Existing files are kept unless FORCE=1, so reruns are cheap.
set -euo pipefail
dir=${1:?usage: gen-certs.sh DIR [SERVER_CN]}
cn=${2:-drake}
mkdir -p "$dir"
cd "$dir"
if [ -f server.crt ] && [ -f client.crt ] && [ -f rogue.crt ] && [ "${FORCE:-0}" != 1 ]; then
  exit 0
fi
days=${DAYS:-365}
sans="DNS:localhost,DNS:drake,IP:127.0.0.1,IP:::1${EXTRA_SANS:+,$EXTRA_SANS}"
q() { "$@" >/dev/null 2>&1 || { echo "gen-certs: failed: $*" >&2; exit 1; }; }

q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -keyout ca.key -out ca.crt -subj "/CN=drake-test-ca"
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout server.key -out server.csr -subj "/CN=$cn"
q openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
  -out server.crt -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$sans")
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout client.key -out client.csr -subj "/CN=kube-scheduler"
q openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
  -out client.crt -extfile <(printf 'extendedKeyUsage=clientAuth\n')
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -keyout other-ca.key -out other-ca.crt -subj "/CN=unrelated-ca"
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout rogue.key -out rogue.csr -subj "/CN=rogue"
q openssl x509 -req -in rogue.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial \
  -days "$days" -out rogue.crt -extfile <(printf 'extendedKeyUsage=clientAuth\n')
rm -f ./*.csr ./*.srl
chmod 600 ./*.key
