/*
 * pyhost.c -- Python functions (CREATE FUNCTION ... LANGUAGE PYTHON) run in
 * an interpreter embedded in the TaskManager (Debian's libpython3), the
 * process's one: the TaskManager alone links libpython, and registers this
 * host (core/udf_sig.h) at start-up; the JobManager and the SQL client
 * never start an interpreter.
 *
 * The interpreter starts on the first Python function a task opens. It
 * ignores PYTHON* environment variables (the TaskManager's environment is
 * not the function's) and installs no signal handlers (the TaskManager's
 * stay). Before any user module, small stand-ins for PyFlink's names are
 * put in sys.modules -- pyflink.table.DataTypes, pyflink.table.udf.udf --
 * so that a PyFlink file runs unchanged: the decorator returns the
 * function itself (its types were read from the file when the statement
 * was planned, core/udf_py.c).
 *
 * A module is its text: it is compiled and executed once per distinct text
 * (the same module in several jobs or subtasks shares one object; a new
 * text -- the file changed between jobs -- replaces it in sys.modules).
 *
 * Calls: each takes the GIL, builds the arguments, calls, converts the
 * result and releases the GIL, so subtasks of one TaskManager call Python
 * one at a time (docs/UDF.md, "The GIL"). Each thread that calls Python
 * gets its Python thread state once (py_enter) and keeps it until the
 * thread ends (a pthread key's destructor deletes it), so a call does not
 * create and destroy one as PyGILState_Ensure/Release would. A
 * Python exception fails the task with "Type: message (file, line N)",
 * the traceback's last line and the user's innermost frame.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "decimal.h"
#include "tm.h"
#include "udf_sig.h"

static pthread_once_t py_once = PTHREAD_ONCE_INIT;
static char py_init_err[300];
static PyObject *py_helpers; /* the host's own module (_sluice_host) */
static PyObject *py_dumps, *py_loads; /* pickle.dumps, pickle.loads */
static PyObject *py_proto;            /* the pickle protocol (5) */
/* the prelude's conversions of TIMESTAMP (datetime.datetime, naive UTC) and DATE */
static PyObject *py_ts_in, *py_ts_out, *py_date_in, *py_date_out, *py_dec_in, *py_dec_out;
/* method names of PyFlink's AggregateFunction */
static PyObject *nm_create, *nm_accumulate, *nm_retract, *nm_merge, *nm_get_value;
static PyInterpreterState *py_interp;
static pthread_key_t py_ts_key; /* this thread's PyThreadState, deleted at its exit */

/* The thread ends: delete its Python thread state (taking the GIL to). */
static void py_ts_free(void *p)
{
    PyEval_RestoreThread((PyThreadState *)p);
    PyThreadState_Clear((PyThreadState *)p);
    PyThreadState_DeleteCurrent();
}

/* This thread holds the interpreter for a bundle (py_bundle_begin): calls
 * inside it neither take nor release the GIL. */
static _Thread_local int py_bundled;

/* Take the GIL with this thread's own thread state (made on first use). */
static void py_enter_now(void)
{
    PyThreadState *ts = pthread_getspecific(py_ts_key);
    if (!ts) {
        ts = PyThreadState_New(py_interp);
        pthread_setspecific(py_ts_key, ts);
    }
    PyEval_RestoreThread(ts);
}

static void py_leave_now(void) { PyEval_SaveThread(); }

static inline void py_enter(void)
{
    if (!py_bundled) py_enter_now();
}

static inline void py_leave(void)
{
    if (!py_bundled) py_leave_now();
}

/* A bundle: the calls of up to python.fn-execution.bundle.size rows under
 * one GIL entry (operators/calc.c). Only on threads that resolved a Python
 * function (the interpreter is up). */
static void py_bundle_begin(void)
{
    if (!py_helpers || py_bundled++) return;
    py_enter_now();
}

static void py_bundle_end(void)
{
    if (!py_helpers || !py_bundled || --py_bundled) return;
    py_leave_now();
}

