/*
 * udf_py.c -- the signature of a Python function (CREATE FUNCTION ...
 * LANGUAGE PYTHON), read from its PyFlink decorator without running the
 * file: the SQL client has no interpreter (only TaskManagers embed one),
 * and planning must not run user code, as for C objects.
 *
 * The reader walks the file's top-level lines: decorators ("@..." at
 * column 0, up to the end of their balanced brackets) gather until a line
 * that is neither a decorator, a blank nor a comment; "def func(" at
 * column 0 takes the ones gathered. Of those, "@udf(...)" (any prefix:
 * "@udf.udf(", "@pyflink.table.udf.udf(") gives result_type= and
 * input_types= -- DataTypes.NAME(args) or a string 'NAME(args)', one or a
 * list -- and deterministic=True/False; other keywords (name=, func_type=)
 * are ignored. "@udtf(...)" gives a table function: result_types= (its
 * columns, named f0, f1, ... as PyFlink names them) and input_types=. The result is the declaration text a C object would hold,
 * so the rest of Sluice handles both languages alike: Python functions are
 * "nullable" (called with None, as PyFlink calls them).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udf_sig.h"

extern char **environ;

#define PY_MAX_SOURCE (1u << 20)

static char *read_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sl_seterr(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = sl_malloc(PY_MAX_SOURCE + 1);
    size_t n = fread(buf, 1, PY_MAX_SOURCE + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > PY_MAX_SOURCE) {
        free(buf);
        sl_seterr(err, errlen, bad ? "cannot read %s" : "%s is larger than 1 MiB", path);
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        sl_seterr(err, errlen, "%s is not a Python source file (it holds NUL bytes)", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static int line_of(const char *text, const char *p)
{
    int n = 1;
    for (const char *q = text; q < p; q++) n += *q == '\n';
    return n;
}

/* The end of the balanced bracketed text starting at p (just past the last
 * closing bracket, or the line's end when nothing is open); strings and
 * comments are skipped. NULL when the brackets do not close. */
static const char *balanced_end(const char *p)
{
    int depth = 0;
    while (*p) {
        char c = *p;
        if (c == '#') {
            while (*p && *p != '\n') p++;
            continue;
        }
        if ((c == '\'' || c == '"') && p[1] == c && p[2] == c) { /* a triple-quoted string */
            const char *close = strstr(p + 3, c == '"' ? "\"\"\"" : "'''");
            if (!close) return NULL;
            p = close + 3;
            continue;
        }
        if (c == '\'' || c == '"') {
            p++;
            while (*p && *p != c && *p != '\n') p += (*p == '\\' && p[1]) ? 2 : 1;
            if (*p == c) p++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') {
            if (--depth < 0) return NULL;
        } else if (c == '\n' && depth == 0) {
            return p;
        }
        p++;
    }
    return depth == 0 ? p : NULL;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\\') p++;
    return p;
}

/* One type at *pp: DataTypes.NAME(args) or 'NAME(args)' into out ("BIGINT",
 * "TIMESTAMP(3)"). */
static int read_type(const char **pp, char *out, size_t cap, char *err, size_t errlen)
{
    const char *p = skip_ws(*pp);
    size_t n = 0;
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        while (*p && *p != q && n + 1 < cap) out[n++] = *p++;
        if (*p != q) return sl_seterr(err, errlen, "an unterminated type string");
        p++;
    } else {
        const char *name = p;
        while (isalnum((unsigned char)*p) || *p == '_' || *p == '.') p++;
        const char *dot = NULL;
        for (const char *q = name; q < p; q++)
            if (*q == '.') dot = q;
        const char *base = dot ? dot + 1 : name;
        if (base == p)
            return sl_seterr(err, errlen, "expected a type such as DataTypes.BIGINT() or 'BIGINT'");
        size_t bl = (size_t)(p - base);
        if (bl + 1 >= cap) return sl_seterr(err, errlen, "a type name is too long");
        memcpy(out, base, bl);
        n = bl;
        p = skip_ws(p);
        if (*p == '(') {
            const char *close = strchr(p, ')');
            if (!close) return sl_seterr(err, errlen, "an unclosed '(' after %.*s", (int)bl, base);
            const char *a = skip_ws(p + 1);
            if (a < close) {
                size_t al = (size_t)(close - p + 1);
                if (n + al + 1 >= cap) return sl_seterr(err, errlen, "a type is too long");
                memcpy(out + n, p, al);
                n += al;
            }
            p = close + 1;
        }
    }
    out[n] = 0;
    *pp = p;
    const sl_dtype *dt;
    if (sl_udf_dtype_parse(out, &dt) != SL_OK)
        return sl_seterr(err, errlen, "type %s: Python functions take BOOLEAN, INT, BIGINT, "
                         "DOUBLE, DECIMAL(p, s), STRING, BYTES, TIMESTAMP(3), TIMESTAMP_LTZ(3) "
                         "and DATE", out);
    snprintf(out, cap, "%s", dt->kind == SL_T_DATE ? "DATE" : dt->kind == SL_T_DECIMAL ? dt->text
                             : sl_type_name(dt->kind));
    return SL_OK;
}

