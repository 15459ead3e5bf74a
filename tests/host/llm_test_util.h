/* llm_test_util.h - small helpers shared by the llm/ host tests: the check
 * lines (check.h), whole-file reads, argmax. */
#ifndef TESTS_HOST_LLM_TEST_UTIL_H
#define TESTS_HOST_LLM_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/host/check.h"

/* The whole file in a malloc'd buffer (4-byte aligned, as malloc is, with a
 * NUL after the data so text files can be used as strings), or NULL. */
__attribute__((unused)) static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(len > 0 ? (size_t)len + 1 : 1);
    if (len < 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    } else {
        buf[len > 0 ? len : 0] = '\0';
    }
    fclose(f);
    *size = len > 0 ? (size_t)len : 0;
    return buf;
}

/* read_file of DIR/NAME. */
__attribute__((unused)) static void *read_file_in(const char *dir, const char *name, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return read_file(path, size);
}

/* Runs a shell command that should be llmrun refusing its input: exit
 * status 1, no signal, and an "llmrun: ..." line in its output. */
__attribute__((unused)) static void check_llmrun_refuses(const char *name, const char *command) {
    char line[512];
    FILE *p = popen(command, "r");
    int saw_message = 0;
    while (p && fgets(line, sizeof line, p))
        if (strncmp(line, "llmrun:", 7) == 0) saw_message = 1;
    int status = p ? pclose(p) : -1;
    if (status != -1 && WIFSIGNALED(status))
        check(0, name, "killed by signal %d", WTERMSIG(status));
    else
        check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1 && saw_message, name,
              "exit status %d, llmrun: line %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              saw_message ? "present" : "missing");
}

/* Index of the largest value (the first one on ties), as greedy sampling picks. */
__attribute__((unused)) static int argmax(const float *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

__attribute__((unused)) static const char *models_dir_from_env(void) {
    const char *dir = getenv("MODELS_DIR");
    return dir && *dir ? dir : "../shared/models";
}

/* MODELS_DIR/name, in one of four rotating buffers (so a call's result may
 * be used beside three others'). */
__attribute__((unused)) static const char *models_path(const char *name) {
    static char path[4][1024];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", models_dir_from_env(), name);
    return p;
}

/* A refusal is -1 plus a reason that is non-empty, terminated and one line:
 * NULL when so, else what is wrong. */
__attribute__((unused)) static const char *bad_reason(int rc, const char *err, size_t err_size) {
    if (rc != -1) return rc == 0 ? "accepted" : "returned neither 0 nor -1";
    if (!memchr(err, '\0', err_size)) return "reason not terminated";
    if (err[0] == '\0') return "empty reason";
    if (strchr(err, '\n')) return "reason spans lines";
    return NULL;
}

/* The start every model test shares: exit 77 (skipped) when the shared test
 * data is absent, else a fresh temporary directory from a mkdtemp template. */
__attribute__((unused)) static void test_begin(const char *models_dir, char *temp_template) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/stories260K.bin", models_dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("SKIP: test data missing: %s (set MODELS_DIR)\n", path);
        exit(77);
    }
    fclose(f);
    if (!mkdtemp(temp_template)) {
        printf("FAIL - temporary directory: cannot create %s\n", temp_template);
        exit(1);
    }
}

/* Removes the temporary directory and gives the exit status. */
__attribute__((unused)) static int test_end(const char *temp_dir) {
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", temp_dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", temp_dir);
    return failures ? 1 : 0;
}

#endif
