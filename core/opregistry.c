/*
 * opregistry.c -- the operator types, looked up by a vertex's "type".
 *
 * Both daemons plan and run jobs from the same table: the built-in
 * operators (operators/builtin.c) register at start-up, and so do the
 * operators of every plugin named by `sluice.operator-plugins`
 * (sl_op_plugins_load). Registration happens before the daemons serve
 * anything; lookups afterwards read an append-only array whose length is
 * published with release/acquire, so they need no lock. Also home to
 * sl_op_fail, the one helper every operator uses to report a failure.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "operator.h"
#include "log.h"

#define TAG "ops"
#define MAX_TYPES 256

static const sl_op_def *types[MAX_TYPES];
static int ntypes;                      /* published with release stores */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) > 64) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

int sl_op_register(const sl_op_def *def, char *err, size_t errlen)
{
    if (!def) return sl_seterr(err, errlen, "operator definition is NULL");
    if (def->abi != SL_OP_ABI_VERSION)
        return sl_seterr(err, errlen, "operator '%s' was built for operator ABI %u, this Sluice has %u",
                         valid_name(def->name) ? def->name : "?", def->abi, SL_OP_ABI_VERSION);
    if (!valid_name(def->name))
        return sl_seterr(err, errlen, "operator name must be 1-64 characters of [A-Za-z0-9_.-]");
    const sl_op_def *have = sl_op_find(def->name);
    if (have == def) return SL_OK;
    if (have) return sl_seterr(err, errlen, "operator type '%s' is already registered", def->name);
    if (!def->plan)
        return sl_seterr(err, errlen, "operator '%s' has no plan()", def->name);
    if ((def->flags & SL_OPF_SOURCE) ? !def->run : !def->process)
        return sl_seterr(err, errlen, "operator '%s' has no %s()", def->name,
                         (def->flags & SL_OPF_SOURCE) ? "run" : "process");
    int rc = SL_OK;
    pthread_mutex_lock(&reg_mu);
    int n = __atomic_load_n(&ntypes, __ATOMIC_RELAXED);
    for (int i = 0; i < n && rc == SL_OK; i++)
        if (types[i] == def) goto out; /* the same table twice: once is enough */
        else if (strcmp(types[i]->name, def->name) == 0)
            rc = sl_seterr(err, errlen, "operator type '%s' is already registered", def->name);
    if (rc == SL_OK && n == MAX_TYPES)
        rc = sl_seterr(err, errlen, "too many operator types (at most %d)", MAX_TYPES);
    if (rc == SL_OK) {
        types[n] = def;
        __atomic_store_n(&ntypes, n + 1, __ATOMIC_RELEASE);
    }
out:
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

const sl_op_def *sl_op_find(const char *type)
{
    if (!type) return NULL;
    int n = __atomic_load_n(&ntypes, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (strcmp(types[i]->name, type) == 0) return types[i];
    return NULL;
}

int sl_op_type_list(char *buf, size_t len)
{
    size_t at = 0;
    int n = __atomic_load_n(&ntypes, __ATOMIC_ACQUIRE);
    if (len) buf[0] = 0;
    for (int i = 0; i < n && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", types[i]->name);
        if (w < 0) break;
        at += (size_t)w;
    }
    return n;
}

int sl_op_plugins_load(const char *list, char *err, size_t errlen)
{
    if (!list || !*list) return SL_OK;
    char *copy = sl_strdup(list), *save = NULL;
    int rc = SL_OK;
    for (char *p = strtok_r(copy, ",;", &save); p && rc == SL_OK; p = strtok_r(NULL, ",;", &save)) {
        while (*p == ' ') p++;
        size_t l = strlen(p);
        while (l && p[l - 1] == ' ') p[--l] = 0;
        if (!*p) continue;
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            rc = sl_seterr(err, errlen, "operator plugin %s: %s", p, dlerror());
            break;
        }
        sl_plugin_init_fn init;
        *(void **)&init = dlsym(h, SL_PLUGIN_INIT_SYMBOL);
        if (!init) {
            rc = sl_seterr(err, errlen, "operator plugin %s: no %s() (is it a Sluice plugin?)", p,
                           SL_PLUGIN_INIT_SYMBOL);
            dlclose(h);
            break;
        }
        char perr[400] = "";
        if (init(SL_OP_ABI_VERSION, perr, sizeof perr) != SL_OK) {
            rc = sl_seterr(err, errlen, "operator plugin %s: %s", p, perr[0] ? perr : "init failed");
            dlclose(h);
            break;
        }
        /* the handle stays open for the life of the process: its tables are
         * in the registry */
        sl_info(TAG, "loaded operator plugin %s", p);
    }
    free(copy);
    return rc;
}

int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

/* ---- plan-time declarations ------------------------------------------------ */

int sl_plan_key(sl_plan_ctx *pc, int input, const int *cols, int ncols, char *err, size_t errlen)
{
    if (input < 0 || input >= pc->nin)
        return sl_seterr(err, errlen, "key declared for input %d of an operator with %d input%s", input,
                         pc->nin, pc->nin == 1 ? "" : "s");
    if (ncols < 0 || ncols > SL_MAX_KEY_COLS)
        return sl_seterr(err, errlen, "at most %d key columns", SL_MAX_KEY_COLS);
    for (int i = 0; i < ncols; i++) {
        if (cols[i] < 0 || cols[i] >= pc->in[input].schema->n)
            return sl_seterr(err, errlen, "key column %d is not a column of input %d", cols[i], input);
        pc->keys[input][i] = cols[i];
    }
    pc->nkeys[input] = ncols;
    return SL_OK;
}

int sl_plan_output(sl_plan_ctx *pc, const char *name, const sl_schema *schema, char *err,
                   size_t errlen)
{
    if (!name || !*name || strlen(name) >= sizeof pc->outputs[0].name)
        return sl_seterr(err, errlen, "a side output needs a name of 1-%zu characters",
                         sizeof pc->outputs[0].name - 1);
    for (int o = 1; o < pc->nout; o++)
        if (!strcmp(pc->outputs[o].name, name))
            return sl_seterr(err, errlen, "side output '%s' declared twice", name);
    if (pc->nout >= SL_MAX_OUTPUTS)
        return sl_seterr(err, errlen, "at most %d side outputs", SL_MAX_OUTPUTS - 1);
    sl_plan_outdecl *o = &pc->outputs[pc->nout];
    snprintf(o->name, sizeof o->name, "%s", name);
    sl_schema_copy(&o->schema, schema);
    return pc->nout++;
}
