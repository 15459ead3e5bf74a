/* session_context.c - the memory check before every load and the context
 * it is loaded with: the weights stay in place in the ramdisk (0 bytes
 * extra), so what has to fit in free RAM is the run state, most of it the KV
 * cache, whose size llm/model/model_estimate.c computes for any context. */
#include "kernel/session/session.h"

#include "kernel/console/console.h"
#include "kernel/drivers/ramdisk.h"
#include "kernel/kernel.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"
#include "llm/model/model_estimate.h"

/* Left free beside the run state: the tokenizer, the GGUF index, an int8
 * copy's scales, the prompt buffers and everything else the kernel allocates. */
#define SESSION_RESERVE_BYTES (8ull << 20)

static double mib(uint64_t bytes) {
    return (double)bytes / (1024.0 * 1024.0);
}

/* Bytes the run state may take now: free RAM less the reserve, and no more
 * than the longest run of free pages (it is one allocation, with a header page). */
uint64_t session_state_budget(uint64_t *free_bytes) {
    struct memory_stats st;
    memory_get_stats(&st);
    *free_bytes = st.free_bytes;
    uint64_t reserve = SESSION_RESERVE_BYTES + st.free_bytes / 16;
    uint64_t budget = st.free_bytes > reserve ? st.free_bytes - reserve : 0;
    uint64_t run_pages = page_largest_free_run();
    uint64_t run = run_pages > 1 ? (run_pages - 1) * PAGE_SIZE : 0;
    return run < budget ? run : budget;
}

int session_context_for(const struct session *s, const struct ramdisk_file *file) {
    ModelShape shape;
    if (model_shape_read(&shape, file->data, file->size) != 0) return 0; /* the load says what is wrong */
    shape.kv_type = s->settings.kv_type;                                 /* the cache the load will make */
    const int trained = shape.trained_ctx, asked = s->settings.ctx;
    int wanted = asked ? asked : trained;
    if (asked > trained) {
        kprintf("load: context %d is above %s's trained context %d; using %d\n", asked, file->name, trained,
                trained);
        wanted = trained;
    }
    uint64_t free_bytes, budget = session_state_budget(&free_bytes);
    uint64_t needed = model_shape_state_bytes(&shape, wanted);
    if (needed && needed <= budget) return wanted;
    /* Lowered when the context is the model's default, or when there is no
     * model to keep answering (at boot); an explicit one is refused. */
    int lowered = asked && s->model.loaded ? 0 : model_ctx_that_fits(&shape, wanted, budget);
    int floor = wanted < SESSION_MIN_CTX ? wanted : SESSION_MIN_CTX;
    if (lowered >= floor && lowered > 0) {
        kprintf(
            "context: lowered from %d to %d positions (trained %d): the KV cache of %d needs %.1f MiB, the "
            "run state %.1f MiB; free RAM %.1f MiB, %.1f MiB of it usable; the KV cache of %d takes %.1f "
            "MiB\n",
            wanted, lowered, trained, wanted, mib(model_shape_kv_bytes(&shape, wanted)), mib(needed),
            mib(free_bytes), mib(budget), lowered, mib(model_shape_kv_bytes(&shape, lowered)));
        return lowered;
    }
    int shown = asked && s->model.loaded ? wanted : floor;
    kprintf(
        "load: %s does not fit: at context %d it needs %.1f MiB of run state (KV cache %.1f MiB), free RAM "
        "%.1f MiB, %.1f MiB of it usable%s\n",
        file->name, shown, mib(model_shape_state_bytes(&shape, shown)),
        mib(model_shape_kv_bytes(&shape, shown)), mib(free_bytes), mib(budget),
        shown == wanted ? "" : " (never lowered below 2048 positions)");
    return -1;
}

int session_set_context(struct session *s, int ctx) {
    int previous = s->settings.ctx;
    struct session_model *m = &s->model;
    if (!m->loaded) {
        s->settings.ctx = ctx;
        return 0;
    }
    ModelShape shape;
    const struct ramdisk_file *f = ramdisk_find(m->model_name);
    if (f && model_shape_read(&shape, f->data, f->size) == 0 && ctx > shape.trained_ctx) {
        kprintf("set: ctx %d is above %s's trained context %d\n", ctx, m->model_name, shape.trained_ctx);
        return -1;
    }
    /* The run state is sized at load: the model is loaded again with it. */
    char model[SESSION_NAME_MAX], tokenizer[SESSION_NAME_MAX] = "";
    strlcpy(model, m->model_name, sizeof model);
    if (strcmp(m->tokenizer_name, SESSION_OWN_VOCABULARY) != 0)
        strlcpy(tokenizer, m->tokenizer_name, sizeof tokenizer);
    s->settings.ctx = ctx;
    if (session_load(s, model, tokenizer, m->llm.quantized_q8) != 0) {
        s->settings.ctx = previous;
        kprintf("set: ctx stays as it was; %s still loaded with context %d\n", m->model_name,
                m->llm.model.config.seq_len);
        return -1;
    }
    return 0;
}
