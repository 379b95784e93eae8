/*
 * test_jm.c -- the JobManager's exponential-delay backoff, its op queue, and
 * the Java-serialized failure cause Flink's client reads.
 *
 * The backoff figures below are worked out by hand from Flink's definition
 * (initial, times the multiplier each restart, capped; start over after the
 * reset threshold). The op queue test runs a loop on this thread and a
 * REST-like caller on another, then closes the queue and checks that later
 * callers are refused instead of waiting.
 */
#include <pthread.h>
#include <string.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "jm.h"
#include "sl_test.h"

static void exp_config(jm *j, jm_job *job, int64_t initial, int64_t max, double mult,
                       double jitter, int64_t reset, int attempts)
{
    memset(j, 0, sizeof *j);
    memset(job, 0, sizeof *job);
    job->set.restart_type = JM_RESTART_EXPONENTIAL;
    job->set.exp_initial_ms = initial;
    job->set.exp_max_ms = max;
    job->set.exp_multiplier = mult;
    job->set.exp_jitter = jitter;
    job->set.exp_reset_ms = reset;
    job->set.restart_attempts = attempts;
}

static void test_backoff_grows_to_the_maximum_then_runs_out(void)
{
    jm j;
    jm_job job;
    exp_config(&j, &job, 100, 1000, 2.0, 0, 3600000, 6);
    static const int64_t want[] = {100, 200, 400, 800, 1000, 1000};
    int64_t now = 5000;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_EQ_INT(jm_restart_backoff(&j, &job, now), want[i]);
        CHECK_EQ_INT(job.cycle_restarts, (int)i + 1);
        now += 10; /* failures close together: no reset */
    }
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, now), -1); /* the 7th restart is refused */
    CHECK_EQ_INT(job.cycle_restarts, 6);
}

static void test_backoff_with_a_fractional_multiplier(void)
{
    jm j;
    jm_job job;
    exp_config(&j, &job, 1000, 60000, 1.5, 0, 3600000, 100);
    static const int64_t want[] = {1000, 1500, 2250, 3375, 5062, 7593};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_EQ_INT(jm_restart_backoff(&j, &job, 100 + (int64_t)i), want[i]);
}

static void test_backoff_starts_over_after_the_threshold(void)
{
    jm j;
    jm_job job;
    exp_config(&j, &job, 100, 10000, 2.0, 0, 500, 3);
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 1000), 100);
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 1200), 200);  /* 200 ms later: grows */
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 1699), 400);  /* 499 ms: still grows */
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 1700), -1);   /* 3 attempts used */
    /* 500 ms without a failure since the last one: initial backoff, fresh count */
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 2200), 100);
    CHECK_EQ_INT(job.cycle_restarts, 1);
    CHECK_EQ_INT(jm_restart_backoff(&j, &job, 2300), 200);
}

static void test_backoff_jitter_stays_within_its_share(void)
{
    jm j;
    jm_job job;
    exp_config(&j, &job, 1000, 1000, 1.0, 0.25, 3600000, 1000000);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 500; i++) {
        int64_t d = jm_restart_backoff(&j, &job, 1000 + i);
        CHECK(d >= 750 && d <= 1250);
        CHECK_EQ_INT(job.backoff_ms, 1000); /* jitter never feeds back into the backoff */
        if (d < lo) lo = d;
        if (d > hi) hi = d;
    }
    CHECK(lo < 900 && hi > 1100); /* it does vary: 500 draws all within 100 ms are not random */
}

/* ---- op queue ------------------------------------------------------------ */

typedef struct caller {
    jm *j;
    jm_op op;
    int rc;
} caller;

static void *call_thread(void *arg)
{
    caller *c = arg;
    memset(&c->op, 0, sizeof c->op);
    c->op.qm.type = JM_OP_CP_WRITTEN; /* for no job: the loop runs it and finds nothing to do */
    snprintf(c->op.u.written.job_id, sizeof c->op.u.written.job_id, "%s", "no-such-job");
    c->rc = jm_op_call(c->j, &c->op);
    return NULL;
}

