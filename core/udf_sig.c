/*
 * udf_sig.c -- signatures of user-defined functions (udf_sig.h): the ELF
 * section reader, the declaration parser, the "functions" JSON of a vertex
 * and the TaskManager's resolution of a function set.
 *
 * The reader takes the file's section headers and the section-name table
 * with pread, bounds every offset and size by the file's, and reads the
 * one ".sluice_udf" section (at most SL_UDF_MAX_SECTION bytes): a run of
 * NUL-terminated declarations, "sluice-udf <abi>|scalar|sym|RESULT|ARGS|FLAGS"
 * or "...|table|sym|COLUMNS|ARGS|FLAGS" or "...|aggregate|sym|RESULT|ARGS|FLAGS
 * accumulator=N", with NUL padding between them.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include "decimal.h"
#include "udf_sig.h"

#define SL_UDF_MAX_SECTION (1u << 20)

/* ---- the ELF section -------------------------------------------------------- */

static int pread_all(int fd, void *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return SL_ERR;
        got += (size_t)r;
    }
    return SL_OK;
}

/* The bytes of section `want` (caller frees) and its length; NULL with err
 * (*absent set when the object is fine but has no such section). */
static char *read_section(const char *path, const char *want, size_t *len, int *absent, char *err,
                          size_t errlen)
{
    *absent = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sl_seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char *out = NULL, *names = NULL;
    Elf64_Shdr *sh = NULL;
    struct stat st;
    Elf64_Ehdr eh;
    uint16_t one = 1;
    int little = *(uint8_t *)&one == 1;
    if (fstat(fd, &st) != 0 || pread_all(fd, &eh, sizeof eh, 0) != SL_OK ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        sl_seterr(err, errlen, "%s is not an ELF shared object", path);
        goto done;
    }
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB)) {
        sl_seterr(err, errlen, "%s is not a 64-bit ELF object of this machine's byte order", path);
        goto done;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum ||
        eh.e_shoff > fsize || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > fsize - eh.e_shoff) {
        sl_seterr(err, errlen, "%s has no readable section headers", path);
        goto done;
    }
    sh = sl_calloc(eh.e_shnum, sizeof *sh);
    if (pread_all(fd, sh, eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff) != SL_OK) {
        sl_seterr(err, errlen, "%s: cannot read its section headers", path);
        goto done;
    }
    const Elf64_Shdr *ns = &sh[eh.e_shstrndx];
    if (ns->sh_offset > fsize || ns->sh_size > fsize - ns->sh_offset || ns->sh_size > (1u << 24)) {
        sl_seterr(err, errlen, "%s: its section names are out of the file", path);
        goto done;
    }
    names = sl_malloc(ns->sh_size + 1);
    if (pread_all(fd, names, ns->sh_size, (off_t)ns->sh_offset) != SL_OK) {
        sl_seterr(err, errlen, "%s: cannot read its section names", path);
        goto done;
    }
    names[ns->sh_size] = 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= ns->sh_size || strcmp(names + sh[i].sh_name, want)) continue;
        if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_offset > fsize ||
            sh[i].sh_size > fsize - sh[i].sh_offset || sh[i].sh_size > SL_UDF_MAX_SECTION) {
            sl_seterr(err, errlen, "%s: its %s section is out of the file or too big", path, want);
            goto done;
        }
        out = sl_malloc(sh[i].sh_size + 1);
        if (pread_all(fd, out, sh[i].sh_size, (off_t)sh[i].sh_offset) != SL_OK) {
            free(out);
            out = NULL;
            sl_seterr(err, errlen, "%s: cannot read its %s section", path, want);
            goto done;
        }
        out[sh[i].sh_size] = 0;
        *len = sh[i].sh_size;
        goto done;
    }
    *absent = 1;
    sl_seterr(err, errlen, "%s has no %s section", path, want);
done:
    free(names);
    free(sh);
    close(fd);
    return out;
}

/* ---- declarations ----------------------------------------------------------- */

void sl_udf_sig_free(sl_udf_sig *s)
{
    if (!s) return;
    free(s->name);
    free(s->symbol);
    free(s->library);
    free(s->decl);
    free(s->module);
    free(s->source);
    sl_schema_free(&s->cols);
    free(s);
}

