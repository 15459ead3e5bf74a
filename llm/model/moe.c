/* moe.c - the mixture-of-experts FFN of qwen3moe GGUF models, as llama.cpp
 * computes it: router logits (ffn_gate_inp, dim -> experts), a softmax over
 * all experts, the top-k, their probabilities renormalised to sum 1, then
 * each chosen expert's SwiGLU FFN from the 3-D expert tensors, its output
 * scaled by its weight and the experts summed in rank order. Expert rows are
 * multiplied in their own quantised blocks where they lie in the file; only
 * the chosen experts' rows are read. Two parallel jobs per layer: every
 * position's chosen gate and up rows together, then the down rows. */
#include "llm/model/moe.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/string.h"
#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"
#include "llm/model/gguf_runtime.h"

/* Output rows of the down projection computed per step of one worker. */
#define DOWN_TILE 64

int moe_read_hparams(const GgufFile *f, const char *arch, GgufHparams *h, char *err, size_t n) {
    static const char *const keys[3] = {"expert_count", "expert_used_count", "expert_feed_forward_length"};
    uint32_t v[3];
    char key[96];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "%s.%s", arch, keys[i]);
        if (gguf_get_u32(f, key, &v[i]) != 0) {
            snprintf(err, n, "gguf: %s is missing or not an integer", key);
            return -1;
        }
    }
    if (v[0] == 0) {
        snprintf(err, n, "gguf: %s.expert_count is 0: a mixture-of-experts model needs experts", arch);
        return -1;
    }
    if (v[0] > MOE_MAX_EXPERTS) {
        snprintf(err, n, "gguf: %u experts, more than the %d supported", v[0], MOE_MAX_EXPERTS);
        return -1;
    }
    if (v[1] == 0 || v[1] > v[0]) {
        snprintf(err, n, "gguf: %s.expert_used_count = %u, but it must be 1 to the expert count (%u)", arch,
                 v[1], v[0]);
        return -1;
    }
    if (v[1] > MOE_MAX_USED || v[2] == 0 || v[2] > (1u << 20)) {
        snprintf(err, n, "gguf: %u experts used of width %u are not supported (at most %d used)", v[1], v[2],
                 MOE_MAX_USED);
        return -1;
    }
    h->n_experts = (int)v[0], h->n_experts_used = (int)v[1], h->expert_ffn = (int)v[2];
    h->hidden = h->n_experts_used * h->expert_ffn;
    return 0;
}

/* blk.l.suffix as `experts` matrices of rows x cols (experts 0: a plain 2-D
 * matrix), each expert's rows after the previous one's. */
static int bind_experts(GgufModel *m, GTensor *out, int l, const char *suffix, int cols, int rows,
                        int experts, char *err, size_t n) {
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s", l, suffix);
    const GgufTensorInfo *ti = gguf_find_tensor(&m->file, name);
    if (!ti) {
        snprintf(err, n, "gguf: tensor %s is missing", name);
        return -1;
    }
    const GgmlTypeInfo *type = ggml_type_info(ti->type);
    if (!type || !type->supported || cols % (int)type->block_elems) {
        snprintf(err, n, "tensor %s: type %s (%u) cannot hold rows of %d", name, ggml_type_name(ti->type),
                 ti->type, cols);
        return -1;
    }
    uint64_t held = ti->ne[2];
    if (experts && held < (uint64_t)experts) {
        snprintf(err, n, "gguf: expert_count %d is above the %llu experts tensor %s holds", experts,
                 (unsigned long long)held, name);
        return -1;
    }
    if (ti->ne[0] != (uint64_t)cols || ti->ne[1] != (uint64_t)rows ||
        held != (uint64_t)(experts ? experts : 1) || ti->ne[3] != 1) {
        snprintf(err, n, "tensor %s has shape [%llu, %llu, %llu], expected [%d, %d, %d]", name,
                 (unsigned long long)ti->ne[0], (unsigned long long)ti->ne[1], (unsigned long long)held, cols,
                 rows, experts ? experts : 1);
        return -1;
    }
    *out = (GTensor){ti->type, ti->data, rows, cols, (size_t)ggml_row_bytes(ti->type, (uint64_t)cols)};
    return 0;
}