/* The stand-ins for PyFlink's names, and the host's helpers. */
static const char *const py_prelude =
    "import sys, types\n"
    "class _Types:\n"
    "    def __getattr__(self, name):\n"
    "        return lambda *a, **k: name\n"
    "def udf(f=None, **kw):\n"
    "    return (lambda g: g) if f is None else f\n"
    "class UserDefinedFunction:\n"
    "    def open(self, function_context):\n"
    "        pass\n"
    "    def close(self):\n"
    "        pass\n"
    "    def is_deterministic(self):\n"
    "        return True\n"
    "class ScalarFunction(UserDefinedFunction):\n"
    "    pass\n"
    "class TableFunction(UserDefinedFunction):\n"
    "    pass\n"
    "class AggregateFunction(UserDefinedFunction):\n"
    "    def get_result_type(self):\n"
    "        return None\n"
    "    def get_accumulator_type(self):\n"
    "        return None\n"
    "def udaf(f=None, **kw):\n"
    "    if f is None:\n"
    "        return lambda g: g() if isinstance(g, type) else g\n"
    "    return f() if isinstance(f, type) else f\n"
    "_m = {n: types.ModuleType(n) for n in ('pyflink', 'pyflink.table', 'pyflink.table.udf')}\n"
    "_m['pyflink.table.udf'].udf = udf\n"
    "_m['pyflink.table.udf'].udtf = udf\n"
    "_m['pyflink.table.udf'].udaf = udaf\n"
    "for _c in (UserDefinedFunction, ScalarFunction, TableFunction, AggregateFunction):\n"
    "    setattr(_m['pyflink.table.udf'], _c.__name__, _c)\n"
    "    setattr(_m['pyflink.table'], _c.__name__, _c)\n"
    "_m['pyflink.table'].DataTypes = _Types()\n"
    "class Row(list):\n"
    "    __slots__ = ('_fields',)\n"
    "    def __init__(self, *a, **k):\n"
    "        list.__init__(self, a if a else k.values())\n"
    "        self._fields = tuple(k) if k and not a else None\n"
    "    def __getattr__(self, name):\n"
    "        f = object.__getattribute__(self, '_fields')\n"
    "        if f and name in f:\n"
    "            return self[f.index(name)]\n"
    "        raise AttributeError(name)\n"
    "    def as_dict(self):\n"
    "        return dict(zip(self._fields or (), self))\n"
    "    def __reduce__(self):\n"
    "        return (_row, (list(self), self._fields))\n"
    "def _row(vals, fields):\n"
    "    r = Row(*vals)\n"
    "    r._fields = fields\n"
    "    return r\n"
    "Row.__module__ = 'pyflink.table'\n"
    "_row.__module__ = 'pyflink.table'\n"
    "_m['pyflink.table']._row = _row\n"
    "_m['pyflink.table'].Row = Row\n"
    "_m['pyflink.table'].udf = _m['pyflink.table.udf']\n"
    "_m['pyflink'].table = _m['pyflink.table']\n"
    "sys.modules.update(_m)\n"
    "_texts = {}\n"
    "def load(name, text):\n"
    "    m = sys.modules.get(name)\n"
    "    if m is not None and _texts.get(name) == text:\n"
    "        return m\n"
    "    code = compile(text, name + '.py', 'exec')\n"
    "    m = types.ModuleType(name)\n"
    "    m.__file__ = name + '.py'\n"
    "    sys.modules[name] = m\n"
    "    try:\n"
    "        exec(code, m.__dict__)\n"
    "    except BaseException:\n"
    "        del sys.modules[name]\n"
    "        raise\n"
    "    _texts[name] = text\n"
    "    return m\n"
    "import datetime as _dt\n"
    "_EPOCH = _dt.datetime(1970, 1, 1)\n"
    "_US = _dt.timedelta(microseconds=1)\n"
    "def ts_in(ms, nano):\n"
    "    return _EPOCH + _dt.timedelta(microseconds=ms * 1000 + nano // 1000)\n"
    "def ts_out(v):\n"
    "    if not isinstance(v, _dt.datetime):\n"
    "        return None\n"
    "    if v.tzinfo is not None:\n"
    "        v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)\n"
    "    return divmod((v - _EPOCH) // _US, 1000)\n"
    "def date_in(d):\n"
    "    return _dt.date.fromordinal(719163 + d)\n"
    "def date_out(v):\n"
    "    return v.toordinal() - 719163 if isinstance(v, _dt.date) else None\n"
    "import decimal as _decimal\n"
    "_dctx = {}\n"
    "def dec_in(text):\n"
    "    return _decimal.Decimal(text)\n"
    "def dec_out(v, p, s):\n"
    "    if isinstance(v, bool) or not isinstance(v, (_decimal.Decimal, int)):\n"
    "        return None\n"
    "    c = _dctx.get(p)\n"
    "    if c is None:\n"
    "        c = _dctx[p] = _decimal.Context(prec=p)\n"
    "    q = _decimal.Decimal(v).quantize(_decimal.Decimal(1).scaleb(-s), context=c)\n"
    "    sign, digits, exp = q.as_tuple()\n"
    "    if exp != -s:\n"
    "        raise _decimal.InvalidOperation('%s is not a finite number' % v)\n"
    "    u = int(''.join(map(str, digits)))\n"
    "    if sign:\n"
    "        u = -u\n"
    "    return (u >> 64, u & 0xFFFFFFFFFFFFFFFF)\n"
    "def errtext(e):\n"
    "    import traceback\n"
    "    tb = traceback.extract_tb(e.__traceback__)\n"
    "    where = '' if not tb or isinstance(e, SyntaxError) else \\\n"
    "        ' (%s, line %d)' % (tb[-1].filename, tb[-1].lineno)\n"
    "    text = str(e)\n"
    "    return type(e).__name__ + (': ' + text if text else '') + where\n";