int sl_udf_dtype_parse(const char *text, const sl_dtype **dt)
{
    sl_type t;
    if (sl_type_parse(text, &t) == SL_OK) { /* TIMESTAMP_LTZ(3) too: as TIMESTAMP(3) */
        *dt = sl_dtype_basic(t);
        return SL_OK;
    }
    while (*text == ' ') text++;
    size_t n = strlen(text);
    while (n && text[n - 1] == ' ') n--;
    if (n == 4 && !strncasecmp(text, "DATE", 4)) {
        *dt = sl_dtype_basic(SL_T_DATE);
        return SL_OK;
    }
    const sl_dtype *d;
    if ((n >= 7 && !strncasecmp(text, "DECIMAL", 7)) && sl_dtype_parse(text, &d, NULL, 0) == SL_OK &&
        d->kind == SL_T_DECIMAL) {
        *dt = sl_dtype_nullable(d, false);
        return SL_OK;
    }
    return SL_ERR;
}

int sl_udf_type_parse(const char *text, sl_type *t)
{
    const sl_dtype *dt;
    if (sl_udf_dtype_parse(text, &dt) != SL_OK) return SL_ERR;
    *t = dt->kind;
    return SL_OK;
}

int sl_udf_check_dec(const sl_dtype *dt, const sl_value *v, char *err, size_t errlen)
{
    if (!dt || dt->kind != SL_T_DECIMAL || v->isnull) return SL_OK;
    sl_dec d = {v->v.dec.lo, v->v.dec.hi};
    if (sl_dec_fits(d, dt->p)) return SL_OK;
    return sl_seterr(err, errlen, "returned an unscaled DECIMAL of more than %d digits where %s "
                     "was declared", dt->p, dt->text);
}

static int parse_args(const char *text, sl_udf_sig *s, char *err, size_t errlen)
{
    const char *p = text;
    s->nargs = 0;
    while (*p == ' ') p++;
    if (!*p) return SL_OK;
    for (;;) {
        const char *end = p; /* the ',' after this type; commas inside () belong to it */
        for (int depth = 0; *end && (depth || *end != ','); end++)
            depth += *end == '(' ? 1 : *end == ')' ? -1 : 0;
        if (!*end) end = NULL;
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char t[64];
        if (n >= sizeof t) return sl_seterr(err, errlen, "an argument type is too long");
        memcpy(t, p, n);
        t[n] = 0;
        if (s->nargs >= SL_UDF_MAX_ARGS)
            return sl_seterr(err, errlen, "more than %d arguments", SL_UDF_MAX_ARGS);
        if (sl_udf_dtype_parse(t, &s->argdt[s->nargs]) != SL_OK)
            return sl_seterr(err, errlen, "unknown argument type '%s'", t);
        s->args[s->nargs] = s->argdt[s->nargs]->kind;
        s->nargs++;
        if (!end) return SL_OK;
        p = end + 1;
    }
}

static int parse_flags(const char *text, sl_udf_sig *s, char *err, size_t errlen)
{
    s->deterministic = true;
    s->strict = true;
    bool agg = s->kind == SL_UDF_AGG_KIND, sized = false;
    char buf[200];
    if (strlen(text) >= sizeof buf) return sl_seterr(err, errlen, "the flags are too long");
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
        if (!strcmp(w, "deterministic")) s->deterministic = true;
        else if (!strcmp(w, "nondeterministic")) s->deterministic = false;
        else if (!strcmp(w, "strict")) s->strict = true;
        else if (!strcmp(w, "nullable")) s->strict = false;
        else if (agg && !strcmp(w, "retract")) s->retract = true;
        else if (agg && !strcmp(w, "merge")) s->merge = true;
        else if (agg && !strncmp(w, "accumulator=", 12)) {
            char *end;
            unsigned long n = strtoul(w + 12, &end, 10);
            if (w[12] < '0' || w[12] > '9' || *end || n == 0 || n > SL_UDF_MAX_ACC)
                return sl_seterr(err, errlen, "accumulator size '%s' must be a decimal number of "
                                 "bytes from 1 to %d", w + 12, SL_UDF_MAX_ACC);
            s->acc_size = (unsigned)n;
            sized = true;
        } else
            return sl_seterr(err, errlen, "unknown flag '%s' (deterministic, nondeterministic, "
                             "strict, nullable%s)", w, agg ? ", retract, merge" : "");
    }
    if (agg && !sized)
        return sl_seterr(err, errlen, "an aggregate function declares its accumulator's size "
                         "(SL_UDF_AGGREGATE's acc_bytes)");
    return SL_OK;
}

