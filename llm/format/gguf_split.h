/* gguf_split.h - models in llama.cpp's gguf-split layout: NAME-00001-of-0000N.gguf
 * ... NAME-0000N-of-0000N.gguf, each piece a GGUF file of its own holding
 * split.no (its index from 0), split.count (N) and split.tensors.count (the
 * tensors of all pieces); the model's metadata and vocabulary are in the
 * first piece. The pieces are opened as one GgufFile: the first piece's
 * metadata and every piece's tensors, their data used in place in each
 * piece's buffer (nothing copied).
 *
 * The caller holds the pieces (ramdisk files, files read by a host tool) and
 * says how to find one by name:
 *     GgufPieces p = {"dir/m-00001-of-00002.gguf", find_file, NULL};
 *     gguf_create_pieces(&f, data, size, &p, err, sizeof err);
 */
#ifndef LLM_GGUF_SPLIT_H
#define LLM_GGUF_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "llm/format/gguf.h"

/* The bytes of the file called name, which must outlive the model, or NULL
 * when there is none. */
typedef const void *(*GgufPieceFinder)(void *ctx, const char *name, size_t *size);

typedef struct GgufPieces {
    const char *first_name; /* the name the first piece was found under */
    GgufPieceFinder find;
    void *ctx;
} GgufPieces;

/* gguf_create on the first piece; when it says split.count N > 1, the other
 * pieces are found by name (the first's with -0000i-of- for -00001-of-) and
 * their tensors joined to f->tensors (f->n_pieces N). A missing piece, one
 * whose split.no or split.count disagrees, a tensor in two pieces, or a total
 * other than split.tensors.count gives -1 with a one-line reason in err
 * (nothing stays allocated). pieces NULL: a split file is refused. */
int gguf_create_pieces(GgufFile *f, const void *data, size_t size, const GgufPieces *pieces, char *err,
                       size_t err_size);

/* Where a GGUF file sits in a split set: 1 with *index (from 0) and *count
 * set when it has split keys saying count > 1, else 0 (a whole model, or not
 * a readable GGUF file). */
int gguf_split_position(const void *data, size_t size, uint32_t *index, uint32_t *count);

#endif
