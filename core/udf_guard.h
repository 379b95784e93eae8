/*
 * udf_guard.h -- a crash inside a C user function (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT raised by its code) becomes that call's failure instead
 * of the TaskManager's death: the task fails naming the function and the
 * row, and the process lives on, marked tainted.
 *
 * How: each call runs under SL_UDF_CALL, which sigsetjmp()s (without
 * saving the signal mask: no system call per call) and points the thread's
 * sl_udf_jmp__ at the buffer. The handlers (sl_udf_guard_install, once at
 * TaskManager start-up) run on the thread's alternate signal stack (so a
 * stack overflow in the function is caught too) and siglongjmp() back when
 * the thread is inside a call; otherwise they restore the previous
 * disposition and let the signal do what it did before (the process dies,
 * or a sanitizer reports).
 *
 * The trade-off: the function may have died holding a lock (malloc's, its
 * own) or having written over memory it does not own. The TaskManager
 * counts such crashes (sl_udf_crashes, logged and shown as "tainted"); its
 * other tasks go on, and a later deadlock or corruption is possible. The
 * alternative -- dying at once -- loses every other task of the process
 * and tells the JobManager only "TaskManager lost"; reporting the function
 * and row first is worth the risk, and an operator restarts a tainted
 * TaskManager at leisure.
 */
#ifndef SL_UDF_GUARD_H
#define SL_UDF_GUARD_H

#include <setjmp.h>
#include <stddef.h>

extern _Thread_local sigjmp_buf *sl_udf_jmp__; /* inside a guarded call */
extern _Thread_local int sl_udf_stack_ready__; /* this thread has its alternate stack */

void sl_udf_guard_thread__(void);
void sl_udf_recovered__(void);

/* Install the handlers (process-wide, once; the TaskManager's main). */
void sl_udf_guard_install(void);

/* Crashes caught in this process so far (> 0: it is tainted). */
long sl_udf_crashes(void);

/* This thread's last caught crash as text: "SIGSEGV (invalid memory
 * access at 0x10)". */
const char *sl_udf_crash_text(void);

/* Run statement `stmt` (a call into user code) guarded; `crashed` (an int)
 * is set to 1 when it crashed. Guards nest (a table function's emit runs
 * downstream operators; sl_udf_unguard clears the guard around them). */
#define SL_UDF_CALL(crashed, stmt)                                                                \
    do {                                                                                          \
        sigjmp_buf sl_jb__;                                                                       \
        sigjmp_buf *volatile sl_prev__ = sl_udf_jmp__;                                            \
        if (__builtin_expect(!sl_udf_stack_ready__, 0)) sl_udf_guard_thread__();                  \
        if (sigsetjmp(sl_jb__, 0) == 0) {                                                         \
            sl_udf_jmp__ = &sl_jb__;                                                              \
            stmt;                                                                                 \
            sl_udf_jmp__ = sl_prev__;                                                             \
            (crashed) = 0;                                                                        \
        } else {                                                                                  \
            sl_udf_jmp__ = sl_prev__;                                                             \
            sl_udf_recovered__();                                                                 \
            (crashed) = 1;                                                                        \
        }                                                                                         \
    } while (0)

/* Leave the guard while the host's own code runs inside a call (emit), and
 * come back to it. */
static inline sigjmp_buf *sl_udf_unguard(void)
{
    sigjmp_buf *p = sl_udf_jmp__;
    sl_udf_jmp__ = NULL;
    return p;
}

static inline void sl_udf_reguard(sigjmp_buf *p) { sl_udf_jmp__ = p; }

#endif
