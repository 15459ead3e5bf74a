/* shell_bench.h - the LLM on every core: the worker pool as llm/'s parallel
 * runner, and /bench. */
#ifndef KERNEL_SHELL_BENCH_H
#define KERNEL_SHELL_BENCH_H

/* Registers workers_run as the runner of llm/parallel.h (after smp_init). */
void llm_parallel_init(void);
/* /bench [TOKENS]: prefill and decode speed of the loaded model on one
 * worker and on all of them. */
void shell_cmd_bench(const char *args);

#endif
