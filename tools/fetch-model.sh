#!/bin/sh
# fetch-model.sh DIR [NAME URL SHA256]...
#
# Downloads model files into DIR and checks their sha256; a file already
# there with the right checksum is kept. Without NAME URL SHA256 triples it
# fetches what `make run` boots on a clone without ../shared: llama2.c's
# stories15M.bin (Hugging Face karpathy/tinyllamas) and tokenizer.bin (the
# llama2.c repository). MODEL_BASE_URL=URL fetches those two from URL/NAME
# instead (a mirror; file:// works). Uses curl, else python3, else wget.
# Any failure is one line on stderr and exit status 1.
set -u

DIR=${1:?usage: fetch-model.sh DIR [NAME URL SHA256]...}
shift

fail() {
    echo "fetch-model: $*" >&2
    exit 1
}

download() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 2 --connect-timeout 15 -o "$2" "$1" 2>/dev/null
    elif command -v python3 >/dev/null 2>&1; then
        python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$1" "$2" 2>/dev/null
    elif command -v wget >/dev/null 2>&1; then
        wget -q -T 15 -O "$2" "$1" 2>/dev/null
    else
        fail "no curl, python3 or wget to download $1 with"
    fi
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
    fi
}

fetch() { # NAME URL SHA256
    name=$1 url=$2 want=$3 path=$DIR/$1
    if [ -f "$path" ] && [ "$(sha256_of "$path")" = "$want" ]; then
        echo "fetch-model: $path is there (sha256 checked)"
        return 0
    fi
    mkdir -p "$DIR" || fail "cannot create $DIR"
    echo "fetch-model: downloading $name from $url into $DIR/"
    rm -f "$path.part"
    if ! download "$url" "$path.part"; then
        rm -f "$path.part"
        fail "cannot download $url (no network?): place $name (sha256 $want) in $DIR/ yourself, or run make run MODEL=... TOKENIZER=..."
    fi
    got=$(sha256_of "$path.part")
    if [ "$got" != "$want" ]; then
        rm -f "$path.part"
        fail "$url has sha256 $got, not $want: removed; nothing was kept"
    fi
    mv "$path.part" "$path" || fail "cannot write $path"
    echo "fetch-model: $path ok (sha256 $want)"
}

if [ $# -eq 0 ]; then
    if [ -n "${MODEL_BASE_URL:-}" ]; then
        set -- stories15M.bin "$MODEL_BASE_URL/stories15M.bin" \
            cd590644d963867a2b6e5a1107f51fad663c41d79c149fbecbbb1f95fa81f49a \
            tokenizer.bin "$MODEL_BASE_URL/tokenizer.bin" \
            50a52ef822ee9e83de5ce9d0be0a025a773d019437f58b5ff9dcafb063ece361
    else
        set -- stories15M.bin https://huggingface.co/karpathy/tinyllamas/resolve/main/stories15M.bin \
            cd590644d963867a2b6e5a1107f51fad663c41d79c149fbecbbb1f95fa81f49a \
            tokenizer.bin https://github.com/karpathy/llama2.c/raw/master/tokenizer.bin \
            50a52ef822ee9e83de5ce9d0be0a025a773d019437f58b5ff9dcafb063ece361
    fi
fi
[ $(($# % 3)) -eq 0 ] || fail "arguments after DIR come in threes: NAME URL SHA256"
while [ $# -gt 0 ]; do
    fetch "$1" "$2" "$3"
    shift 3
done