sl_udf_sig *sl_udf_parse_decl(const char *text, char *err, size_t errlen)
{
    char *f[7] = {0};
    char *buf = sl_strdup(text);
    int nf = 0;
    for (char *p = buf; nf < 7;) {
        f[nf++] = p;
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = 0;
        p = bar + 1;
    }
    sl_udf_sig *s = sl_calloc(1, sizeof *s);
    sl_schema_init(&s->cols);
    char why[200];
    int rc = SL_OK;
    unsigned abi = 0;
    if (nf < 1 || sscanf(f[0], "sluice-udf %u", &abi) != 1) {
        rc = sl_seterr(why, sizeof why, "not a Sluice function declaration");
    } else if (abi != SL_UDF_ABI_VERSION) {
        rc = sl_seterr(why, sizeof why, "built for UDF ABI %u, this Sluice has %u", abi,
                       SL_UDF_ABI_VERSION);
    } else if (nf != 6) {
        rc = sl_seterr(why, sizeof why, "expected 6 fields separated by '|', found %d", nf);
    } else {
        s->symbol = sl_strdup(f[2]);
        s->name = sl_strdup(f[2]);
        if (!strcmp(f[1], "scalar")) {
            s->kind = SL_UDF_SCALAR_KIND;
            if (sl_udf_dtype_parse(f[3], &s->resdt) != SL_OK)
                rc = sl_seterr(why, sizeof why, "unknown result type '%s'", f[3]);
            else s->result = s->resdt->kind;
        } else if (!strcmp(f[1], "table")) {
            s->kind = SL_UDF_TABLE_KIND;
            char e2[160];
            if (sl_schema_parse(f[3], &s->cols, e2, sizeof e2) != SL_OK)
                rc = sl_seterr(why, sizeof why, "columns '%s': %s", f[3], e2);
            else if (s->cols.n > SL_UDF_MAX_COLS)
                rc = sl_seterr(why, sizeof why, "more than %d columns", SL_UDF_MAX_COLS);
        } else if (!strcmp(f[1], "aggregate")) {
            s->kind = SL_UDF_AGG_KIND;
            if (sl_udf_dtype_parse(f[3], &s->resdt) != SL_OK)
                rc = sl_seterr(why, sizeof why, "unknown result type '%s'", f[3]);
            else s->result = s->resdt->kind;
        } else {
            rc = sl_seterr(why, sizeof why, "unknown kind '%s' (scalar, table or aggregate)", f[1]);
        }
        if (rc == SL_OK) rc = parse_args(f[4], s, why, sizeof why);
        if (rc == SL_OK) rc = parse_flags(f[5], s, why, sizeof why);
    }
    free(buf);
    if (rc != SL_OK) {
        sl_seterr(err, errlen, "bad declaration \"%.120s\": %s", text, why);
        sl_udf_sig_free(s);
        return NULL;
    }
    s->decl = sl_strdup(text);
    return s;
}