/* The keywords of "@udf(...)" (text from just after the '(') into the
 * declaration's result, argument and flag parts. */
/* Types at *pp -- one, or a [list] -- as "A, B" into out[cap] (with column
 * names f0, f1, ... when named: a table function's result_types). */
static int read_types(const char **pp, bool named, char *out, size_t cap, char *err, size_t errlen)
{
    const char *p = *pp;
    size_t w = 0;
    int list = *p == '[', n = 0;
    out[0] = 0;
    if (list) p = skip_ws(p + 1);
    while (!list || *p != ']') {
        char t[64];
        if (read_type(&p, t, sizeof t, err, errlen) != SL_OK) return SL_ERR;
        if (named) w += (size_t)snprintf(out + w, w < cap ? cap - w : 0, "%sf%d %s", w ? ", " : "", n, t);
        else w += (size_t)snprintf(out + w, w < cap ? cap - w : 0, "%s%s", w ? ", " : "", t);
        n++;
        if (w >= cap) return sl_seterr(err, errlen, "too many types");
        p = skip_ws(p);
        if (!list) break;
        if (*p == ',') p = skip_ws(p + 1);
        else if (*p != ']') return sl_seterr(err, errlen, "expected ',' or ']' in a list of types");
    }
    if (list) p++;
    *pp = p;
    return SL_OK;
}

/* What the arguments of udf(...) / udtf(...) / udaf(...) say. */
typedef struct py_deco {
    char res[700], args[700];
    int det, have_in;
    char first[128];   /* a call's positional argument: its leading name ("WeightedAvg" of
                          "WeightedAvg()"), "" when none */
    unsigned accbytes; /* accumulator_bytes= (0: the default) */
} py_deco;

/* The end of one argument's value at p: the ',' or ')' that closes it. */
static const char *value_end(const char *p)
{
    int depth = 0;
    for (; *p && !(depth == 0 && (*p == ',' || *p == ')')); p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        if (*p == ')' || *p == ']' || *p == '}') depth--;
    }
    return p;
}

