#!/bin/sh
# make-keys.sh DIR - an owner key pair for Secure Boot (RSA-2048, SHA-256,
# valid 10 years): DIR/llmk-owner.key (private: keep it off the stick and out
# of git), DIR/llmk-owner.crt (PEM) and DIR/llmk-owner.cer (the same
# certificate in DER, the form firmware menus and MokManager enroll).
# Never overwrites an existing key.
set -eu
dir=${1:?usage: make-keys.sh DIR}
key=$dir/llmk-owner.key
if [ -e "$key" ]; then
    echo "make-keys: $key exists: kept (delete it first to make a new pair)" >&2
    exit 0
fi
mkdir -p "$dir"
umask 077
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -subj "/CN=LLM kernel owner key ($(hostname) $(date +%Y-%m-%d))/" \
    -keyout "$key" -out "$dir/llmk-owner.crt" 2> "$dir/openssl.log" ||
    { cat "$dir/openssl.log" >&2; exit 1; }
rm -f "$dir/openssl.log"
openssl x509 -in "$dir/llmk-owner.crt" -outform DER -out "$dir/llmk-owner.cer"
chmod 644 "$dir/llmk-owner.crt" "$dir/llmk-owner.cer" # certificates are public
echo "keys: $key (private), $dir/llmk-owner.crt, $dir/llmk-owner.cer"