int moe_bind_layer(GgufModel *m, int l, char *err, size_t n) {
    GLayer *L = &m->layers[l];
    int dim = m->config.dim, eff = m->expert_ffn, E = m->n_experts;
    /* The expert tensors first: they say how many experts there are. */
    if (bind_experts(m, &L->gate_exps, l, "ffn_gate_exps.weight", dim, eff, E, err, n) ||
        bind_experts(m, &L->up_exps, l, "ffn_up_exps.weight", dim, eff, E, err, n) ||
        bind_experts(m, &L->down_exps, l, "ffn_down_exps.weight", eff, dim, E, err, n) ||
        bind_experts(m, &L->router, l, "ffn_gate_inp.weight", dim, E, 0, err, n))
        return -1;
    return 0;
}

/* One position's chosen experts, best first, and their weights. */
typedef struct {
    int expert[MOE_MAX_USED];
    float weight[MOE_MAX_USED];
} Route;

static void route(GgufModel *m, const GLayer *L, const float *x, Route *r) {
    int E = m->n_experts, k = m->n_experts_used, dim = m->config.dim;
    const GTensor *w = &L->router;
    float p[MOE_MAX_EXPERTS];
    for (int e = 0; e < E; e++) {
        const void *row = (const uint8_t *)w->data + (size_t)e * w->row_bytes;
        if (w->type != GGML_TYPE_F32) ggml_dequantize_row(w->type, row, m->row, dim);
        p[e] = kernels_active()->dot(w->type == GGML_TYPE_F32 ? row : m->row, x, dim);
    }
    float max = p[0];
    for (int e = 1; e < E; e++) max = p[e] > max ? p[e] : max;
    double sum = 0;
    for (int e = 0; e < E; e++) sum += (p[e] = expf(p[e] - max));
    float inv = (float)(1.0 / sum);
    unsigned char taken[MOE_MAX_EXPERTS] = {0};
    float total = 0;
    for (int s = 0; s < k; s++) { /* the highest left, the lower id on a tie */
        int best = -1;
        for (int e = 0; e < E; e++)
            if (!taken[e] && (best < 0 || p[e] > p[best])) best = e;
        taken[best] = 1;
        r->expert[s] = best;
        r->weight[s] = p[best] * inv;
        total += r->weight[s];
    }
    if (m->feature_off) return;                           /* tests: the raw probabilities */
    if (total < 6.103515625e-5f) total = 6.103515625e-5f; /* llama.cpp's clamp of the sum */
    for (int s = 0; s < k; s++) r->weight[s] /= total;
}

/* out[0 .. hi-lo-1] = rows lo..hi-1 of expert e of w times act (float x on
 * the reference path, which dequantises each row into m->row: serial). */
static void expert_rows(GgufModel *m, const GTensor *w, int e, int lo, int hi, const void *act, float *out) {
    const uint8_t *rows = (const uint8_t *)w->data + ((size_t)e * w->rows + lo) * w->row_bytes;
    int n = w->cols;
    if (m->reference && w->type != GGML_TYPE_F32) {
        for (int i = lo; i < hi; i++, rows += w->row_bytes) {
            ggml_dequantize_row(w->type, rows, m->row, n);
            out[i - lo] = kernels_active()->dot(m->row, act, n);
        }
        return;
    }
    ggml_matmul_fn fn = ggml_matmul_best(w->type);
    if (fn) {
        fn(out, rows, w->row_bytes, act, n, hi - lo);
        return;
    }
    ggml_vec_dot_fn dot = ggml_vec_dot_best(w->type);
    for (int i = lo; i < hi; i++, rows += w->row_bytes) out[i - lo] = dot(rows, act, n);
}

/* The activations of w's type for batch rows of x (n floats, stride floats
 * apart): quantised into the model's blocks once per format (*done holds a
 * bit per format), or x itself; *step is the bytes between positions and
 * *per_value scales a value offset into bytes (an expert's slice). */
static const uint8_t *activations(GgufModel *m, const GTensor *w, const float *x, int n, int stride,
                                  int batch, int *done, size_t *step, size_t *slice_bytes, int slice) {
    int act = ggml_type_info(w->type)->act;
    if (act == ACT_F32 || m->reference) {
        *step = (size_t)stride * sizeof(float), *slice_bytes = (size_t)slice * sizeof(float);
        return (const uint8_t *)x;
    }
    uint8_t *blocks = act == ACT_Q8A ? (uint8_t *)m->act_a : (uint8_t *)m->act_k;
    *step = act == ACT_Q8A ? m->act_a_blocks * sizeof(BlockQ8A) : m->act_k_blocks * sizeof(BlockQ8K);
    *slice_bytes =
        act == ACT_Q8A ? (size_t)slice / QK32 * sizeof(BlockQ8A) : (size_t)slice / QK_K * sizeof(BlockQ8K);
    if (!(*done & (1 << act)))
        for (int b = 0; b < batch; b++)
            ggml_act_quantizer_best(act)(blocks + (size_t)b * *step, x + (size_t)b * stride, n);
    *done |= 1 << act;
    return blocks;
}

