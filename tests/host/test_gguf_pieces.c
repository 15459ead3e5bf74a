/* test_gguf_pieces.c - gguf_create_pieces (llm/format/gguf_split.c) on small sets
 * built here byte by byte, under ASan/UBSan: a joined set's tensors point
 * into their own pieces, and every refusal gives its reason and leaves nothing
 * allocated (LeakSanitizer checks at exit). Whole models through llmrun:
 * tests/host/test_gguf_split.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/format/gguf_split.h"
#include "tests/host/check.h"
#include "tests/host/gguf_layout.h"

#define MAX_SET 4

typedef struct {
    char name[64];
    GgufBuf bytes;
} Piece;

static Piece set[MAX_SET];
static int set_size;

static void put_kv_int(GgufBuf *b, const char *key, uint32_t type, uint32_t value, int bytes) {
    uint64_t len = strlen(key);
    gguf_buf_append(b, &len, 8);
    gguf_buf_append(b, key, len);
    gguf_buf_append(b, &type, 4);
    gguf_buf_append(b, &value, (size_t)bytes);
}

/* A piece holding split keys (no < 0: none) and F32 [8] tensors named by names. */
static void make_piece(int slot, const char *name, int no, int count, int total, const char *const *names,
                       int n_names) {
    Piece *p = &set[slot];
    if (name != p->name) snprintf(p->name, sizeof p->name, "%s", name);
    free(p->bytes.p);
    memset(&p->bytes, 0, sizeof p->bytes);
    GgufBuf *b = &p->bytes;
    uint32_t magic = GGUF_MAGIC, version = 3;
    uint64_t n_tensors = (uint64_t)n_names, n_kv = no < 0 ? 0 : 3;
    gguf_buf_append(b, &magic, 4);
    gguf_buf_append(b, &version, 4);
    gguf_buf_append(b, &n_tensors, 8);
    gguf_buf_append(b, &n_kv, 8);
    if (no >= 0) {
        put_kv_int(b, "split.no", GGUF_TYPE_UINT16, (uint32_t)no, 2);
        put_kv_int(b, "split.count", GGUF_TYPE_UINT16, (uint32_t)count, 2);
        put_kv_int(b, "split.tensors.count", GGUF_TYPE_INT32, (uint32_t)total, 4);
    }
    for (int i = 0; i < n_names; i++) {
        uint64_t len = strlen(names[i]), ne = 8, offset = 32 * (uint64_t)i;
        uint32_t dims = 1, type = 0;
        gguf_buf_append(b, &len, 8);
        gguf_buf_append(b, names[i], len);
        gguf_buf_append(b, &dims, 4);
        gguf_buf_append(b, &ne, 8);
        gguf_buf_append(b, &type, 4);
        gguf_buf_append(b, &offset, 8);
    }
    static const uint8_t zeros[32];
    gguf_buf_append(b, zeros, (32 - b->n % 32) % 32);
    for (int i = 0; i < n_names; i++) {
        float values[8];
        for (int k = 0; k < 8; k++) values[k] = (float)(slot * 100 + i * 10 + k);
        gguf_buf_append(b, values, sizeof values);
    }
}

static const void *find_in_set(void *ctx, const char *name, size_t *size) {
    for (int i = 0; i < set_size; i++)
        if (strcmp(set[i].name, name) == 0) {
            *size = set[i].bytes.n;
            return set[i].bytes.p;
        }
    return NULL;
}

static int open_set(GgufFile *f, char *err, size_t n) {
    GgufPieces pieces = {set[0].name, find_in_set, NULL};
    memset(err, 0, n);
    return gguf_create_pieces(f, set[0].bytes.p, set[0].bytes.n, &pieces, err, n);
}

static void expect_refused(const char *what, const char *reason) {
    GgufFile f;
    char err[256];
    int rc = open_set(&f, err, sizeof err);
    check(rc == -1 && strstr(err, reason) && !strchr(err, '\n') && f.tensors == NULL, what,
          "rc %d, err '%s' (want '%s')", rc, err, reason);
}

static const char *const AB[] = {"a", "b"}, *const C[] = {"c"}, *const D[] = {"d"};

static void good_set(void) {
    set_size = 3;
    make_piece(0, "m-00001-of-00003.gguf", 0, 3, 4, AB, 2);
    make_piece(1, "m-00002-of-00003.gguf", 1, 3, 4, C, 1);
    make_piece(2, "m-00003-of-00003.gguf", 2, 3, 4, D, 1);
}

