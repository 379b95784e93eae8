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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udf_sig.h"

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
    sl_type t;
    if (sl_type_parse(out, &t) != SL_OK)
        return sl_seterr(err, errlen, "unknown type '%s'", out);
    if (t == SL_T_TIMESTAMP)
        return sl_seterr(err, errlen, "type %s: Python functions take BOOLEAN, INT, BIGINT, "
                         "DOUBLE, STRING and BYTES (timestamps not yet)", out);
    snprintf(out, cap, "%s", sl_type_name(t));
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

static int read_udf_args(const char *p, char *res, size_t rcap, char *args, size_t acap,
                         int *det, int *have_in, char *err, size_t errlen)
{
    res[0] = args[0] = 0;
    *det = 1;
    *have_in = 0;
    for (;;) {
        p = skip_ws(p);
        if (*p == ')') return SL_OK;
        const char *k = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        size_t kl = (size_t)(p - k);
        p = skip_ws(p);
        if (kl == 0 || *p != '=')
            return sl_seterr(err, errlen, "expected keyword arguments (result_type=..., "
                             "input_types=[...])");
        p = skip_ws(p + 1);
        if (kl == 11 && !strncmp(k, "result_type", 11)) {
            if (read_type(&p, res, rcap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 12 && !strncmp(k, "result_types", 12)) {
            if (read_types(&p, true, res, rcap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 11 && !strncmp(k, "input_types", 11)) {
            *have_in = 1;
            if (read_types(&p, false, args, acap, err, errlen) != SL_OK) return SL_ERR;
        } else if (kl == 13 && !strncmp(k, "deterministic", 13)) {
            if (!strncmp(p, "True", 4)) *det = 1, p += 4;
            else if (!strncmp(p, "False", 5)) *det = 0, p += 5;
            else return sl_seterr(err, errlen, "deterministic= takes True or False");
        } else { /* name=, func_type=, udf_type=: a value we do not need */
            const char *e = p;
            int depth = 0;
            for (; *e && !(depth == 0 && (*e == ',' || *e == ')')); e++) {
                if (*e == '(' || *e == '[') depth++;
                if (*e == ')' || *e == ']') depth--;
            }
            p = e;
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
    size_t fl = strlen(func);
    const char *decos[8];
    const char *dend[8];
    int nd = 0;
    const char *def = NULL;
    for (const char *p = text; *p;) {
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
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (*q != '\n' && *q != '#' && *q) {
            if (!strncmp(p, "def ", 4)) {
                const char *n = skip_ws(p + 4);
                if (!strncmp(n, func, fl) && *skip_ws(n + fl) == '(') {
                    def = p;
                    break;
                }
            }
            nd = 0; /* any other statement ends a run of decorators */
        }
        const char *e = balanced_end(p);
        if (!e) break;
        p = *e ? e + 1 : e;
    }
    sl_udf_sig *s = NULL;
    char why[300] = "";
    int at = def ? line_of(text, def) : 0;
    if (!def) {
        snprintf(why, sizeof why, "no top-level 'def %s(' in the file", func);
    } else {
        int found = 0;
        for (int i = 0; i < nd && !found && !why[0]; i++) {
            const char *open;
            int k = decorator_kind(decos[i], dend[i], &open);
            if (k == 3) {
                snprintf(why, sizeof why, "@udaf: Python aggregate functions are not supported "
                         "yet (scalar functions, @udf, and table functions, @udtf, are)");
                at = line_of(text, decos[i]);
            } else if (k == 1 || k == 2) {
                const char *dn = k == 1 ? "@udf" : "@udtf", *rn = k == 1 ? "result_type=" : "result_types=";
                found = 1;
                at = line_of(text, decos[i]);
                char res[700], args[700], e2[200];
                int det, have_in;
                if (!open) {
                    snprintf(why, sizeof why, "%s needs %s and input_types=, e.g. "
                             "%s(%sDataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])", dn, rn,
                             dn, rn);
                } else if (read_udf_args(open + 1, res, sizeof res, args, sizeof args, &det,
                                         &have_in, e2, sizeof e2) != SL_OK) {
                    snprintf(why, sizeof why, "%s: %s", dn, e2);
                } else if (!res[0] || !have_in || (k == 2) != (strchr(res, ' ') != NULL)) {
                    snprintf(why, sizeof why, "%s must declare %s (Sluice type-checks calls "
                             "without running the file)", dn, !have_in && res[0] ? "input_types=" : rn);
                } else {
                    char *decl = sl_sprintf("sluice-udf %d|%s|%s|%s|%s|%s nullable",
                                            SL_UDF_ABI_VERSION, k == 1 ? "scalar" : "table", func,
                                            res, args, det ? "deterministic" : "nondeterministic");
                    s = sl_udf_parse_decl(decl, e2, sizeof e2);
                    free(decl);
                    if (!s) snprintf(why, sizeof why, "%s", e2);
                }
            }
        }
        if (!found && !why[0])
            snprintf(why, sizeof why, "'%s' has no @udf(result_type=..., input_types=[...]) "
                     "or @udtf(result_types=[...], input_types=[...]) decorator", func);
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
