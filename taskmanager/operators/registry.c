/*
 * registry.c -- the table of operator types, looked up by the vertex "type".
 *
 * Adding an operator means writing its file in this folder and listing its
 * sl_op_def here; nothing else refers to operators by name. The table is
 * static and read-only, so lookups need no lock. Also home to sl_op_fail,
 * the one helper every operator uses to report a failure.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "operator.h"

extern const sl_op_def sl_op_datagen;
extern const sl_op_def sl_op_calc;
extern const sl_op_def sl_op_print;
extern const sl_op_def sl_op_blackhole;
extern const sl_op_def sl_op_file;
extern const sl_op_def sl_op_watermark;
extern const sl_op_def sl_op_window;
extern const sl_op_def sl_op_group_aggregate;

static const sl_op_def *const registry[] = {
    &sl_op_datagen, &sl_op_calc, &sl_op_print, &sl_op_blackhole, &sl_op_file,
    &sl_op_watermark, &sl_op_window,
    &sl_op_group_aggregate,
};

const sl_op_def *sl_op_find(const char *type)
{
    if (!type) return NULL;
    for (size_t i = 0; i < SL_ARRAY_LEN(registry); i++)
        if (strcmp(registry[i]->name, type) == 0) return registry[i];
    return NULL;
}

static char type_list[256];
static pthread_once_t type_list_once = PTHREAD_ONCE_INIT;

static void build_type_list(void)
{
    size_t n = 0;
    for (size_t i = 0; i < SL_ARRAY_LEN(registry) && n < sizeof type_list; i++) {
        int w = snprintf(type_list + n, sizeof type_list - n, "%s%s", i ? ", " : "",
                         registry[i]->name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

const char *sl_op_type_list(void)
{
    pthread_once(&type_list_once, build_type_list);
    return type_list;
}

int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}
