/* checkpoint.h - parsing and validating llama2.c checkpoint files (legacy v0,
 * ak42 version 1 fp32, ak42 version 2 int8) held in memory. */
#ifndef LLM_CHECKPOINT_H
#define LLM_CHECKPOINT_H

#include <stddef.h>

#include "llm/model/llama2c.h"

#define CHECKPOINT_MAGIC 0x616b3432u /* "ak42" little-endian */
#define CHECKPOINT_HEADER_V0 28      /* seven int32 */
#define CHECKPOINT_HEADER_AK42 256

/* Fills cfg and w (pointers into data) after checking every field and the
 * file size. Returns 0, or -1 with a one-line reason in err. Allocates nothing. */
int checkpoint_parse(ModelConfig *cfg, Llama2cWeights *w, const void *data, size_t size, char *err,
                     size_t err_size);

#endif
