#!/bin/sh
# sign-efi.sh KEY CERT IN.efi OUT.efi - signs a UEFI binary for Secure Boot
# (sbsign, Authenticode) and checks the signature against CERT (sbverify).
# An encrypted KEY is opened with the password in $SIGN_KEY_PASS, or asked
# for; the opened key lives only in a private temporary file.
set -eu
if [ $# -ne 4 ]; then
    echo "usage: sign-efi.sh KEY CERT IN.efi OUT.efi" >&2
    exit 2
fi
key=$1 cert=$2 in=$3 out=$4
for f in "$key" "$cert"; do
    [ -f "$f" ] || { echo "sign-efi: no such file: $f (make keys creates a pair, or give SIGN_KEY= SIGN_CERT=)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"
if [ -n "${SIGN_KEY_PASS:-}" ]; then
    openssl pkey -in "$key" -passin env:SIGN_KEY_PASS -out "$tmp/key.pem"
else
    openssl pkey -in "$key" -out "$tmp/key.pem"
fi
sbsign --key "$tmp/key.pem" --cert "$cert" --output "$out.tmp" "$in" 2>&1 | grep -v '^Signing Unsigned' || true
[ -f "$out.tmp" ] || { echo "sign-efi: sbsign wrote no $out" >&2; exit 1; }
sbverify --cert "$cert" "$out.tmp" > /dev/null || { rm -f "$out.tmp"; echo "sign-efi: the signature on $out does not verify" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "signed: $out ($(openssl x509 -in "$cert" -noout -subject))"