int main(void) {
    GgufFile f;
    char err[256];
    good_set();
    int rc = open_set(&f, err, sizeof err);
    check(rc == 0 && f.n_pieces == 3 && f.n_tensors == 4, "three pieces join into four tensors", "rc %d: %s",
          rc, err);
    if (rc == 0) {
        const GgufTensorInfo *c = gguf_find_tensor(&f, "c"), *d = gguf_find_tensor(&f, "d");
        const uint8_t *p1 = set[1].bytes.p, *p2 = set[2].bytes.p;
        check(c && (const uint8_t *)c->data >= p1 && (const uint8_t *)c->data < p1 + set[1].bytes.n &&
                  ((const float *)c->data)[3] == 103.0f,
              "a tensor of piece 2 is used in place in piece 2", "c at %p", c ? c->data : NULL);
        check(d && ((const float *)d->data)[7] == 207.0f && (const uint8_t *)d->data >= p2,
              "a tensor of piece 3 is used in place in piece 3", "d at %p", d ? d->data : NULL);
        uint64_t bytes = set[0].bytes.n + set[1].bytes.n + set[2].bytes.n;
        check(f.pieces_bytes == bytes, "pieces_bytes is every piece's size together", "%llu vs %llu",
              (unsigned long long)f.pieces_bytes, (unsigned long long)bytes);
        gguf_destroy(&f);
    }

    set_size = 2;
    expect_refused("a piece missing", "piece m-00003-of-00003.gguf of the split model is missing");
    /* One piece of the good set replaced: slot, its split.no, split.count, split.tensors.count, tensors. */
    static const struct {
        const char *what;
        int slot, no, count, total;
        const char *const *names;
        int n_names;
        const char *reason;
    } broken[] = {
        {"another split.count", 1, 1, 2, 4, C, 1,
         "m-00002-of-00003.gguf says split.count 2, the first piece 3"},
        {"a piece out of order", 2, 0, 3, 4, D, 1, "m-00003-of-00003.gguf says split.no 0, expected 2"},
        {"a piece without split keys", 2, -1, 0, 0, D, 1, "m-00003-of-00003.gguf has no valid split.count"},
        {"a tensor in two pieces", 2, 2, 3, 4, C, 1, "tensor c is in piece 3 and in an earlier piece"},
        {"a tensor missing", 2, 2, 3, 4, D, 0, "the 3 pieces hold 3 tensors, split.tensors.count says 4"},
        {"another split.tensors.count", 2, 2, 3, 5, D, 1, "says split.tensors.count 5, the first piece 4"},
        {"a later piece given first", 0, 1, 3, 4, AB, 2, "this is piece 2 of 3 of a split model"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        good_set();
        make_piece(broken[i].slot, set[broken[i].slot].name, broken[i].no, broken[i].count, broken[i].total,
                   broken[i].names, broken[i].n_names);
        expect_refused(broken[i].what, broken[i].reason);
    }
    good_set();
    snprintf(set[0].name, sizeof set[0].name, "m.gguf");
    expect_refused("the first piece misnamed",
                   "the first of 3 pieces must be named NAME-00001-of-00003.gguf");
    good_set();
    rc = gguf_create_pieces(&f, set[0].bytes.p, set[0].bytes.n, NULL, err, sizeof err);
    check(rc == -1 && strstr(err, "must be loaded by name"), "a first piece with no way to find the rest",
          "rc %d: %s", rc, err);

    uint32_t index = 9, count = 9;
    check(gguf_split_position(set[1].bytes.p, set[1].bytes.n, &index, &count) == 1 && index == 1 &&
              count == 3,
          "gguf_split_position of piece 2 of 3", "%u of %u", index, count);
    make_piece(3, "whole.gguf", -1, 0, 0, AB, 2);
    check(gguf_split_position(set[3].bytes.p, set[3].bytes.n, &index, &count) == 0,
          "gguf_split_position of a whole file", "said split");
    rc = open_set(&f, err, sizeof err);
    check(rc == 0 && f.n_pieces == 3, "the set opens again after the refusals", "%s", err);
    if (rc == 0) gguf_destroy(&f);
    for (int i = 0; i < MAX_SET; i++) free(set[i].bytes.p);
    return failures ? 1 : 0;
}
