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
 *
 * Options: each type declares its config keys as a table of typed rows
 * (sl_op_option, the shape of the cluster configuration's rows). A table is
 * checked when its type registers (names, choices, defaults that parse), and
 * a vertex's config against it before plan() runs (sl_op_options_parse):
 * unknown keys with a "did you mean", then each value through the
 * configuration's own parser (sl_conf_parse_value). plan() reads the parsed
 * values by name (sl_plan_opt_*).
 */
#include <dlfcn.h>
#include <inttypes.h>
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

static int check_table(const sl_op_def *def, char *err, size_t errlen);

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
    if (check_table(def, err, errlen) != SL_OK) return SL_ERR;
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

const sl_op_def *sl_op_nth(int i)
{
    int n = __atomic_load_n(&ntypes, __ATOMIC_ACQUIRE);
    return i >= 0 && i < n ? types[i] : NULL;
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

/* ---- options --------------------------------------------------------------- */

typedef struct opt_slot {
    const sl_op_option *o;      /* its row */
    const json_t *j;            /* the value given (borrowed from the config), or NULL */
    sl_conf_value val;          /* parsed: the given value, else the default */
    int has;                    /* val is filled (given, or a default) */
} opt_slot;

struct sl_plan_opts {
    int n;
    opt_slot *slot;             /* one per non-prefix row, in table order */
};

static int is_prefix(const sl_op_option *o)
{
    size_t n = strlen(o->key);
    return n >= 2 && o->key[n - 1] == '*';
}

static int covers(const sl_op_option *o, const char *key)
{
    if (is_prefix(o)) return !strncmp(key, o->key, strlen(o->key) - 1);
    return !strcmp(key, o->key);
}

const sl_op_option *sl_op_option_find(const sl_op_def *def, const char *key)
{
    if (!def->options) return NULL;
    for (const sl_op_option *o = def->options; o->key; o++)
        if (covers(o, key)) return o;
    return NULL;
}

static int parse_one(const sl_op_option *o, const char *key, const char *text, const char *what,
                     sl_conf_value *out, char *err, size_t errlen)
{
    char label[160];
    snprintf(label, sizeof label, "option '%s'", key);
    return sl_conf_parse_value(o, INT64_MIN, INT64_MAX, NULL, label, text, what, out, err, errlen);
}

/* A table is checked once, when its type registers: a bad one is the
 * operator author's bug, named with the row. */
static int check_table(const sl_op_def *def, char *err, size_t errlen)
{
    if (!def->options) return SL_OK;
    for (const sl_op_option *o = def->options; o->key; o++) {
        if (!*o->key)
            return sl_seterr(err, errlen, "operator '%s': an option without a name", def->name);
        if ((unsigned)o->type > SL_CT_JSON)
            return sl_seterr(err, errlen, "operator '%s': option '%s' has no valid type", def->name,
                             o->key);
        if (o->type == SL_CT_ENUM && (!o->choices || !*o->choices))
            return sl_seterr(err, errlen, "operator '%s': option '%s' is an enum without choices",
                             def->name, o->key);
        for (const sl_op_option *p = def->options; p < o; p++)
            if (!strcmp(p->key, o->key))
                return sl_seterr(err, errlen, "operator '%s': option '%s' declared twice",
                                 def->name, o->key);
        if (o->dflt && o->type != SL_CT_JSON) {
            sl_conf_value v;
            char why[300];
            if (parse_one(o, o->key, o->dflt, NULL, &v, why, sizeof why) != SL_OK)
                return sl_seterr(err, errlen, "operator '%s': default: %s", def->name, why);
            free(v.text);
        }
    }
    return SL_OK;
}

int sl_op_options_check_keys(const sl_op_def *def, const json_t *config, const char *what,
                             char *err, size_t errlen)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)config, key, val) {
        if (sl_op_option_find(def, key)) continue;
        const char *names[256];
        int n = 0;
        for (const sl_op_option *o = def->options; o && o->key && n < 255; o++)
            if (!is_prefix(o)) names[n++] = o->key;
        names[n] = NULL;
        const char *near = sl_closest(key, names);
        if (near)
            return sl_seterr(err, errlen, "%s: unknown option '%s' for type '%s'; did you mean '%s'?",
                             what, key, def->name, near);
        return sl_seterr(err, errlen, "%s: unknown option '%s' for type '%s'", what, key, def->name);
    }
    return SL_OK;
}

/* A scalar JSON value as the text the parser reads; NULL for arrays and
 * objects. */
static const char *json_text(const json_t *j, char *buf, size_t cap)
{
    if (json_is_string(j)) return json_string_value(j);
    if (json_is_integer(j)) {
        snprintf(buf, cap, "%" PRId64, (int64_t)json_integer_value(j));
        return buf;
    }
    if (json_is_real(j)) {
        snprintf(buf, cap, "%.17g", json_real_value(j));
        return buf;
    }
    if (json_is_boolean(j)) return json_is_true(j) ? "true" : "false";
    return NULL;
}

