/*
 * bad_jobs.c -- C jobs that misbehave, for the jar API's tests
 * (tests/integration/test_jars.py), each reached as its own entry point
 * (entryClass): one crashes while building, one names a process function
 * built for another DataStream ABI, one fails with a message, one never
 * returns.
 */
#include <signal.h>
#include <stdlib.h>

#include "datastream.h"

int crash_main(sl_ds_env *env, int argc, char **argv);
int crash_main(sl_ds_env *env, int argc, char **argv)
{
    (void)env;
    (void)argc;
    (void)argv;
    raise(SIGSEGV);
    return 0;
}

static int old_process(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    return sl_op_emit(ctx, (sl_row *)row);
}

/* as an object built against the first DataStream header would carry */
const sl_process_fn old_abi_fn = {.abi = 1, .process_element = old_process};

int old_abi_main(sl_ds_env *env, int argc, char **argv);
int old_abi_main(sl_ds_env *env, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *gen_opts[] = {"fields.id.kind", "sequence", "fields.id.start", "1", "fields.id.end", "10", NULL};
    sl_ds_stream *s = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    s = sl_ds_process(s, "old", "old_abi_fn", "id BIGINT", NULL);
    sl_ds_sink(s, "out", "blackhole", NULL);
    return 0;
}

int failing_main(sl_ds_env *env, int argc, char **argv);
int failing_main(sl_ds_env *env, int argc, char **argv)
{
    (void)env;
    (void)argc;
    (void)argv;
    return 7;
}

#include <unistd.h>

int hang_main(sl_ds_env *env, int argc, char **argv);
int hang_main(sl_ds_env *env, int argc, char **argv)
{
    (void)env;
    (void)argc;
    (void)argv;
    for (;;) pause();
}