static void py_start(void)
{
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.use_environment = 0;
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.user_site_directory = 0;
    PyStatus st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        snprintf(py_init_err, sizeof py_init_err, "cannot start the Python interpreter: %s",
                 st.err_msg ? st.err_msg : "?");
        return;
    }
    PyObject *m = PyModule_New("_sluice_host");
    PyObject *d = m ? PyModule_GetDict(m) : NULL;
    PyObject *b = d ? PyEval_GetBuiltins() : NULL;
    if (d && b) PyDict_SetItemString(d, "__builtins__", b);
    PyObject *r = d ? PyRun_String(py_prelude, Py_file_input, d, d) : NULL;
    if (!r) {
        PyErr_Print();
        snprintf(py_init_err, sizeof py_init_err, "cannot set up the Python host");
        Py_XDECREF(m);
    } else {
        Py_DECREF(r);
        PyObject *pk = PyImport_ImportModule("pickle");
        py_dumps = pk ? PyObject_GetAttrString(pk, "dumps") : NULL;
        py_loads = pk ? PyObject_GetAttrString(pk, "loads") : NULL;
        Py_XDECREF(pk);
        py_proto = PyLong_FromLong(5);
        nm_create = PyUnicode_InternFromString("create_accumulator");
        nm_accumulate = PyUnicode_InternFromString("accumulate");
        nm_retract = PyUnicode_InternFromString("retract");
        nm_merge = PyUnicode_InternFromString("merge");
        nm_get_value = PyUnicode_InternFromString("get_value");
        py_ts_in = PyObject_GetAttrString(m, "ts_in");
        py_ts_out = PyObject_GetAttrString(m, "ts_out");
        py_date_in = PyObject_GetAttrString(m, "date_in");
        py_date_out = PyObject_GetAttrString(m, "date_out");
        py_dec_in = PyObject_GetAttrString(m, "dec_in");
        py_dec_out = PyObject_GetAttrString(m, "dec_out");
        if (!py_dumps || !py_loads || !py_ts_in || !py_ts_out || !py_date_in || !py_date_out ||
            !py_dec_in || !py_dec_out) {
            PyErr_Print();
            snprintf(py_init_err, sizeof py_init_err, "cannot import pickle");
            Py_XDECREF(m);
        } else {
            py_helpers = m;
        }
    }
    py_interp = PyInterpreterState_Main();
    pthread_key_create(&py_ts_key, py_ts_free);
    PyEval_SaveThread(); /* the GIL is taken per call from now on */
}

/* The pending exception as "Type: message (file, line N)" into err; clears it.
 * Holding the GIL. */
static int py_error(char *err, size_t errlen)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    PyObject *text = value ? PyObject_CallMethod(py_helpers, "errtext", "O", value) : NULL;
    const char *s = text ? PyUnicode_AsUTF8(text) : NULL;
    sl_seterr(err, errlen, "%s", s ? s : "a Python exception (its text cannot be read)");
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    return SL_ERR;
}