int sl_udf_read_decls(const char *path, sl_udf_sig ***out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t len = 0;
    int absent;
    char *sec = read_section(path, SL_UDF_SECTION, &len, &absent, err, errlen);
    if (!sec && absent)
        sl_seterr(err, errlen, "%s declares no SQL functions (no %s section: declare each one "
                  "with SL_UDF_SCALAR or SL_UDF_TABLE of udf.h)", path, SL_UDF_SECTION);
    if (!sec) return SL_ERR;
    int rc = SL_OK;
    for (size_t i = 0; rc == SL_OK && i < len;) {
        if (!sec[i]) {
            i++;
            continue;
        }
        const char *d = sec + i;
        size_t dl = strlen(d);
        char e2[400];
        sl_udf_sig *s = sl_udf_parse_decl(d, e2, sizeof e2);
        if (!s) {
            rc = sl_seterr(err, errlen, "%s: %s", path, e2);
            break;
        }
        *out = sl_realloc(*out, sizeof **out * (size_t)(*n + 1));
        (*out)[(*n)++] = s;
        i += dl + 1;
    }
    free(sec);
    if (rc != SL_OK) {
        for (int k = 0; k < *n; k++) sl_udf_sig_free((*out)[k]);
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

sl_udf_sig *sl_udf_find_decl(const char *path, const char *symbol, char *err, size_t errlen)
{
    sl_udf_sig **all;
    int n;
    if (sl_udf_read_decls(path, &all, &n, err, errlen) != SL_OK) return NULL;
    sl_udf_sig *found = NULL;
    char names[300] = "";
    size_t w = 0;
    for (int i = 0; i < n; i++) {
        if (!found && !strcmp(all[i]->symbol, symbol)) {
            found = all[i];
            continue;
        }
        if (w < sizeof names)
            w += (size_t)snprintf(names + w, sizeof names - w, "%s%s", w ? ", " : "", all[i]->symbol);
        sl_udf_sig_free(all[i]);
    }
    free(all);
    if (!found) {
        sl_seterr(err, errlen, "%s declares no function '%s' (it declares %s)", path, symbol,
                  *names ? names : "none");
        return NULL;
    }
    found->library = sl_strdup(path);
    return found;
}

int sl_udf_exports(const char *path, const char *symbol, sl_udf_kind kind, char *err,
                   size_t errlen)
{
    unsigned want = kind == SL_UDF_AGG_KIND ? STT_OBJECT : STT_FUNC;
    size_t nsym = 0, nstr = 0;
    int absent;
    char *syms = read_section(path, ".dynsym", &nsym, &absent, err, errlen);
    char *strs = syms ? read_section(path, ".dynstr", &nstr, &absent, err, errlen) : NULL;
    int found = 0;
    for (size_t o = 0; strs && o + sizeof(Elf64_Sym) <= nsym; o += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        memcpy(&sym, syms + o, sizeof sym);
        if (sym.st_name >= nstr || sym.st_shndx == SHN_UNDEF ||
            ELF64_ST_TYPE(sym.st_info) != want || ELF64_ST_BIND(sym.st_info) == STB_LOCAL)
            continue;
        if (!strcmp(strs + sym.st_name, symbol)) found = 1;
    }
    int rc = found ? SL_OK : SL_ERR;
    if (syms && strs && !found)
        sl_seterr(err, errlen, "%s declares '%s' but does not export %s of that name "
                  "(is it static, or spelt differently?)", path, symbol,
                  kind == SL_UDF_AGG_KIND ? "a const sl_udf_aggregate table" : "a function");
    free(syms);
    free(strs);
    return rc;
}

sl_udf_sig *sl_udf_sig_copy(const sl_udf_sig *s)
{
    sl_udf_sig *c = sl_calloc(1, sizeof *c);
    c->name = s->name ? sl_strdup(s->name) : NULL;
    c->symbol = s->symbol ? sl_strdup(s->symbol) : NULL;
    c->library = s->library ? sl_strdup(s->library) : NULL;
    c->decl = s->decl ? sl_strdup(s->decl) : NULL;
    c->kind = s->kind;
    c->result = s->result;
    c->resdt = s->resdt;
    memcpy(c->argdt, s->argdt, sizeof c->argdt);
    sl_schema_init(&c->cols);
    for (int i = 0; i < s->cols.n; i++) sl_schema_add_dt(&c->cols, s->cols.fields[i].name, s->cols.fields[i].dt);
    c->nargs = s->nargs;
    memcpy(c->args, s->args, sizeof c->args);
    c->deterministic = s->deterministic;
    c->strict = s->strict;
    c->acc_size = s->acc_size;
    c->retract = s->retract;
    c->merge = s->merge;
    c->python = s->python;
    c->module = s->module ? sl_strdup(s->module) : NULL;
    c->source = s->source ? sl_strdup(s->source) : NULL;
    return c;
}

char *sl_udf_sig_text(const sl_udf_sig *s)
{
    char args[400] = "", res[600] = "";
    size_t w = 0;
    for (int i = 0; i < s->nargs && w < sizeof args; i++)
        w += (size_t)snprintf(args + w, sizeof args - w, "%s%s", i ? ", " : "",
                              s->args[i] == SL_T_DECIMAL ? s->argdt[i]->text : sl_type_name(s->args[i]));
    if (s->kind != SL_UDF_TABLE_KIND) {
        snprintf(res, sizeof res, "%s", s->result == SL_T_DECIMAL ? s->resdt->text
                                                                : sl_type_name(s->result));
    } else {
        w = (size_t)snprintf(res, sizeof res, "TABLE(");
        for (int i = 0; i < s->cols.n && w < sizeof res; i++)
            w += (size_t)snprintf(res + w, sizeof res - w, "%s%s %s", i ? ", " : "",
                                  s->cols.fields[i].name,
                                  s->cols.fields[i].type == SL_T_DECIMAL ? s->cols.fields[i].dt->text
                                  : sl_type_name(s->cols.fields[i].type));
        if (w < sizeof res) snprintf(res + w, sizeof res - w, ")");
    }
    return sl_sprintf("%s %s(%s)", res, s->name, args);
}

/* ---- the vertex's "functions" ----------------------------------------------- */

json_t *sl_udf_sig_json(const sl_udf_sig *s)
{
    if (s->python) {
        char *lib = sl_sprintf("py:%s", s->module);
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", s->name, "symbol",
                              s->symbol, "library", lib, "declaration", s->decl ? s->decl : "",
                              "language", "python", "module", s->module, "source", s->source);
        free(lib);
        return j;
    }
    return json_pack("{s:s, s:s, s:s, s:s}", "name", s->name, "symbol", s->symbol, "library",
                     s->library ? s->library : "", "declaration", s->decl ? s->decl : "");
}

/* ---- the Python host --------------------------------------------------------- */

static _Atomic(const sl_udf_host *) udf_host;

void sl_udf_set_host(const sl_udf_host *h) { atomic_store(&udf_host, h); }

const sl_udf_host *sl_udf_host_get(void) { return atomic_load(&udf_host); }

sl_udf_set *sl_udf_set_new(void)
{
    sl_udf_set *set = sl_calloc(1, sizeof *set);
    pthread_mutex_init(&set->mu, NULL);
    return set;
}

void sl_udf_set_add(sl_udf_set *set, sl_udf_sig *s)
{
    set->f = sl_realloc(set->f, sizeof *set->f * (size_t)(set->n + 1));
    set->f[set->n++] = s;
}

void sl_udf_set_destroy(sl_udf_set *set)
{
    if (!set) return;
    for (int i = 0; i < set->n; i++) sl_udf_sig_free(set->f[i]);
    free(set->f);
    for (int i = 0; i < set->ndl; i++) dlclose(set->dl[i]);
    free(set->dl);
    pthread_mutex_destroy(&set->mu);
    free(set);
}

sl_udf_sig *sl_udf_set_find(const sl_udf_set *set, const char *name)
{
    for (int i = 0; set && i < set->n; i++)
        if (!strcasecmp(set->f[i]->name, name)) return set->f[i];
    return NULL;
}

sl_udf_set *sl_udf_set_from_json(const json_t *arr, char *err, size_t errlen)
{
    sl_udf_set *set = sl_udf_set_new();
    if (!arr || json_is_null(arr)) return set;
    if (!json_is_array(arr)) {
        sl_seterr(err, errlen, "'functions' must be an array of {name, symbol, library, declaration}");
        sl_udf_set_destroy(set);
        return NULL;
    }
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *sym = json_string_value(json_object_get(o, "symbol"));
        const char *lib = json_string_value(json_object_get(o, "library"));
        const char *decl = json_string_value(json_object_get(o, "declaration"));
        const char *lang = json_string_value(json_object_get(o, "language"));
        const char *mod = json_string_value(json_object_get(o, "module"));
        const char *src = json_string_value(json_object_get(o, "source"));
        bool py = lang && !strcmp(lang, "python");
        char e2[400];
        sl_udf_sig *s = NULL;
        if (!name || !*name || !sym || !lib || !*lib || !decl) {
            sl_seterr(err, errlen, "functions[%zu] needs name, symbol, library and declaration", i);
        } else if (lang && !py) {
            sl_seterr(err, errlen, "function '%s': unknown language '%s' (python, or none for C)",
                      name, lang);
        } else if (py && (!mod || !*mod || !src)) {
            sl_seterr(err, errlen, "function '%s': a Python function needs module and source", name);
        } else if (!(s = sl_udf_parse_decl(decl, e2, sizeof e2))) {
            sl_seterr(err, errlen, "function '%s': %s", name, e2);
        } else if (strcmp(s->symbol, sym)) {
            sl_seterr(err, errlen, "function '%s': its declaration is of '%s', not '%s'", name,
                      s->symbol, sym);
        } else if (sl_udf_set_find(set, name)) {
            sl_seterr(err, errlen, "function '%s' is listed twice", name);
        } else {
            free(s->name);
            s->name = sl_strdup(name);
            s->library = sl_strdup(lib);
            if (py) {
                s->python = true;
                s->module = sl_strdup(mod);
                s->source = sl_strdup(src);
            }
            sl_udf_set_add(set, s);
            continue;
        }
        sl_udf_sig_free(s);
        sl_udf_set_destroy(set);
        return NULL;
    }
    return set;
}