static int check_value(const sl_op_option *o, const char *key, const json_t *j, const char *what,
                       sl_conf_value *out, char *err, size_t errlen)
{
    if (o->type == SL_CT_JSON) return SL_OK;
    char buf[64];
    const char *text = json_text(j, buf, sizeof buf);
    /* a list or an object where a string is declared: left to plan(), whose
     * message names what the string should be (sl_plan_opt_str is NULL) */
    if (!text && o->type == SL_CT_STRING) return SL_DONE;
    if (!text)
        return sl_seterr(err, errlen, "%s: option '%s' must be a single value, not %s", what, key,
                         json_is_array(j) ? "a list" : "an object");
    sl_conf_value v;
    if (parse_one(o, key, text, what, &v, err, errlen) != SL_OK) return SL_ERR;
    if (out) *out = v;
    else free(v.text);
    return SL_OK;
}

int sl_op_options_parse(const sl_op_def *def, const json_t *config, const char *what,
                        sl_plan_opts **out, char *err, size_t errlen)
{
    *out = NULL;
    if (config && sl_op_options_check_keys(def, config, what, err, errlen) != SL_OK) return SL_ERR;
    sl_plan_opts *po = sl_calloc(1, sizeof *po);
    int n = 0;
    for (const sl_op_option *o = def->options; o && o->key; o++) n++;
    po->slot = sl_calloc((size_t)(n ? n : 1), sizeof *po->slot);
    int rc = SL_OK;
    /* the rows, each with its value or default */
    for (const sl_op_option *o = def->options; rc == SL_OK && o && o->key; o++) {
        if (is_prefix(o)) continue;
        opt_slot *s = &po->slot[po->n++];
        s->o = o;
        s->j = config ? json_object_get(config, o->key) : NULL;
        if (json_is_null(s->j)) s->j = NULL; /* null: as if unset */
        if (s->j) {
            rc = check_value(o, o->key, s->j, what, o->type == SL_CT_JSON ? NULL : &s->val, err,
                             errlen);
            s->has = rc == SL_OK && o->type != SL_CT_JSON;
            if (rc == SL_DONE) rc = SL_OK;
        } else if (o->dflt && o->type != SL_CT_JSON) {
            rc = parse_one(o, o->key, o->dflt, what, &s->val, err, errlen);
            s->has = rc == SL_OK;
        }
    }
    /* the keys that prefix rows cover, each checked against its row's type */
    const char *key;
    json_t *val;
    if (config)
        json_object_foreach((json_t *)config, key, val) {
            if (rc != SL_OK) break;
            const sl_op_option *o = sl_op_option_find(def, key);
            if (o && is_prefix(o) && !json_is_null(val) &&
                check_value(o, key, val, what, NULL, err, errlen) == SL_ERR)
                rc = SL_ERR;
        }
    if (rc != SL_OK) {
        sl_op_options_free(po);
        return SL_ERR;
    }
    *out = po;
    return SL_OK;
}

void sl_op_options_free(sl_plan_opts *po)
{
    if (!po) return;
    for (int i = 0; i < po->n; i++) free(po->slot[i].val.text);
    free(po->slot);
    free(po);
}

static const opt_slot *slot_of(const sl_plan_ctx *pc, const char *name)
{
    const sl_plan_opts *po = pc->opts;
    for (int i = 0; po && i < po->n; i++)
        if (!strcmp(po->slot[i].o->key, name)) return &po->slot[i];
    sl_error(TAG, "operator option '%s' is not in its type's table", name);
    SL_ASSERT(!"an operator read an option it did not declare");
    return NULL;
}

int sl_plan_opt_isset(const sl_plan_ctx *pc, const char *name)
{
    return slot_of(pc, name)->j != NULL;
}

const char *sl_plan_opt_str(const sl_plan_ctx *pc, const char *name)
{
    const opt_slot *s = slot_of(pc, name);
    return s->has ? s->val.text : NULL;
}

int64_t sl_plan_opt_int(const sl_plan_ctx *pc, const char *name)
{
    const opt_slot *s = slot_of(pc, name);
    return s->has ? s->val.num : 0;
}

double sl_plan_opt_double(const sl_plan_ctx *pc, const char *name)
{
    const opt_slot *s = slot_of(pc, name);
    return s->has ? s->val.real : 0;
}

int sl_plan_opt_bool(const sl_plan_ctx *pc, const char *name)
{
    return sl_plan_opt_int(pc, name) != 0;
}

const json_t *sl_plan_opt_json(const sl_plan_ctx *pc, const char *name)
{
    return slot_of(pc, name)->j;
}

void sl_op_options_print_docs(const sl_op_def *def, FILE *out)
{
    if (!def->options || !def->options->key) {
        fprintf(out, "No options.\n");
        return;
    }
    fprintf(out, "| option | type | default | description |\n| --- | --- | --- | --- |\n");
    for (const sl_op_option *o = def->options; o->key; o++) {
        fprintf(out, "| `%s` | ", o->key);
        sl_conf_print_type(out, o);
        if (!o->dflt) fputs(" | none | ", out);
        else if (!*o->dflt) fputs(" | empty | ", out);
        else fprintf(out, " | '%s' | ", o->dflt);
        for (const char *d = o->description ? o->description : ""; *d; d++) {
            if (*d == '|') fputc('\\', out);
            fputc(*d, out);
        }
        fputs(" |\n", out);
    }
}