static int read_udf_args(const char *p, py_deco *d, char *err, size_t errlen)
{
    char *res = d->res, *args = d->args;
    size_t rcap = sizeof d->res, acap = sizeof d->args;
    res[0] = args[0] = d->first[0] = 0;
    d->det = 1;
    d->have_in = 0;
    d->accbytes = 0;
    for (int pos = 0;; pos++) {
        p = skip_ws(p);
        if (*p == ')') return SL_OK;
        const char *k = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        size_t kl = (size_t)(p - k);
        p = skip_ws(p);
        if (pos == 0 && (kl == 0 || *p != '=' || p[1] == '=')) {
            /* udaf(WeightedAvg(), ...) / udf(f, ...): the function or object */
            snprintf(d->first, sizeof d->first, "%.*s", (int)(kl < 127 ? kl : 127), k);
            p = value_end(k);
            if (*p == ',') p++;
            else if (*p != ')') return sl_seterr(err, errlen, "unbalanced brackets");
            continue;
        }
        if (kl == 0 || *p != '=')
            return sl_seterr(err, errlen, "expected keyword arguments (result_type=..., "
                             "input_types=[...])");
        p = skip_ws(p + 1);
        if (kl == 11 && !strncmp(k, "result_type", 11)) {
            if (read_type(&p, res, rcap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 12 && !strncmp(k, "result_types", 12)) {
            if (read_types(&p, true, res, rcap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 11 && !strncmp(k, "input_types", 11)) {
            d->have_in = 1;
            if (read_types(&p, false, args, acap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 17 && !strncmp(k, "accumulator_bytes", 17)) {
            char *e;
            unsigned long n = strtoul(p, &e, 10);
            if (e == p || n < 16 || n > SL_UDF_MAX_ACC - 4)
                return sl_seterr(err, errlen, "accumulator_bytes= takes a number from 16 to %d",
                                 SL_UDF_MAX_ACC - 4);
            d->accbytes = (unsigned)n;
            p = e;
        } else if (kl == 13 && !strncmp(k, "deterministic", 13)) {
            if (!strncmp(p, "True", 4)) d->det = 1, p += 4;
            else if (!strncmp(p, "False", 5)) d->det = 0, p += 5;
            else return sl_seterr(err, errlen, "deterministic= takes True or False");
        } else { /* name=, func_type=, accumulator_type=: a value we do not need */
            p = value_end(p);
        }
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != ')') return sl_seterr(err, errlen, "expected ',' or ')' after %.*s=",
                                             (int)kl, k);
    }
}

/* The decorator at d (its text up to its end e) when it is @udf / @udtf /
 * @udaf: 1, 2, 3 (name only, any prefix), else 0; *open: the '(' or NULL. */
static int decorator_kind(const char *d, const char *e, const char **open)
{
    const char *p = d + 1, *name = p;
    while (p < e && (isalnum((unsigned char)*p) || *p == '_' || *p == '.')) {
        if (*p == '.') name = p + 1;
        p++;
    }
    size_t n = (size_t)(p - name);
    const char *q = p;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    *open = q < e && *q == '(' ? q : NULL;
    if (n == 3 && !strncmp(name, "udf", 3)) return 1;
    if (n == 4 && !strncmp(name, "udtf", 4)) return 2;
    if (n == 4 && !strncmp(name, "udaf", 4)) return 3;
    return 0;
}


/* Does line l (at column 0) begin "<word> <name>" followed by '(' or ':'
 * (word "def" or "class")? */
static bool starts_def(const char *l, const char *word, const char *name)
{
    size_t wl = strlen(word), nl = strlen(name);
    if (strncmp(l, word, wl) || (l[wl] != ' ' && l[wl] != '\t')) return false;
    const char *n = skip_ws(l + wl);
    if (strncmp(n, name, nl)) return false;
    n += nl;
    while (*n == ' ' || *n == '\t') n++;
    return *n == '(' || (*n == ':' && word[0] == 'c');
}

/* The next top-level statement after the one at p (a line at column 0 that
 * is not blank or a comment, outside brackets), or the text's end. */
static const char *next_stmt(const char *p)
{
    for (;;) {
        const char *e = balanced_end(p);
        if (!e || !*e) return e ? e : p + strlen(p);
        p = e + 1;
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (*q == '\n' || *q == '#') continue;
        if (p == q && *p) return p; /* column 0 */
        if (!*q) return q;
    }
}

/* Does top-level class `cls` of text define method `meth` (a "def meth("
 * line in its body)? -1: no such class. */
static int class_has(const char *text, const char *cls, const char *meth)
{
    for (const char *p = text; *p; p = next_stmt(p)) {
        if (!starts_def(p, "class", cls)) continue;
        const char *end = next_stmt(p);
        for (const char *l = strchr(p, '\n'); l && l < end; l = strchr(l + 1, '\n')) {
            const char *q = l + 1;
            while (*q == ' ' || *q == '\t') q++;
            if (q < end && q > l + 1 && starts_def(q, "def", meth)) return 1;
        }
        return 0;
    }
    return -1;
}

/* The file compiled -- not run -- by the python3 on PATH (-I -S: no
 * environment, no site packages): a syntax error is refused at CREATE,
 * naming its line, rather than at the task's start. The SQL client and the
 * JobManager do not link libpython (only TaskManagers embed it), so the
 * check is a short-lived process, once per statement. Without a python3 on
 * PATH (or when it cannot run) the check is skipped and the TaskManager
 * reports the error when the task opens the function. */
static int py_syntax(const char *path, const char *module, char *err, size_t errlen)
{
    static const char code[] =
        "import sys\n"
        "try:\n"
        "    compile(open(sys.argv[1], 'rb').read(), sys.argv[2], 'exec')\n"
        "except SyntaxError as e:\n"
        "    sys.stdout.write('%d\\t%s: %s' % (e.lineno or 0, type(e).__name__, e.msg))\n"
        "    sys.exit(3)\n";
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) return SL_OK;
    char name[300];
    snprintf(name, sizeof name, "%s.py", module);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"python3", "-I", "-S", "-c", (char *)code, (char *)path, name, NULL};
    pid_t pid;
    int sp = posix_spawnp(&pid, "python3", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (sp != 0) {
        close(fd[0]);
        return SL_OK;
    }
    char out[400];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd[0], out + n, sizeof out - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
        if (n == sizeof out - 1) break;
    }
    out[n] = 0;
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 3) return SL_OK;
    char *tab = strchr(out, '\t');
    if (!tab) return SL_OK;
    *tab = 0;
    return sl_seterr(err, errlen, "%s, line %s: %s", path, out, tab + 1);
}

#define PY_DEFAULT_ACC 1020 /* pickled bytes of a Python accumulator, unless accumulator_bytes= */

sl_udf_sig *sl_udf_python_decl(const char *path, const char *module, const char *func,
                               char *err, size_t errlen)
{
    for (const char *m = module; *m; m++)
        if (!(isalnum((unsigned char)*m) || *m == '_') || (m == module && isdigit((unsigned char)*m))) {
            sl_seterr(err, errlen, "'%s' is not a Python module name (write 'module.function' "
                      "with the file's module name)", module);
            return NULL;
        }
    char *text = read_text(path, err, errlen);
    if (!text) return NULL;
    if (py_syntax(path, module, err, errlen) != SL_OK) {
        free(text);
        return NULL;
    }
    size_t fl = strlen(func);
    const char *decos[8], *dend[8];
    int nd = 0, ndef = 0;
    const char *def = NULL;   /* the last top-level binding of func */
    const char *ddecos[8], *ddend[8];
    bool is_class = false, assigned = false;
    for (const char *p = text; p && *p;) {
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (q != p || *q == '\n' || *q == '#') { /* indented, blank or a comment: not a statement */
            const char *e = balanced_end(p);
            if (!e) break;
            p = *e ? e + 1 : e;
            continue;
        }
        if (*p == '@') {
            const char *e = balanced_end(p);
            if (!e) break;
            if (nd < 8) {
                decos[nd] = p;
                dend[nd++] = e;
            }
            p = *e ? e + 1 : e;
            continue;
        }
        bool isdef = starts_def(p, "def", func), iscls = starts_def(p, "class", func);
        bool isassign = false;
        const char *a = p;
        if (!strncmp(p, func, fl) && (p[fl] == ' ' || p[fl] == '\t' || p[fl] == '=')) {
            a = p + fl;
            while (*a == ' ' || *a == '\t') a++;
            isassign = *a == '=' && a[1] != '=';
        }
        if (isdef || iscls || isassign) {
            def = p;
            is_class = iscls;
            assigned = isassign;
            ndef = isassign ? 0 : nd;
            memcpy(ddecos, decos, sizeof decos);
            memcpy(ddend, dend, sizeof dend);
            if (isassign) { /* the call is the one "decorator" */
                ndef = 1;
                ddecos[0] = skip_ws(a + 1) - 1; /* decorator_kind skips one character */
                const char *e = balanced_end(ddecos[0] + 1);
                ddend[0] = e ? e : ddecos[0] + 1 + strlen(ddecos[0] + 1);
            }
        }
        nd = 0; /* any other statement ends a run of decorators */
        p = next_stmt(p);
    }
    sl_udf_sig *s = NULL;
    char why[300] = "";
    int at = def ? line_of(text, def) : 0;
    if (!def) {
        snprintf(why, sizeof why, "no top-level 'def %s(', 'class %s' or '%s = udf(...)' in the "
                 "file", func, func, func);
    } else {
        int found = 0;
        for (int i = 0; i < ndef && !found && !why[0]; i++) {
            const char *open;
            int k = decorator_kind(ddecos[i], ddend[i], &open);
            if (!k) continue;
            static const char *const dn_of[] = {"", "@udf", "@udtf", "@udaf"};
            const char *dn = dn_of[k] + assigned, *rn = k == 2 ? "result_types=" : "result_type=";
            found = 1;
            at = line_of(text, ddecos[i]);
            py_deco d;
            char e2[200];
            if (!open) {
                snprintf(why, sizeof why, "%s needs %s and input_types=, e.g. "
                         "%s(%sDataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])", dn, rn,
                         dn, rn);
            } else if (read_udf_args(open + 1, &d, e2, sizeof e2) != SL_OK) {
                snprintf(why, sizeof why, "%s: %s", dn, e2);
            } else if (!d.res[0] || !d.have_in || (k == 2) != !strncmp(d.res, "f0 ", 3)) {
                snprintf(why, sizeof why, "%s must declare %s (Sluice type-checks calls "
                         "without running the file)", dn, !d.have_in && d.res[0] ? "input_types=" : rn);
            } else if (k == 3) {
                /* the AggregateFunction class: decorated, or udaf's argument */
                const char *cls = assigned ? d.first : is_class ? func : NULL;
                int has = cls && *cls ? class_has(text, cls, "accumulate") : -1;
                if (!assigned && !is_class)
                    snprintf(why, sizeof why, "udaf over a function is PyFlink's Pandas aggregate "
                             "(func_type='pandas'), which Sluice does not run: write an "
                             "AggregateFunction class and %s = udaf(TheClass(), ...)", func);
                else if (has < 0)
                    snprintf(why, sizeof why, "udaf's first argument must be an AggregateFunction "
                             "class of this file, as in udaf(%.60s(), ...)%s%.60s%s",
                             cls && *cls ? cls : "WeightedAvg", cls && *cls ? " (no top-level class '" : "",
                             cls && *cls ? cls : "", cls && *cls ? "')" : "");
                else if (has == 0 || class_has(text, cls, "create_accumulator") != 1 ||
                         class_has(text, cls, "get_value") != 1)
                    snprintf(why, sizeof why, "class %s must define create_accumulator, "
                             "accumulate and get_value", cls);
                else {
                    char *decl = sl_sprintf(
                        "sluice-udf %d|aggregate|%s|%s|%s|%s nullable%s%s accumulator=%u",
                        SL_UDF_ABI_VERSION, func, d.res, d.args,
                        d.det ? "deterministic" : "nondeterministic",
                        class_has(text, cls, "retract") == 1 ? " retract" : "",
                        class_has(text, cls, "merge") == 1 ? " merge" : "",
                        4 + (d.accbytes ? d.accbytes : PY_DEFAULT_ACC));
                    s = sl_udf_parse_decl(decl, e2, sizeof e2);
                    free(decl);
                    if (!s) snprintf(why, sizeof why, "%s", e2);
                }
            } else {
                char *decl = sl_sprintf("sluice-udf %d|%s|%s|%s|%s|%s nullable",
                                        SL_UDF_ABI_VERSION, k == 1 ? "scalar" : "table", func,
                                        d.res, d.args, d.det ? "deterministic" : "nondeterministic");
                s = sl_udf_parse_decl(decl, e2, sizeof e2);
                free(decl);
                if (!s) snprintf(why, sizeof why, "%s", e2);
            }
        }
        if (!found && !why[0])
            snprintf(why, sizeof why, "'%s' has no @udf(result_type=..., input_types=[...]), "
                     "@udtf(result_types=[...], input_types=[...]) or udaf(...) declaration", func);
    }
    if (!s) {
        if (at) sl_seterr(err, errlen, "%s, line %d: %s", path, at, why);
        else sl_seterr(err, errlen, "%s: %s", path, why);
        free(text);
        return NULL;
    }
    s->python = true;
    s->module = sl_strdup(module);
    s->source = text;
    s->library = sl_strdup(path);
    return s;
}
