/* Unit tests for the control protocol's framing (core/frame.c). */
#include <event2/buffer.h>

#include "sl_test.h"
#include "frame.h"

static Sluice__Envelope *roundtrip(struct evbuffer *b)
{
    Sluice__Envelope *out = NULL;
    char err[128];
    if (sl_frame_pull(b, &out, err, sizeof err) != SL_OK) return NULL;
    return out;
}

static void test_roundtrip_and_partial_frames(void)
{
    struct evbuffer *b = evbuffer_new();
    Sluice__Hello h = SLUICE__HELLO__INIT;
    h.version = SL_PROTOCOL_VERSION;
    h.role = "taskmanager";
    h.peer_id = "tm-1";
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    sl_frame_push(b, &env);
    sl_frame_push(b, &env);
    size_t total = evbuffer_get_length(b);
    /* feed a second buffer byte by byte: no frame until the last byte */
    struct evbuffer *c = evbuffer_new();
    unsigned char *all = evbuffer_pullup(b, -1);
    size_t one = total / 2;
    for (size_t i = 0; i < one; i++) {
        Sluice__Envelope *out = NULL;
        CHECK_EQ_INT(sl_frame_pull(c, &out, NULL, 0), SL_AGAIN);
        evbuffer_add(c, all + i, 1);
    }
    Sluice__Envelope *got = roundtrip(c);
    CHECK(got != NULL);
    CHECK_EQ_INT(got->msg_case, SLUICE__ENVELOPE__MSG_HELLO);
    CHECK_EQ_INT(got->hello->version, SL_PROTOCOL_VERSION);
    CHECK_EQ_STR(got->hello->role, "taskmanager");
    CHECK_EQ_STR(got->hello->peer_id, "tm-1");
    sluice__envelope__free_unpacked(got, NULL);
    CHECK_EQ_INT(evbuffer_get_length(c), 0);
    evbuffer_drain(b, one);
    got = roundtrip(b);
    CHECK(got != NULL && got->msg_case == SLUICE__ENVELOPE__MSG_HELLO);
    sluice__envelope__free_unpacked(got, NULL);
    evbuffer_free(b);
    evbuffer_free(c);
}

static int pull_error(const unsigned char *bytes, size_t n, const char *needle)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, bytes, n);
    Sluice__Envelope *out = NULL;
    char err[160] = "";
    int rc = sl_frame_pull(b, &out, err, sizeof err);
    evbuffer_free(b);
    if (out) sluice__envelope__free_unpacked(out, NULL);
    if (rc != SL_ERR || !strstr(err, needle)) {
        fprintf(stderr, "rc %d, err '%s', wanted '%s'\n", rc, err, needle);
        return 0;
    }
    return 1;
}

static void test_bad_frames_are_errors(void)
{
    static const unsigned char zero[] = {0, 0, 0, 0};
    static const unsigned char huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3};
    static const unsigned char garbage[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};
    static const unsigned char empty_msg[] = {0, 0, 0, 3, 0xa0, 0x01, 0x00}; /* only an unknown field 20 */
    CHECK(pull_error(zero, sizeof zero, "bad frame length 0"));
    CHECK(pull_error(huge, sizeof huge, "bad frame length 4294967295"));
    CHECK(pull_error(garbage, sizeof garbage, "does not decode"));
    CHECK(pull_error(empty_msg, sizeof empty_msg, "no known message"));
}

/* Before a peer has proven itself a frame may be at most
 * SL_MAX_PREAUTH_FRAME_BYTES (65536): a length of 65537 is refused from its
 * four bytes alone, with nothing of the body waited for; 65536 is waited for. */
static void test_preauth_bound(void)
{
    CHECK_EQ_INT(SL_MAX_PREAUTH_FRAME_BYTES, 65536);
    struct evbuffer *b = evbuffer_new();
    static const unsigned char over[] = {0, 1, 0, 1}; /* 65537 */
    static const unsigned char at[] = {0, 1, 0, 0};   /* 65536 */
    static const unsigned char big[] = {0, 0xff, 0xff, 0xff}; /* 16 MiB - 1 */
    Sluice__Envelope *out = NULL;
    char err[160] = "";
    evbuffer_add(b, over, sizeof over);
    CHECK_EQ_INT(sl_frame_pull_max(b, SL_MAX_PREAUTH_FRAME_BYTES, &out, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "bad frame length 65537 (allowed 1..65536 before the peer has proven itself)");
    CHECK(out == NULL);
    /* the full bound still lets it wait for the body */
    CHECK_EQ_INT(sl_frame_pull(b, &out, err, sizeof err), SL_AGAIN);
    evbuffer_drain(b, evbuffer_get_length(b));
    evbuffer_add(b, at, sizeof at);
    CHECK_EQ_INT(sl_frame_pull_max(b, SL_MAX_PREAUTH_FRAME_BYTES, &out, err, sizeof err), SL_AGAIN);
    evbuffer_drain(b, evbuffer_get_length(b));
    evbuffer_add(b, big, sizeof big);
    CHECK_EQ_INT(sl_frame_pull_max(b, SL_MAX_PREAUTH_FRAME_BYTES, &out, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "bad frame length 16777215 (allowed 1..65536 before the peer has proven itself)");
    CHECK_EQ_INT(sl_frame_pull(b, &out, err, sizeof err), SL_AGAIN);
    /* a whole Hello passes under the bound */
    evbuffer_drain(b, evbuffer_get_length(b));
    Sluice__Hello h = SLUICE__HELLO__INIT;
    h.version = SL_PROTOCOL_VERSION;
    h.role = "taskmanager";
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    sl_frame_push(b, &env);
    CHECK_EQ_INT(sl_frame_pull_max(b, SL_MAX_PREAUTH_FRAME_BYTES, &out, err, sizeof err), SL_OK);
    CHECK(out != NULL && out->msg_case == SLUICE__ENVELOPE__MSG_HELLO);
    if (out) sluice__envelope__free_unpacked(out, NULL);
    evbuffer_free(b);
}

static void test_random_bytes_never_crash(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 2000; round++) {
        unsigned char buf[64];
        size_t n = 4 + (size_t)(round % 60);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            buf[i] = (unsigned char)x;
        }
        buf[0] = 0; /* keep lengths small so some frames are complete */
        buf[1] = 0;
        struct evbuffer *b = evbuffer_new();
        evbuffer_add(b, buf, n);
        Sluice__Envelope *out = NULL;
        int rc = sl_frame_pull(b, &out, NULL, 0);
        CHECK(rc == SL_OK || rc == SL_AGAIN || rc == SL_ERR);
        if (out) sluice__envelope__free_unpacked(out, NULL);
        evbuffer_free(b);
    }
}

SL_TEST_MAIN(SL_TEST(test_roundtrip_and_partial_frames), SL_TEST(test_bad_frames_are_errors),
             SL_TEST(test_preauth_bound),
             SL_TEST(test_random_bytes_never_crash))