static int py_resolve(sl_udf_sig *s, void **handle, char *err, size_t errlen)
{
    pthread_once(&py_once, py_start);
    if (!py_helpers) return sl_seterr(err, errlen, "%s", py_init_err);
    py_enter();
    int rc = SL_OK;
    PyObject *m = PyObject_CallMethod(py_helpers, "load", "ss", s->module, s->source);
    PyObject *f = m ? PyObject_GetAttrString(m, s->symbol) : NULL;
    if (f && PyType_Check(f)) { /* a class: its instance (udaf(WeightedAvg) or a decorated class) */
        PyObject *o = PyObject_CallNoArgs(f);
        Py_DECREF(f);
        f = o;
    }
    if (f && s->kind != SL_UDF_AGG_KIND && !PyFunction_Check(f) &&
        PyObject_HasAttrString(f, "eval")) { /* a ScalarFunction / TableFunction object */
        PyObject *ev = PyObject_GetAttrString(f, "eval");
        Py_DECREF(f);
        f = ev;
    }
    if (!f) {
        rc = py_error(err, errlen);
    } else if (s->kind == SL_UDF_AGG_KIND) {
        PyObject *need[] = {nm_create, nm_accumulate, nm_get_value, s->retract ? nm_retract : NULL,
                            s->merge ? nm_merge : NULL};
        for (int i = 0; rc == SL_OK && i < 5; i++)
            if (need[i] && !PyObject_HasAttr(f, need[i]))
                rc = sl_seterr(err, errlen, "%s.%s (a %s) has no method %s", s->module, s->symbol,
                               Py_TYPE(f)->tp_name, PyUnicode_AsUTF8(need[i]));
    } else if (!PyCallable_Check(f)) {
        rc = sl_seterr(err, errlen, "%s.%s is not callable", s->module, s->symbol);
    }
    if (rc == SL_OK) *handle = f; /* held for the process's life */
    else Py_XDECREF(f);
    Py_XDECREF(m);
    py_leave();
    return rc;
}

/* An argument of type dt as a new Python object (a DECIMAL(p, s) as a
 * decimal.Decimal of exactly s fraction digits, as PyFlink passes it); NULL
 * with a Python error. */
static PyObject *to_py(const sl_value *v, const sl_dtype *dt)
{
    if (v->isnull) Py_RETURN_NONE;
    switch (dt->kind) {
    case SL_T_DECIMAL: {
        char text[SL_DEC_TEXT_MAX + 1];
        sl_dec d = {v->v.dec.lo, v->v.dec.hi};
        sl_dec_format(text, sizeof text, d, dt->s);
        return PyObject_CallFunction(py_dec_in, "s", text);
    }
    case SL_T_BOOLEAN: return PyBool_FromLong(v->v.i != 0);
    case SL_T_DOUBLE: return PyFloat_FromDouble(v->v.d);
    case SL_T_STRING: return PyUnicode_DecodeUTF8(v->v.s.p, v->v.s.len, "surrogateescape");
    case SL_T_BYTES: return PyBytes_FromStringAndSize(v->v.s.p, v->v.s.len);
    case SL_T_TIMESTAMP: return PyObject_CallFunction(py_ts_in, "Li", (long long)v->v.ts.ms,
                                                      (int)v->v.ts.nano);
    case SL_T_DATE: return PyObject_CallFunction(py_date_in, "L", (long long)v->v.i);
    default: return PyLong_FromLongLong(v->v.i);
    }
}

/* Where a result's string bytes go: the record's arena, or a table
 * function's ctx->alloc. */
typedef struct py_alloc {
    sl_arena *arena;
    sl_udf_ctx *ctx;
} py_alloc;

static void *py_alloc_bytes(const py_alloc *a, size_t n)
{
    return a->arena ? sl_arena_alloc(a->arena, n) : a->ctx->alloc(a->ctx, n);
}

/* Result r as type dt into out (strings copied by al). A DECIMAL(p, s) is
 * rounded to s fraction digits (HALF_EVEN) in a context of p digits, as
 * PyFlink's coder quantizes it: a value of more than p digits is the error
 * decimal.InvalidOperation. Holding the GIL. */