/* ---- resolution (TaskManager) ------------------------------------------------ */

int sl_udf_set_resolve(sl_udf_set *set, char *err, size_t errlen)
{
    int rc = SL_OK;
    pthread_mutex_lock(&set->mu);
    for (int i = 0; rc == SL_OK && i < set->n; i++) {
        sl_udf_sig *s = set->f[i];
        if (atomic_load(&s->fn)) continue;
        if (s->python) {
            const sl_udf_host *h = sl_udf_host_get();
            void *handle = NULL;
            char e3[600];
            if (!h)
                rc = sl_seterr(err, errlen, "function '%s': Python functions run on TaskManagers "
                               "only", s->name);
            else if (h->resolve(s, &handle, e3, sizeof e3) != SL_OK)
                rc = sl_seterr(err, errlen, "function '%s' (Python, %s.%s): %s", s->name, s->module,
                               s->symbol, e3);
            else
                atomic_store(&s->fn, handle);
            continue;
        }
        if (s->library[0] != '/') {
            rc = sl_seterr(err, errlen, "function '%s': its object %s was not shipped to this "
                           "TaskManager", s->name, s->library);
            break;
        }
        char e2[600];
        sl_udf_sig *now = sl_udf_find_decl(s->library, s->symbol, e2, sizeof e2);
        if (!now) {
            rc = sl_seterr(err, errlen, "function '%s': %s", s->name, e2);
            break;
        }
        int same = !strcmp(now->decl, s->decl);
        sl_udf_sig_free(now);
        if (!same) {
            rc = sl_seterr(err, errlen, "function '%s': %s now declares '%s' differently than "
                           "when the job was planned (\"%s\")", s->name, s->library, s->symbol, s->decl);
            break;
        }
        void *dl = dlopen(s->library, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            rc = sl_seterr(err, errlen, "function '%s': cannot load %s: %s", s->name, s->library,
                           dlerror());
            break;
        }
        set->dl = sl_realloc(set->dl, sizeof *set->dl * (size_t)(set->ndl + 1));
        set->dl[set->ndl++] = dl;
        void *fn = dlsym(dl, s->symbol);
        if (!fn) {
            rc = sl_seterr(err, errlen, "function '%s': %s declares '%s' but does not export it "
                           "(is it static?)", s->name, s->library, s->symbol);
            break;
        }
        if (s->kind == SL_UDF_AGG_KIND) {
            const sl_udf_aggregate *t = fn;
            const char *bad = t->abi != SL_UDF_ABI_VERSION ? "its abi is not SL_UDF_ABI_VERSION"
                              : t->acc_size != s->acc_size ? "its acc_size differs from the declared accumulator size"
                              : !t->create || !t->accumulate || !t->get_value ? "create, accumulate and get_value are required"
                              : s->retract && !t->retract ? "it declares retract but has none"
                              : s->merge && !t->merge ? "it declares merge but has none"
                              : NULL;
            if (bad) {
                rc = sl_seterr(err, errlen, "function '%s': the table '%s' of %s is wrong: %s "
                               "(declared: %u bytes)", s->name, s->symbol, s->library, bad,
                               s->acc_size);
                break;
            }
        }
        atomic_store(&s->fn, fn);
    }
    pthread_mutex_unlock(&set->mu);
    return rc;
}
