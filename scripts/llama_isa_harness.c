// Prefill and decode tokens/s of one GGUF through libllama: n_prompt tokens in one batch, then n_gen single steps.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "llama.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char ** argv) {
    if (argc < 6) { fprintf(stderr, "usage: bench MODEL N_PROMPT N_GEN THREADS REPS\n"); return 2; }
    int n_prompt = atoi(argv[2]), n_gen = atoi(argv[3]), threads = atoi(argv[4]), reps = atoi(argv[5]);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    struct llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 2048; cp.n_batch = 2048; cp.n_ubatch = 512; cp.n_threads = threads; cp.n_threads_batch = threads;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    llama_token * toks = malloc(sizeof(llama_token) * n_prompt);
    for (int i = 0; i < n_prompt; i++) toks[i] = 1000 + (i * 7919) % 20000;  // fixed pseudo-text, same every run
    for (int r = 0; r < reps; r++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        double t0 = now();
        if (llama_decode(ctx, llama_batch_get_one(toks, n_prompt))) { fprintf(stderr, "decode failed\n"); return 1; }
        double t1 = now();
        llama_token t = toks[0];
        for (int g = 0; g < n_gen; g++) {
            if (llama_decode(ctx, llama_batch_get_one(&t, 1))) { fprintf(stderr, "decode failed\n"); return 1; }
            t = 1000 + (g * 31) % 20000;
        }
        double t2 = now();
        printf("{\"rep\": %d, \"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f}\n", r, n_prompt / (t1 - t0), n_gen / (t2 - t1));
        fflush(stdout);
    }
    (void) vocab;
    llama_free(ctx); llama_model_free(model); llama_backend_free();
    return 0;
}