static int from_py(PyObject *r, const sl_dtype *dt, const py_alloc *al, sl_value *out, char *err,
                   size_t errlen)
{
    sl_type t = dt->kind;
    memset(out, 0, sizeof *out);
    if (r == Py_None) {
        out->isnull = true;
        return SL_OK;
    }
    const char *tn = Py_TYPE(r)->tp_name;
    switch (t) {
    case SL_T_DECIMAL: {
        PyObject *cv = PyObject_CallFunction(py_dec_out, "Oii", r, (int)dt->p, (int)dt->s);
        if (!cv) {
            if (!PyErr_ExceptionMatches(PyExc_ArithmeticError)) return py_error(err, errlen);
            PyErr_Clear();
            PyObject *txt = PyObject_Str(r);
            sl_seterr(err, errlen, "decimal.InvalidOperation: returned %.60s, which does not fit "
                      "%s", txt && PyUnicode_Check(txt) ? PyUnicode_AsUTF8(txt) : "a number",
                      dt->text);
            Py_XDECREF(txt);
            PyErr_Clear();
            return SL_ERR;
        }
        long long hi = 0;
        unsigned long long lo = 0;
        int ok = cv != Py_None && PyArg_ParseTuple(cv, "LK", &hi, &lo);
        Py_DECREF(cv);
        if (PyErr_Occurred()) return py_error(err, errlen);
        if (!ok) break;
        out->v.dec.hi = hi;
        out->v.dec.lo = lo;
        return SL_OK;
    }
    case SL_T_BOOLEAN:
        if (!PyBool_Check(r) && !PyLong_Check(r)) break;
        out->v.i = PyObject_IsTrue(r) == 1;
        return SL_OK;
    case SL_T_INT:
    case SL_T_BIGINT: {
        if (!PyLong_Check(r)) break;
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(r, &over);
        if (over || (t == SL_T_INT && (x < INT32_MIN || x > INT32_MAX))) {
            PyObject *txt = PyObject_Str(r);
            sl_seterr(err, errlen, "returned %.60s, out of %s's range",
                      txt && PyUnicode_Check(txt) ? PyUnicode_AsUTF8(txt) : "an integer",
                      sl_type_name(t));
            Py_XDECREF(txt);
            PyErr_Clear();
            return SL_ERR;
        }
        out->v.i = x;
        return SL_OK;
    }
    case SL_T_TIMESTAMP: {
        PyObject *cv = PyObject_CallOneArg(py_ts_out, r); /* (ms, microseconds) or None */
        if (!cv) return py_error(err, errlen);
        long long ms = 0, us = 0;
        int ok = cv != Py_None && PyArg_ParseTuple(cv, "LL", &ms, &us);
        Py_DECREF(cv);
        if (PyErr_Occurred()) return py_error(err, errlen);
        if (!ok) break;
        out->v.ts.ms = ms;
        out->v.ts.nano = (int32_t)(us * 1000);
        return SL_OK;
    }
    case SL_T_DATE: {
        PyObject *cv = PyObject_CallOneArg(py_date_out, r);
        if (!cv) return py_error(err, errlen);
        int ok = cv != Py_None;
        out->v.i = ok ? PyLong_AsLongLong(cv) : 0;
        Py_DECREF(cv);
        if (PyErr_Occurred()) return py_error(err, errlen);
        if (!ok) break;
        return SL_OK;
    }
    case SL_T_DOUBLE:
        if (!PyFloat_Check(r) && !PyLong_Check(r)) break;
        out->v.d = PyFloat_AsDouble(r);
        if (out->v.d == -1.0 && PyErr_Occurred()) return py_error(err, errlen);
        return SL_OK;
    case SL_T_STRING:
    case SL_T_BYTES: {
        const char *p = NULL;
        Py_ssize_t n = 0;
        PyObject *enc = NULL;
        if (t == SL_T_STRING && PyUnicode_Check(r)) {
            enc = PyUnicode_AsEncodedString(r, "utf-8", "surrogateescape");
            if (!enc) return py_error(err, errlen);
            p = PyBytes_AS_STRING(enc);
            n = PyBytes_GET_SIZE(enc);
        } else if (t == SL_T_BYTES && PyBytes_Check(r)) {
            p = PyBytes_AS_STRING(r);
            n = PyBytes_GET_SIZE(r);
        } else {
            break;
        }
        if ((size_t)n > UINT32_MAX) {
            Py_XDECREF(enc);
            return sl_seterr(err, errlen, "returned a string of %zd bytes", n);
        }
        char *buf = n ? py_alloc_bytes(al, (size_t)n) : (char *)"";
        if (!buf) {
            Py_XDECREF(enc);
            return sl_seterr(err, errlen, "its result of %zd bytes is past the record's memory", n);
        }
        if (n) memcpy(buf, p, (size_t)n);
        Py_XDECREF(enc);
        out->v.s.p = buf;
        out->v.s.len = (uint32_t)n;
        return SL_OK;
    }
    default: break;
    }
    return sl_seterr(err, errlen, "returned a %s where %s was declared%s", tn,
                     t == SL_T_DECIMAL ? dt->text : sl_type_name(t),
                     t == SL_T_DECIMAL ? " (return a decimal.Decimal or an int)" : "");
}

