/*
 * udf_guard.c -- catching crashes of C user functions (udf_guard.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "udf_guard.h"

_Thread_local sigjmp_buf *sl_udf_jmp__;
_Thread_local int sl_udf_stack_ready__;

static _Thread_local volatile sig_atomic_t fault_sig;
static _Thread_local void *volatile fault_addr;
static _Thread_local char fault_text[120];
static atomic_long crashes;

static const int guarded[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NGUARDED ((int)(sizeof guarded / sizeof guarded[0]))
static struct sigaction previous[NGUARDED];
static atomic_int installed;

#define ALT_STACK (64 * 1024)

static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;

/* The thread ends: off its alternate stack, then free it. */
static void stack_free(void *p)
{
    stack_t ss = {.ss_flags = SS_DISABLE};
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == p) sigaltstack(&ss, NULL);
    free(p);
}

static void stack_key_make(void) { pthread_key_create(&stack_key, stack_free); }

void sl_udf_guard_thread__(void)
{
    sl_udf_stack_ready__ = 1;
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return; /* has one */
    pthread_once(&stack_once, stack_key_make);
    void *mem = malloc(ALT_STACK);
    if (!mem) return;
    stack_t ss = {.ss_sp = mem, .ss_size = ALT_STACK};
    if (sigaltstack(&ss, NULL) != 0) {
        free(mem);
        return;
    }
    pthread_setspecific(stack_key, mem);
}

static int slot_of(int sig)
{
    for (int i = 0; i < NGUARDED; i++)
        if (guarded[i] == sig) return i;
    return -1;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    sigjmp_buf *jb = sl_udf_jmp__;
    if (jb) {
        sl_udf_jmp__ = NULL;
        fault_sig = sig;
        fault_addr = si ? si->si_addr : NULL;
        siglongjmp(*jb, 1);
    }
    /* not inside a user function: as before the guard existed */
    int i = slot_of(sig);
    if (i >= 0 && (previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_sigaction) {
        previous[i].sa_sigaction(sig, si, uc);
        return;
    }
    if (i >= 0 && previous[i].sa_handler != SIG_DFL && previous[i].sa_handler != SIG_IGN &&
        !(previous[i].sa_flags & SA_SIGINFO)) {
        previous[i].sa_handler(sig);
        return;
    }
    /* the default action: reinstate it; the faulting instruction runs again
     * (or abort() raises again) and the process dies as it would have */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (sig == SIGABRT || (si && si->si_code <= 0)) raise(sig); /* sent, not a fault */
}

void sl_udf_guard_install(void)
{
    if (atomic_exchange(&installed, 1)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NGUARDED; i++) sigaction(guarded[i], &sa, &previous[i]);
}

static const char *what(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV, an invalid memory access";
    case SIGBUS: return "SIGBUS, a bus error";
    case SIGFPE: return "SIGFPE, an arithmetic fault such as an integer division by zero";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGABRT: return "SIGABRT, abort()";
    default: return "a signal";
    }
}

void sl_udf_recovered__(void)
{
    /* SA_NODEFER left the signal unblocked; make sure of it all the same */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, fault_sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    if (fault_sig == SIGABRT)
        snprintf(fault_text, sizeof fault_text, "crashed (%s)", what(fault_sig));
    else
        snprintf(fault_text, sizeof fault_text, "crashed (%s at %p)", what(fault_sig),
                 (void *)fault_addr);
    long n = atomic_fetch_add(&crashes, 1) + 1;
    sl_warn("udf", "a user function %s; this TaskManager is tainted (%ld crash%s caught): its "
            "memory may be damaged, restart it when convenient", fault_text, n, n == 1 ? "" : "es");
}

long sl_udf_crashes(void) { return atomic_load(&crashes); }

const char *sl_udf_crash_text(void) { return fault_text; }