typedef struct {
    GgufModel *m;
    const GLayer *L;
    const Route *routes;
    int batch;
    const uint8_t *act[3]; /* gate's, up's and down's input at position 0 */
    size_t step[3], slice_bytes;
} MoeJob;

/* Rows of the gate/up job: position b's slot s gate rows, then its up rows,
 * expert_ffn each, slot after slot, position after position. */
static void gate_up_rows(void *ctx, int r0, int r1) {
    MoeJob *j = ctx;
    GgufModel *m = j->m;
    int eff = m->expert_ffn, k = m->n_experts_used, hidden = m->config.hidden_dim;
    for (int r = r0; r < r1;) {
        int seg = r / eff, lo = r - seg * eff, hi = r1 - seg * eff < eff ? r1 - seg * eff : eff;
        int up = seg & 1, slot = (seg >> 1) % k, b = (seg >> 1) / k;
        float *out = (up ? m->hb2 : m->hb) + (size_t)b * hidden + (size_t)slot * eff;
        expert_rows(m, up ? &j->L->up_exps : &j->L->gate_exps, j->routes[b].expert[slot], lo, hi,
                    j->act[up] + (size_t)b * j->step[up], out + lo);
        r = seg * eff + hi;
    }
}

/* Output rows r0..r1-1 of every position: the weighted sum of its experts'
 * down projections, added in rank order as llama.cpp adds them. */
static void down_rows(void *ctx, int r0, int r1) {
    MoeJob *j = ctx;
    GgufModel *m = j->m;
    float y[DOWN_TILE];
    for (int b = 0; b < j->batch; b++) {
        float *out = m->xb2 + (size_t)b * m->wide;
        const Route *route = &j->routes[b];
        const uint8_t *act = j->act[2] + (size_t)b * j->step[2];
        for (int i0 = r0; i0 < r1; i0 += DOWN_TILE) {
            int i1 = r1 - i0 < DOWN_TILE ? r1 : i0 + DOWN_TILE;
            for (int s = 0; s < m->n_experts_used; s++) {
                float w = route->weight[s];
                expert_rows(m, &j->L->down_exps, route->expert[s], i0, i1, act + (size_t)s * j->slice_bytes,
                            y);
                for (int i = i0; i < i1; i++) out[i] = s ? out[i] + y[i - i0] * w : y[i - i0] * w;
            }
        }
    }
}

static void run_job(GgufModel *m, int rows, uint64_t work, parallel_range_fn fn, MoeJob *job) {
    if (m->reference)
        fn(job, 0, rows); /* m->row is one buffer */
    else
        parallel_for(rows, 8, work, fn, job);
}

void moe_ffn(GgufModel *m, const GLayer *L, int batch) {
    int dim = m->config.dim, W = m->wide, eff = m->expert_ffn, k = m->n_experts_used;
    int hidden = m->config.hidden_dim;
    Route routes[GGUF_PREFILL_MAX];
    for (int b = 0; b < batch; b++) route(m, L, m->xb + (size_t)b * W, &routes[b]);
    MoeJob job = {.m = m, .L = L, .routes = routes, .batch = batch};
    int done = 0;
    size_t unused;
    job.act[0] = activations(m, &L->gate_exps, m->xb, dim, W, batch, &done, &job.step[0], &unused, 0);
    job.act[1] = activations(m, &L->up_exps, m->xb, dim, W, batch, &done, &job.step[1], &unused, 0);
    int rows = batch * k * 2 * eff;
    run_job(m, rows, (uint64_t)rows * (uint64_t)dim, gate_up_rows, &job);
    for (int b = 0; b < batch; b++)
        kernels_active()->swiglu(m->hb + (size_t)b * hidden, m->hb2 + (size_t)b * hidden, hidden);
    done = 0;
    job.act[2] = activations(m, &L->down_exps, m->hb, hidden, hidden, batch, &done, &job.step[2],
                             &job.slice_bytes, eff);
    run_job(m, dim, (uint64_t)dim * (uint64_t)hidden * (uint64_t)batch, down_rows, &job);
    for (int b = 0; b < batch; b++) kernels_active()->add(m->x + (size_t)b * W, m->xb2 + (size_t)b * W, dim);
}