/* The arguments as a new tuple; NULL with a Python error. Holding the GIL. */
static PyObject *py_args(const sl_udf_sig *s, const sl_value *args, int nargs)
{
    PyObject *tup = PyTuple_New(nargs);
    for (int i = 0; tup && i < nargs; i++) {
        PyObject *v = to_py(&args[i], s->argdt[i]);
        if (!v) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

static int py_call(void *handle, const sl_udf_sig *s, const sl_value *args, int nargs,
                   sl_arena *scratch, sl_value *out, char *err, size_t errlen)
{
    py_enter();
    int rc = SL_OK, n;
    py_alloc al = {.arena = scratch};
    PyObject *argv[SL_UDF_MAX_ARGS], *r = NULL;
    for (n = 0; n < nargs; n++)
        if (!(argv[n] = to_py(&args[n], s->argdt[n]))) break;
    if (n == nargs) r = PyObject_Vectorcall((PyObject *)handle, argv, (size_t)nargs, NULL);
    for (int i = 0; i < n; i++) Py_DECREF(argv[i]);
    if (!r) rc = py_error(err, errlen);
    else rc = from_py(r, s->resdt, &al, out, err, errlen);
    Py_XDECREF(r);
    py_leave();
    return rc;
}

/* One yielded item as a row of s's columns: a tuple or list of as many
 * values (PyFlink's Row is a tuple here), or the value itself for one
 * column. Holding the GIL. */
static int py_row(PyObject *item, const sl_udf_sig *s, const py_alloc *al, sl_value *row,
                  char *err, size_t errlen)
{
    int n = s->cols.n;
    if (!PyTuple_Check(item) && !PyList_Check(item)) {
        if (n != 1)
            return sl_seterr(err, errlen, "yielded a %s where a row of %d columns (a tuple) was "
                             "declared", Py_TYPE(item)->tp_name, n);
        return from_py(item, s->cols.fields[0].dt, al, &row[0], err, errlen);
    }
    Py_ssize_t got = PySequence_Fast_GET_SIZE(item);
    if (got != n)
        return sl_seterr(err, errlen, "yielded a row of %zd values, %d columns were declared", got,
                         n);
    PyObject **it = PySequence_Fast_ITEMS(item);
    for (int i = 0; i < n; i++) {
        char e2[200];
        if (from_py(it[i], s->cols.fields[i].dt, al, &row[i], e2, sizeof e2) != SL_OK)
            return sl_seterr(err, errlen, "column %d: %s", i + 1, e2);
    }
    return SL_OK;
}

static int py_call_table(void *handle, const sl_udf_sig *s, sl_udf_ctx *ctx, const sl_value *args,
                         int nargs)
{
    py_enter();
    int rc = SL_OK;
    py_alloc al = {.ctx = ctx};
    sl_value row[SL_UDF_MAX_COLS];
    PyObject *tup = py_args(s, args, nargs), *res = NULL, *it = NULL;
    if (tup) res = PyObject_Call((PyObject *)handle, tup, NULL);
    if (res && res != Py_None) it = PyObject_GetIter(res); /* None: no rows */
    if (!res || (res != Py_None && !it)) rc = py_error(ctx->err, sizeof ctx->err);
    while (rc == SL_OK && it) {
        PyObject *item = PyIter_Next(it);
        if (!item) {
            if (PyErr_Occurred()) rc = py_error(ctx->err, sizeof ctx->err);
            break;
        }
        rc = py_row(item, s, &al, row, ctx->err, sizeof ctx->err);
        Py_DECREF(item);
        if (rc != SL_OK) break;
        /* downstream runs without the GIL: another subtask's Python may be what
         * it waits for */
        py_leave();
        int e = ctx->emit(ctx, row);
        py_enter();
        if (e) rc = SL_ERR; /* ctx->err says why (or the downstream's failure stands) */
    }
    Py_XDECREF(it);
    Py_XDECREF(res);
    Py_XDECREF(tup);
    py_leave();
    return rc == SL_OK ? 0 : 1;
}

/* ---- aggregate functions -------------------------------------------------- */

/* The accumulator pickled in acc (a u32 length, then the bytes) as a new
 * object; NULL with a Python error. */
static PyObject *acc_load(const uint8_t *acc, unsigned size)
{
    uint32_t n = sl_get_le32(acc);
    if (n == 0 || n > size - 4) {
        PyErr_Format(PyExc_ValueError, "damaged accumulator state (%u bytes in a slot of %u)",
                     (unsigned)n, size - 4);
        return NULL;
    }
    PyObject *mv = PyMemoryView_FromMemory((char *)acc + 4, n, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallOneArg(py_loads, mv) : NULL;
    Py_XDECREF(mv);
    return r;
}

/* Pickle accumulator a into acc. */
static int acc_store(PyObject *a, const sl_udf_sig *s, uint8_t *acc, char *err, size_t errlen)
{
    PyObject *b = PyObject_CallFunctionObjArgs(py_dumps, a, py_proto, NULL);
    if (!b) return py_error(err, errlen);
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    int rc = SL_OK;
    if ((size_t)n > s->acc_size - 4)
        rc = sl_seterr(err, errlen, "its accumulator pickles to %zd bytes, more than the %u of "
                       "its state slot (give udaf(...) accumulator_bytes=N, at most %d)", n,
                       s->acc_size - 4, SL_UDF_MAX_ACC - 4);
    else {
        sl_put_le32(acc, (uint32_t)n);
        memcpy(acc + 4, PyBytes_AS_STRING(b), (size_t)n);
    }
    Py_DECREF(b);
    return rc;
}

static int py_agg(void *handle, const sl_udf_sig *s, sl_udf_agg_step step, uint8_t *acc,
                  const uint8_t *other, const sl_value *args, int nargs, sl_arena *scratch,
                  sl_value *out, char *err, size_t errlen)
{
    py_enter();
    PyObject *self = handle, *a = NULL, *r = NULL;
    PyObject *argv[2 + SL_UDF_MAX_ARGS] = {self};
    int rc = SL_OK, n = 0;
    if (step == SL_UDF_AGG_CREATE) {
        a = PyObject_CallMethodNoArgs(self, nm_create);
        rc = a ? acc_store(a, s, acc, err, errlen) : py_error(err, errlen);
        goto done;
    }
    if (!(a = acc_load(acc, s->acc_size))) {
        rc = py_error(err, errlen);
        goto done;
    }
    argv[1] = a;
    switch (step) {
    case SL_UDF_AGG_ACCUMULATE:
    case SL_UDF_AGG_RETRACT:
        for (n = 0; n < nargs; n++)
            if (!(argv[2 + n] = to_py(&args[n], s->argdt[n]))) break;
        if (n == nargs)
            r = PyObject_VectorcallMethod(step == SL_UDF_AGG_RETRACT ? nm_retract : nm_accumulate,
                                          argv, (size_t)(2 + nargs),
                                          NULL);
        for (int i = 0; i < n; i++) Py_DECREF(argv[2 + i]);
        rc = r ? acc_store(a, s, acc, err, errlen) : py_error(err, errlen);
        break;
    case SL_UDF_AGG_MERGE: {
        PyObject *o = acc_load(other, s->acc_size);
        PyObject *lst = o ? PyList_New(1) : NULL;
        if (lst) {
            PyList_SET_ITEM(lst, 0, o); /* steals o */
            o = NULL;
            argv[2] = lst;
            r = PyObject_VectorcallMethod(nm_merge, argv, 3, NULL);
        }
        Py_XDECREF(o);
        Py_XDECREF(lst);
        rc = r ? acc_store(a, s, acc, err, errlen) : py_error(err, errlen);
        break;
    }
    default: { /* SL_UDF_AGG_VALUE */
        py_alloc al = {.arena = scratch};
        r = PyObject_VectorcallMethod(nm_get_value, argv, 2, NULL);
        if (!r) rc = py_error(err, errlen);
        else if (!scratch && (s->result == SL_T_STRING || s->result == SL_T_BYTES))
            rc = sl_seterr(err, errlen, "a string result has no memory here");
        else rc = from_py(r, s->resdt, &al, out, err, errlen);
        break;
    }
    }
done:
    Py_XDECREF(r);
    Py_XDECREF(a);
    py_leave();
    return rc;
}

static const sl_udf_host tm_python_host = {.resolve = py_resolve, .call = py_call,
                                           .call_table = py_call_table, .agg = py_agg,
                                           .bundle_begin = py_bundle_begin,
                                           .bundle_end = py_bundle_end};

void tm_python_register(void) { sl_udf_set_host(&tm_python_host); }
