/* gguf.h - reader for GGUF files (versions 2 and 3; version 1 is rejected)
 * held in memory. Nothing is copied: strings and tensor data are pointers
 * into the caller's buffer, which must outlive the GgufFile. gguf_create
 * checks every count, length and offset against the buffer (overflow-safe)
 * before anything is used, so the accessors below never read out of bounds.
 *
 * Typical use:
 *     GgufFile f;
 *     if (gguf_create(&f, data, size, err, sizeof err) != 0) { puts(err); ... }
 *     uint32_t n_layers;
 *     gguf_get_u32(&f, "llama.block_count", &n_layers);   // 0 on success
 *     GgufArray toks;
 *     gguf_get_array(&f, "tokenizer.ggml.tokens", &toks);
 *     for (uint64_t i = 0; i < toks.count; i++) { GgufString s; gguf_array_string(&toks, i, &s); }
 *     gguf_destroy(&f);
 */
#ifndef LLM_GGUF_H
#define LLM_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC 0x46554747u /* "GGUF" little-endian */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4

/* Metadata value types (as stored in the file). */
typedef enum {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT
} GgufValueType;

/* A string inside the file: NOT NUL-terminated. */
typedef struct {
    const char *ptr;
    uint64_t len;
} GgufString;

/* An array value. Elements of fixed-size types lie back to back at data
 * (little-endian, possibly unaligned: read them with the accessors).
 * Strings and nested arrays have variable size: gguf_array_string /
 * gguf_array_array find element i by walking (O(i)); to visit all elements
 * in order use GgufArrayIter (O(1) per step). */
typedef struct {
    GgufValueType type; /* element type */
    uint64_t count;
    const uint8_t *data; /* first element */
    const uint8_t *end;  /* one past the last element (validated) */
} GgufArray;

/* One metadata key/value pair. */
typedef struct {
    GgufString key;
    GgufValueType type;
    const uint8_t *value; /* the raw value bytes (for ARRAY: its header) */
} GgufKeyValue;

/* One tensor. ne[0] is the fastest-varying dimension (row length); dims
 * beyond n_dims are 1. type is a ggml type number (see ggml_types.h). */
typedef struct {
    GgufString name;
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS];
    uint32_t type;
    uint64_t offset;  /* relative to the start of the data section */
    const void *data; /* absolute pointer into the buffer */
    uint64_t n_elements;
    uint64_t n_bytes; /* size of the data for this type (checked to fit) */
} GgufTensorInfo;

typedef struct {
    const uint8_t *base;
    size_t size;
    uint32_t version;
    uint64_t n_kv;
    uint64_t n_tensors;
    GgufKeyValue *kv;        /* n_kv entries (heap) */
    GgufTensorInfo *tensors; /* n_tensors entries (heap) */
    uint32_t alignment;      /* general.alignment, default 32 */
    uint64_t data_offset;    /* start of the tensor data section */
    uint32_t n_pieces;       /* 1; N for a split model (gguf_split.h) */
    uint64_t pieces_bytes;   /* size of every piece together */
} GgufFile;

/* 1 when the buffer starts with the GGUF magic. */
int gguf_is_gguf(const void *data, size_t size);

/* Parses and validates header, metadata and tensor infos. A tensor of an
 * unknown ggml type is kept with n_bytes 0 (so a newer file's vocabulary
 * stays readable); the model loader refuses it by name. Sizes of known types
 * are checked to lie inside the file. Returns 0, or -1 with
 * a one-line reason in err (nothing stays allocated then). */
int gguf_create(GgufFile *f, const void *data, size_t size, char *err, size_t err_size);
void gguf_destroy(GgufFile *f);

/* Metadata lookup by exact key name; NULL when absent. */
const GgufKeyValue *gguf_find_key(const GgufFile *f, const char *key);

/* Typed getters: 0 on success; -1 when the key is absent or has another
 * type (no conversion except: gguf_get_u32/i32 accept any integer type whose
 * value fits, gguf_get_f32 accepts F32 or F64). *out is untouched on -1. */
int gguf_get_u8(const GgufFile *f, const char *key, uint8_t *out);
int gguf_get_i8(const GgufFile *f, const char *key, int8_t *out);
int gguf_get_u16(const GgufFile *f, const char *key, uint16_t *out);
int gguf_get_i16(const GgufFile *f, const char *key, int16_t *out);
int gguf_get_u32(const GgufFile *f, const char *key, uint32_t *out);
int gguf_get_i32(const GgufFile *f, const char *key, int32_t *out);
int gguf_get_u64(const GgufFile *f, const char *key, uint64_t *out);
int gguf_get_i64(const GgufFile *f, const char *key, int64_t *out);
int gguf_get_f32(const GgufFile *f, const char *key, float *out);
int gguf_get_f64(const GgufFile *f, const char *key, double *out);
int gguf_get_bool(const GgufFile *f, const char *key, int *out);
int gguf_get_string(const GgufFile *f, const char *key, GgufString *out);
int gguf_get_array(const GgufFile *f, const char *key, GgufArray *out);

/* The same on a key/value pair already found (or from f->kv[i]). */
int gguf_kv_string(const GgufKeyValue *kv, GgufString *out);
int gguf_kv_array(const GgufKeyValue *kv, GgufArray *out);
int gguf_kv_u64(const GgufKeyValue *kv, uint64_t *out); /* any non-negative integer type */
int gguf_kv_i64(const GgufKeyValue *kv, int64_t *out);  /* any integer type that fits */
int gguf_kv_f64(const GgufKeyValue *kv, double *out);   /* F32 or F64 */

/* 1 when s equals the NUL-terminated string c. */
int gguf_string_eq(GgufString s, const char *c);

/* Array element accessors: 0 on success, -1 when i >= count or the element
 * type differs. Integer accessors accept any integer element type whose value
 * fits; gguf_array_f32 accepts F32 or F64 elements. */
int gguf_array_u32(const GgufArray *a, uint64_t i, uint32_t *out);
int gguf_array_i32(const GgufArray *a, uint64_t i, int32_t *out);
int gguf_array_i64(const GgufArray *a, uint64_t i, int64_t *out);
int gguf_array_f32(const GgufArray *a, uint64_t i, float *out);
int gguf_array_string(const GgufArray *a, uint64_t i, GgufString *out);
int gguf_array_array(const GgufArray *a, uint64_t i, GgufArray *out);

/* Sequential walk over any array (strings and nested arrays included). */
typedef struct {
    const GgufArray *array;
    uint64_t index;      /* index of the next element */
    const uint8_t *next; /* its position */
} GgufArrayIter;
void gguf_array_iter_init(GgufArrayIter *it, const GgufArray *a);
/* Next string element: 1 with *out set, 0 at the end or on a non-string array. */
int gguf_array_iter_next_string(GgufArrayIter *it, GgufString *out);
/* Next nested array element: 1 with *out set, 0 at the end / wrong type. */
int gguf_array_iter_next_array(GgufArrayIter *it, GgufArray *out);

/* Tensor lookup by exact name; NULL when absent. */
const GgufTensorInfo *gguf_find_tensor(const GgufFile *f, const char *name);

/* "u32", "string", ... for messages. */
const char *gguf_value_type_name(uint32_t type);

#endif