static void test_op_queue_answers_then_refuses_after_close(void)
{
    evthread_use_pthreads();
    jm j;
    memset(&j, 0, sizeof j);
    j.base = event_base_new();
    j.loop_thread = pthread_self();
    CHECK(j.base && jm_ops_init(&j) == SL_OK);
    CHECK(jm_on_loop(&j));

    caller c = {.j = &j, .rc = 99};
    pthread_t t;
    pthread_create(&t, NULL, call_thread, &c);
    /* the loop: runs until the op event fires (the caller's post wakes it) */
    while (!__atomic_load_n(&c.op.qm.done, __ATOMIC_ACQUIRE))
        event_base_loop(j.base, EVLOOP_ONCE);
    pthread_join(t, NULL);
    CHECK_EQ_INT(c.rc, SL_OK);
    CHECK_EQ_INT(c.op.qm.done, 1);

    /* the loop has stopped: a caller is answered at once, a post is dropped */
    jm_ops_close(&j);
    caller c2 = {.j = &j, .rc = 99};
    pthread_create(&t, NULL, call_thread, &c2);
    pthread_join(t, NULL);
    CHECK_EQ_INT(c2.rc, SL_ERR);
    jm_op *posted = sl_calloc(1, sizeof *posted);
    posted->qm.type = JM_OP_CP_WRITTEN;
    jm_op_post(&j, posted); /* freed, not queued (LeakSanitizer would say otherwise) */
    CHECK(sl_queue_len(j.ops) == 0);
    jm_ops_destroy(&j);
    event_base_free(j.base);
}

/* The serialized-throwable of a failure-cause, byte for byte what Java 17's
 * ObjectOutputStream writes for a Flink 2.3 SerializedThrowable with the
 * same three strings, no cause, no stack frames and no serialized original
 * (produced once with the JDK and Flink's flink-dist jar). */
static void test_serialized_throwable_matches_java(void)
{
    static const char want[] =
        "rO0ABXNyAClvcmcuYXBhY2hlLmZsaW5rLnV0aWwuU2VyaWFsaXplZFRocm93YWJsZWUWnfUfpxPzAgADTAAZZnVs"
        "bFN0cmluZ2lmaWVkU3RhY2tUcmFjZXQAEkxqYXZhL2xhbmcvU3RyaW5nO0wAFm9yaWdpbmFsRXJyb3JDbGFzc05h"
        "bWVxAH4AAVsAE3NlcmlhbGl6ZWRFeGNlcHRpb250AAJbQnhyABNqYXZhLmxhbmcuRXhjZXB0aW9u0P0fPho7HMQC"
        "AAB4cgATamF2YS5sYW5nLlRocm93YWJsZdXGNSc5d7jLAwAETAAFY2F1c2V0ABVMamF2YS9sYW5nL1Rocm93YWJs"
        "ZTtMAA1kZXRhaWxNZXNzYWdlcQB+AAFbAApzdGFja1RyYWNldAAeW0xqYXZhL2xhbmcvU3RhY2tUcmFjZUVsZW1l"
        "bnQ7TAAUc3VwcHJlc3NlZEV4Y2VwdGlvbnN0ABBMamF2YS91dGlsL0xpc3Q7eHBwdAAaamF2YS5sYW5nLkV4Y2Vw"
        "dGlvbjogQE1TR0B1cgAeW0xqYXZhLmxhbmcuU3RhY2tUcmFjZUVsZW1lbnQ7AkYqPDz9IjkCAAB4cAAAAABzcgAf"
        "amF2YS51dGlsLkNvbGxlY3Rpb25zJEVtcHR5TGlzdHq4F7Q8p57eAgAAeHB4dAAFQFRSQ0B0AAVAQ0xTQHA=";
    char *got = jm_throwable_b64("@CLS@", "java.lang.Exception: @MSG@", "@TRC@");
    CHECK_EQ_STR(got, want);
    free(got);
    /* outside bytes cannot break the stream: each becomes '?' */
    char *odd = jm_throwable_b64("c", "caf\xc3\xa9\x01", "t");
    char *plain = jm_throwable_b64("c", "caf???", "t");
    CHECK_EQ_STR(odd, plain);
    free(odd);
    free(plain);
}

SL_TEST_MAIN(SL_TEST(test_backoff_grows_to_the_maximum_then_runs_out),
             SL_TEST(test_backoff_with_a_fractional_multiplier),
             SL_TEST(test_backoff_starts_over_after_the_threshold),
             SL_TEST(test_backoff_jitter_stays_within_its_share),
             SL_TEST(test_op_queue_answers_then_refuses_after_close),
             SL_TEST(test_serialized_throwable_matches_java))
