/*
 * test_sampler.c -- unit tests for lib/stack_sample.c: two threads, one
 * spinning in a static function and one asleep in another, are sampled;
 * every sample of the first is on CPU with that function named (libdw
 * reads .symtab: dladdr could not name a static function), every sample
 * of the second off CPU with its function named; a thread that is gone is
 * skipped, not waited for. And sl_sleep_ms sleeps its whole time while
 * the sampler interrupts it every millisecond (a bare nanosleep would end
 * at the first signal).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stack_sample.h"
#include "sl_test.h"

static atomic_int stop;
static atomic_int tid_spin, tid_sleep;

static __attribute__((noinline)) unsigned long spin_in_test_sampler(void)
{
    volatile unsigned long x = 0;
    while (!atomic_load(&stop)) x++;
    return x;
}

static __attribute__((noinline)) void sleep_in_test_sampler(void)
{
    while (!atomic_load(&stop)) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void *spinner(void *arg)
{
    (void)arg;
    atomic_store(&tid_spin, (int)sl_stack_self());
    spin_in_test_sampler();
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    atomic_store(&tid_sleep, (int)sl_stack_self());
    sleep_in_test_sampler();
    return NULL;
}

/* How many samples on CPU (oncpu 1: state R), off it (0) or either (-1)
 * name fn, and *total of them. */
static int count_named(json_t *res, const char *fn, int oncpu, int *total)
{
    int named = 0;
    *total = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(res, "samples"), i, s) {
        int on = !strcmp(json_string_value(json_object_get(s, "state")), "R");
        int c = (int)json_integer_value(json_object_get(s, "count"));
        if (oncpu >= 0 && on != oncpu) continue;
        *total += c;
        size_t k;
        json_t *f;
        json_array_foreach(json_object_get(s, "frames"), k, f)
            if (!strcmp(json_string_value(f), fn)) {
                named += c;
                break;
            }
    }
    return named;
}

static void test_on_and_off_cpu(void)
{
    char err[300];
    CHECK(sl_stack_init(err, sizeof err) == SL_OK);
    pthread_t a, b;
    atomic_store(&stop, 0);
    CHECK(pthread_create(&a, NULL, spinner, NULL) == 0);
    CHECK(pthread_create(&b, NULL, sleeper, NULL) == 0);
    while (!atomic_load(&tid_spin) || !atomic_load(&tid_sleep)) usleep(1000);

    pid_t one[1] = {atomic_load(&tid_spin)};
    json_t *res = sl_stack_sample(one, 1, 20, 5, 100, NULL, err, sizeof err);
    CHECK(res != NULL);
    int total, named = count_named(res, "spin_in_test_sampler", 1, &total);
    /* on a loaded machine the spinner may be runnable-but-waiting (still R) */
    CHECK(total >= 15);
    CHECK_EQ_INT(named, total);
    /* outermost first: the thread's start routine before the spinning */
    json_t *s0 = json_array_get(json_object_get(res, "samples"), 0);
    json_t *fr = json_object_get(s0, "frames");
    CHECK(!strcmp(json_string_value(json_array_get(fr, json_array_size(fr) - 1)),
                  "spin_in_test_sampler"));
    json_decref(res);

    pid_t other[1] = {atomic_load(&tid_sleep)};
    res = sl_stack_sample(other, 1, 20, 10, 100, NULL, err, sizeof err);
    CHECK(res != NULL);
    named = count_named(res, "sleep_in_test_sampler", -1, &total);
    CHECK_EQ_INT(total, 20);
    CHECK_EQ_INT(named, total);
    /* mostly asleep (the sample's own signal wakes it for a moment) */
    count_named(res, "sleep_in_test_sampler", 0, &total);
    CHECK(total >= 10);
    json_decref(res);

    /* the depth bound keeps the innermost frames */
    res = sl_stack_sample(one, 1, 3, 1, 1, NULL, err, sizeof err);
    CHECK(res != NULL);
    json_t *s;
    size_t i;
    json_array_foreach(json_object_get(res, "samples"), i, s)
        CHECK_EQ_INT((int)json_array_size(json_object_get(s, "frames")), 1);
    json_decref(res);

    atomic_store(&stop, 1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);

    /* gone: skipped at once */
    int64_t t0 = sl_mono_ms();
    res = sl_stack_sample(one, 1, 5, 1, 100, NULL, err, sizeof err);
    CHECK(res != NULL);
    CHECK_EQ_INT((int)json_array_size(json_object_get(res, "samples")), 0);
    CHECK(sl_mono_ms() - t0 < 1000);
    json_decref(res);

    CHECK(sl_stack_sample(one, 1, 0, 1, 100, NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, "bad sampling request") != NULL);
}

static atomic_int tid_napper, napped_ms;

static void *napper(void *arg)
{
    (void)arg;
    atomic_store(&tid_napper, (int)sl_stack_self());
    int64_t t0 = sl_mono_ms();
    sl_sleep_ms(300);
    atomic_store(&napped_ms, (int)(sl_mono_ms() - t0));
    return NULL;
}

static void test_sleep_is_whole_under_sampling(void)
{
    char err[300];
    pthread_t t;
    atomic_store(&napped_ms, -1);
    CHECK(pthread_create(&t, NULL, napper, NULL) == 0);
    while (!atomic_load(&tid_napper)) usleep(1000);
    pid_t one[1] = {atomic_load(&tid_napper)};
    int signalled = 0;
    while (atomic_load(&napped_ms) < 0) { /* until it wakes: 1 ms apart */
        json_t *res = sl_stack_sample(one, 1, 10, 1, 8, NULL, err, sizeof err);
        CHECK(res != NULL);
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(res, "samples"), i, x)
            signalled += (int)json_integer_value(json_object_get(x, "count"));
        json_decref(res);
    }
    pthread_join(t, NULL);
    CHECK(signalled >= 20); /* it was interrupted, many times */
    CHECK(atomic_load(&napped_ms) >= 300);
}

SL_TEST_MAIN(SL_TEST(test_on_and_off_cpu), SL_TEST(test_sleep_is_whole_under_sampling))
