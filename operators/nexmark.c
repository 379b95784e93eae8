/*
 * nexmark.c -- the `nexmark` source: the persons, auctions and bids of the
 * Nexmark benchmark, generated with the rules of the Nexmark generator
 * (Beam's and Flink's nexmark), deterministic from a seed.
 *
 * Options (Flink's nexmark connector names where it has one):
 *   first-event.rate     events per second of event time (default 10000000)
 *   next-event.rate      accepted when equal to first-event.rate: the rate
 *                        is constant here (no rate shapes)
 *   events.num           events in all (default 0: unbounded)
 *   person.proportion    1   \  out of every 1+3+46 = 50 consecutive events,
 *   auction.proportion   3    > the first is a person, the next three are
 *   bid.proportion       46  /  auctions, the rest bids
 *   person.avg-size      200 \  bytes an event aims at; the `extra` column
 *   auction.avg-size     500  > pads it (+-20 %)
 *   bid.avg-size         100 /
 *   base-time            event time of event 0, epoch ms (default
 *                        2026-01-01 00:00:00 UTC, so runs are reproducible)
 *   seed                 the random streams (default 0)
 *
 * Event n (0-based) happens at base-time + n * 1e6 / rate microseconds. Its
 * kind comes from n modulo the proportions' sum. Person ids are 1000 + the
 * number of persons before it, auction ids 1000 + the number of auctions
 * before it. An auction's seller is a hot seller (a multiple of 100 below
 * the newest person) three times in four, else one of the 1000 most recent
 * persons (or up to 10 ids ahead); it expires within twice the event time
 * that 100 auctions take. A bid is on a hot auction (a multiple of 100
 * below the newest auction) one time in two, else on one of the 100 most
 * recent auctions (or up to 10 ahead); its bidder is a hot bidder (a
 * multiple of 100 plus 1) three times in four; its price is 100 * 10^(6u)
 * cents-rounded for a uniform u, as its auction's initial bid and reserve
 * increment are; its channel is one of four hot channels one time in two,
 * else one of 10000 "channel-<k>" with a URL made from k (one in ten with
 * a channel_id parameter). Strings are the generator's: lowercase words
 * with spaces, names, e-mail addresses, credit card numbers, US cities and
 * states. Each event draws from its own splitmix64 stream seeded from
 * (seed, n), so an event's values depend on nothing but n, whichever
 * subtask makes it.
 *
 * Columns. Sluice's SQL has no ROW type yet, so the one table holds every
 * kind flat: event_type INT (0 person, 1 auction, 2 bid), dateTime
 * TIMESTAMP(3) (the event's time, whatever its kind) and the fields of each
 * kind prefixed by it: person_id, person_name, person_emailAddress,
 * person_creditCard, person_city, person_state, person_extra; auction_id,
 * auction_itemName, auction_description, auction_initialBid,
 * auction_reserve, auction_expires, auction_seller, auction_category,
 * auction_extra; bid_auction, bid_bidder, bid_price, bid_channel, bid_url,
 * bid_extra. A kind's columns are NULL on the other kinds' rows. The
 * declared schema may hold any subset of them in any order (names compared
 * without case); plan() refuses an unknown name or a wrong type.
 *
 * Subtasks: subtask i of p makes events i, i + p, i + 2p, ... (so each
 * subtask's event time only grows), as fast as downstream takes them (at
 * most 1024 per run()); no allocation per event.
 *
 * Checkpoints: a subtask's state is its shares, each (next event, stride);
 * a fresh subtask has one (i, p). Restored at another parallelism the blobs
 * are dealt round-robin and a subtask serves all the shares it got, one
 * batch from each in turn; one that got none ends at once. The union of the
 * events made is the same as without the restore.
 *
 * Blob format (little-endian), version 1: u8 version, "SLNX", u32 nshares,
 * nshares x { u64 next, u64 stride }, u64 FNV-1a of all before it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "operator.h"
#include "blob.h"
#include "splitmix.h"

#define NX_BATCH 1024
#define NX_FIRST_PERSON_ID 1000
#define NX_FIRST_AUCTION_ID 1000
#define NX_FIRST_CATEGORY_ID 10
#define NX_NUM_CATEGORIES 5
#define NX_PERSON_ID_LEAD 10
#define NX_AUCTION_ID_LEAD 10
#define NX_HOT_RATIO_100 100
#define NX_HOT_AUCTION_RATIO 2
#define NX_HOT_SELLER_RATIO 4
#define NX_HOT_BIDDER_RATIO 4
#define NX_HOT_CHANNEL_RATIO 2
#define NX_CHANNELS 10000
#define NX_ACTIVE_PEOPLE 1000
#define NX_IN_FLIGHT_AUCTIONS 100
#define NX_STRBUF 8192

/* The columns the source knows. */
typedef enum {
    F_EVENT_TYPE, F_DATETIME,
    F_P_ID, F_P_NAME, F_P_EMAIL, F_P_CARD, F_P_CITY, F_P_STATE, F_P_EXTRA,
    F_A_ID, F_A_ITEM, F_A_DESC, F_A_INITIAL, F_A_RESERVE, F_A_EXPIRES, F_A_SELLER,
    F_A_CATEGORY, F_A_EXTRA,
    F_B_AUCTION, F_B_BIDDER, F_B_PRICE, F_B_CHANNEL, F_B_URL, F_B_EXTRA,
    F_COUNT
} nx_field;

static const struct {
    const char *name;
    sl_type type;
    int kind; /* -1: every kind */
} nx_cols[F_COUNT] = {
    {"event_type", SL_T_INT, -1},          {"dateTime", SL_T_TIMESTAMP, -1},
    {"person_id", SL_T_BIGINT, 0},         {"person_name", SL_T_STRING, 0},
    {"person_emailAddress", SL_T_STRING, 0}, {"person_creditCard", SL_T_STRING, 0},
    {"person_city", SL_T_STRING, 0},       {"person_state", SL_T_STRING, 0},
    {"person_extra", SL_T_STRING, 0},      {"auction_id", SL_T_BIGINT, 1},
    {"auction_itemName", SL_T_STRING, 1},  {"auction_description", SL_T_STRING, 1},
    {"auction_initialBid", SL_T_BIGINT, 1}, {"auction_reserve", SL_T_BIGINT, 1},
    {"auction_expires", SL_T_TIMESTAMP, 1}, {"auction_seller", SL_T_BIGINT, 1},
    {"auction_category", SL_T_BIGINT, 1},  {"auction_extra", SL_T_STRING, 1},
    {"bid_auction", SL_T_BIGINT, 2},       {"bid_bidder", SL_T_BIGINT, 2},
    {"bid_price", SL_T_BIGINT, 2},         {"bid_channel", SL_T_STRING, 2},
    {"bid_url", SL_T_STRING, 2},           {"bid_extra", SL_T_STRING, 2},
};

typedef struct nx_plan {
    int n;              /* declared columns */
    int *col;           /* per declared column: its nx_field */
    double delay_us;    /* between two events */
    uint64_t events;    /* 0: unbounded */
    uint64_t pp, ap, bp, total;
    int64_t avg_person, avg_auction, avg_bid;
    int64_t base_time;
    uint64_t seed;
} nx_plan;

typedef struct nx_share {
    uint64_t next, stride;
} nx_share;

typedef struct nx_state {
    nx_share *shares;
    int nshares, cur;
    sl_value *vals;
    sl_value ev[F_COUNT]; /* the event being made, by field */
    char *strbuf;
} nx_state;

/* ---- plan ------------------------------------------------------------- */

static void nx_plan_free(void *p)
{
    nx_plan *pl = p;
    if (!pl) return;
    free(pl->col);
    free(pl);
}

static int conf_pos(const sl_plan_ctx *pc, const char *key, int64_t min, int64_t *out,
                    char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    *out = sl_plan_opt_int(pc, key);
    if (*out < min)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be at least %lld, not %lld",
                         v->id, key, (long long)min, (long long)*out);
    return SL_OK;
}

static void *nx_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *decl = &v->declared;
    if (decl->n == 0) {
        sl_seterr(err, errlen, "vertex '%s': nexmark needs a 'schema' with at least one column "
                  "(event_type, dateTime, person_*, auction_*, bid_*)", v->id);
        return NULL;
    }
    nx_plan *pl = sl_calloc(1, sizeof *pl);
    pl->n = decl->n;
    pl->col = sl_calloc((size_t)decl->n, sizeof *pl->col);
    for (int i = 0; i < decl->n; i++) {
        const sl_field *f = &decl->fields[i];
        int k = 0;
        while (k < F_COUNT && strcasecmp(nx_cols[k].name, f->name)) k++;
        if (k == F_COUNT) {
            sl_seterr(err, errlen, "vertex '%s': column '%s' is not a nexmark field (event_type, "
                      "dateTime, person_{id,name,emailAddress,creditCard,city,state,extra}, "
                      "auction_{id,itemName,description,initialBid,reserve,expires,seller,"
                      "category,extra}, bid_{auction,bidder,price,channel,url,extra})", v->id,
                      f->name);
            goto fail;
        }
        if (f->type != nx_cols[k].type) {
            sl_seterr(err, errlen, "vertex '%s': column '%s' is %s, the nexmark field is %s",
                      v->id, f->name, sl_type_name(f->type), sl_type_name(nx_cols[k].type));
            goto fail;
        }
        pl->col[i] = k;
    }
    int64_t rate, next, events, pp, ap, bp, seed;
    if (conf_pos(pc, "first-event.rate", 1, &rate, err, errlen) ||
        conf_pos(pc, "next-event.rate", 0, &next, err, errlen) ||
        conf_pos(pc, "events.num", 0, &events, err, errlen) ||
        conf_pos(pc, "person.proportion", 0, &pp, err, errlen) ||
        conf_pos(pc, "auction.proportion", 0, &ap, err, errlen) ||
        conf_pos(pc, "bid.proportion", 0, &bp, err, errlen) ||
        conf_pos(pc, "person.avg-size", 0, &pl->avg_person, err, errlen) ||
        conf_pos(pc, "auction.avg-size", 0, &pl->avg_auction, err, errlen) ||
        conf_pos(pc, "bid.avg-size", 0, &pl->avg_bid, err, errlen) ||
        0)
        goto fail;
    pl->base_time = sl_plan_opt_int(pc, "base-time");
    seed = sl_plan_opt_int(pc, "seed");
    if (sl_plan_opt_isset(pc, "next-event.rate") && next != rate) {
        sl_seterr(err, errlen, "vertex '%s': option 'next-event.rate' (%lld) differs from "
                  "'first-event.rate' (%lld): Sluice's nexmark source has a constant rate",
                  v->id, (long long)next, (long long)rate);
        goto fail;
    }
    if (pp < 1 || ap < 1 || bp < 1) {
        sl_seterr(err, errlen, "vertex '%s': the person, auction and bid proportions must each "
                  "be at least 1", v->id);
        goto fail;
    }
    if (pl->avg_person > 2000 || pl->avg_auction > 2000 || pl->avg_bid > 2000) {
        sl_seterr(err, errlen, "vertex '%s': an average event size above 2000 bytes", v->id);
        goto fail;
    }
    pl->delay_us = 1e6 / (double)rate;
    pl->events = (uint64_t)events;
    pl->pp = (uint64_t)pp;
    pl->ap = (uint64_t)ap;
    pl->bp = (uint64_t)bp;
    pl->total = pl->pp + pl->ap + pl->bp;
    pl->seed = (uint64_t)seed;
    sl_schema_copy(pc->out, decl);
    return pl;
fail:
    nx_plan_free(pl);
    return NULL;
}

/* ---- randomness and the generator's rules ------------------------------- */

/* Uniform in [0, n), n > 0. */
static inline uint64_t below(uint64_t *s, uint64_t n)
{
    return sl_rng_below(s, n);
}

static inline double unit(uint64_t *s)
{
    return (double)(sl_rng_next(s) >> 11) * 0x1.0p-53;
}

int64_t sl_nexmark_timestamp(int64_t base_time, double delay_us, uint64_t n);
int64_t sl_nexmark_timestamp(int64_t base_time, double delay_us, uint64_t n)
{
    return base_time + (int64_t)((double)n * delay_us / 1000.0);
}

static uint64_t last_person(const nx_plan *pl, uint64_t id)
{
    uint64_t epoch = id / pl->total, off = id % pl->total;
    if (off >= pl->pp) off = pl->pp - 1;
    return epoch * pl->pp + off;
}

static uint64_t last_auction(const nx_plan *pl, uint64_t id)
{
    uint64_t epoch = id / pl->total, off = id % pl->total;
    if (off < pl->pp) {
        if (epoch == 0) return 0;
        epoch--;
        off = pl->ap - 1;
    } else if (off >= pl->pp + pl->ap) {
        off = pl->ap - 1;
    } else {
        off -= pl->pp;
    }
    return epoch * pl->ap + off;
}

static uint64_t next_person(const nx_plan *pl, uint64_t id, uint64_t *s)
{
    uint64_t num = last_person(pl, id) + 1;
    uint64_t active = num < NX_ACTIVE_PEOPLE ? num : NX_ACTIVE_PEOPLE;
    return num - active + below(s, active + NX_PERSON_ID_LEAD);
}

static uint64_t next_auction(const nx_plan *pl, uint64_t id, uint64_t *s)
{
    uint64_t max = last_auction(pl, id);
    uint64_t min = max > NX_IN_FLIGHT_AUCTIONS ? max - NX_IN_FLIGHT_AUCTIONS : 0;
    return min + below(s, max - min + 1 + NX_AUCTION_ID_LEAD);
}

static int64_t next_price(uint64_t *s)
{
    return (int64_t)llround(pow(10.0, unit(s) * 6.0) * 100.0);
}

/* Text appended at *sp; v points at it. */
static void put_text(sl_value *v, char **sp, const char *p, size_t n)
{
    memcpy(*sp, p, n);
    v->isnull = false;
    v->v.s.p = *sp;
    v->v.s.len = (uint32_t)n;
    *sp += n;
}

/* Up to max-1 lowercase letters with a space one time in 13, trimmed. */
static size_t next_string(uint64_t *s, char *out, int max)
{
    int len = 3 + (int)below(s, (uint64_t)(max - 3));
    for (int i = 0; i < len; i++) out[i] = below(s, 13) == 0 ? ' ' : (char)('a' + below(s, 26));
    int a = 0, b = len;
    while (a < b && out[a] == ' ') a++;
    while (b > a && out[b - 1] == ' ') b--;
    memmove(out, out + a, (size_t)(b - a));
    return (size_t)(b - a);
}

/* The padding that brings an event of `cur` bytes to about `avg`. */
static size_t next_extra(uint64_t *s, char *out, int64_t cur, int64_t avg)
{
    if (cur > avg) return 0;
    avg -= cur;
    int64_t delta = llround((double)avg * 0.2);
    int64_t size = avg - delta + (delta == 0 ? 0 : (int64_t)below(s, (uint64_t)(2 * delta)));
    for (int64_t i = 0; i < size; i++) out[i] = (char)('a' + below(s, 26));
    return (size_t)size;
}

static const char *const first_names[] = {"Peter", "Paul",  "Luke",  "John",   "Saul", "Vicky",
                                          "Kate",  "Julie", "Sarah", "Deiter", "Walter"};
static const char *const last_names[] = {"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                         "Walton", "Smith",  "Jones",   "Noris"};
static const char *const cities[] = {"Phoenix", "Los Angeles", "San Francisco", "Boise",
                                     "Portland", "Bend", "Redmond", "Seattle", "Kent",
                                     "Cheyenne"};
static const char *const states[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
static const char *const hot_channels[] = {"Google", "Facebook", "Baidu", "Apple"};
static const char *const hot_urls[] = {
    "https://www.nexmark.com/google/item.htm?query=1",
    "https://www.nexmark.com/facebook/item.htm?query=1",
    "https://www.nexmark.com/baidu/item.htm?query=1",
    "https://www.nexmark.com/apple/item.htm?query=1"};

static void put_const(sl_value *v, char **sp, const char *str)
{
    put_text(v, sp, str, strlen(str));
}

static void make_person(const nx_plan *pl, uint64_t id, uint64_t *s, sl_value *ev, char *sp)
{
    char tmp[64];
    ev[F_P_ID].isnull = false;
    ev[F_P_ID].v.i = (int64_t)(last_person(pl, id) + NX_FIRST_PERSON_ID);
    const char *fn = first_names[below(s, SL_ARRAY_LEN(first_names))];
    const char *ln = last_names[below(s, SL_ARRAY_LEN(last_names))];
    int n = snprintf(tmp, sizeof tmp, "%s %s", fn, ln);
    put_text(&ev[F_P_NAME], &sp, tmp, (size_t)n);
    size_t a = next_string(s, tmp, 7);
    tmp[a++] = '@';
    a += next_string(s, tmp + a, 5);
    memcpy(tmp + a, ".com", 4);
    put_text(&ev[F_P_EMAIL], &sp, tmp, a + 4);
    n = snprintf(tmp, sizeof tmp, "%04d %04d %04d %04d", (int)below(s, 10000),
                 (int)below(s, 10000), (int)below(s, 10000), (int)below(s, 10000));
    put_text(&ev[F_P_CARD], &sp, tmp, (size_t)n);
    put_const(&ev[F_P_CITY], &sp, cities[below(s, SL_ARRAY_LEN(cities))]);
    put_const(&ev[F_P_STATE], &sp, states[below(s, SL_ARRAY_LEN(states))]);
    int64_t cur = 8 + ev[F_P_NAME].v.s.len + ev[F_P_EMAIL].v.s.len + ev[F_P_CARD].v.s.len +
                  ev[F_P_CITY].v.s.len + ev[F_P_STATE].v.s.len;
    size_t x = next_extra(s, sp, cur, pl->avg_person);
    put_text(&ev[F_P_EXTRA], &sp, sp, x);
}

static void make_auction(const nx_plan *pl, uint64_t id, int64_t ts, uint64_t *s, sl_value *ev,
                         char *sp)
{
    char tmp[128];
    ev[F_A_ID].isnull = false;
    ev[F_A_ID].v.i = (int64_t)(last_auction(pl, id) + NX_FIRST_AUCTION_ID);
    uint64_t seller = below(s, NX_HOT_SELLER_RATIO) > 0
                          ? last_person(pl, id) / NX_HOT_RATIO_100 * NX_HOT_RATIO_100
                          : next_person(pl, id, s);
    int64_t category = NX_FIRST_CATEGORY_ID + (int64_t)below(s, NX_NUM_CATEGORIES);
    int64_t initial = next_price(s);
    /* expires within twice the event time NX_IN_FLIGHT_AUCTIONS auctions take */
    uint64_t ahead = NX_IN_FLIGHT_AUCTIONS * pl->total / pl->ap;
    int64_t horizon = sl_nexmark_timestamp(pl->base_time, pl->delay_us, id + ahead) - ts;
    int64_t expires = ts + 1 + (int64_t)below(s, (uint64_t)(horizon * 2 > 1 ? horizon * 2 : 1));
    int64_t reserve = initial + next_price(s);
    size_t n = next_string(s, tmp, 20);
    put_text(&ev[F_A_ITEM], &sp, tmp, n);
    n = next_string(s, tmp, 100);
    put_text(&ev[F_A_DESC], &sp, tmp, n);
    ev[F_A_INITIAL].isnull = ev[F_A_RESERVE].isnull = ev[F_A_EXPIRES].isnull = false;
    ev[F_A_SELLER].isnull = ev[F_A_CATEGORY].isnull = false;
    ev[F_A_INITIAL].v.i = initial;
    ev[F_A_RESERVE].v.i = reserve;
    ev[F_A_EXPIRES].v.i = expires;
    ev[F_A_SELLER].v.i = (int64_t)(seller + NX_FIRST_PERSON_ID);
    ev[F_A_CATEGORY].v.i = category;
    int64_t cur = 8 + ev[F_A_ITEM].v.s.len + ev[F_A_DESC].v.s.len + 8 + 8 + 8 + 8 + 8;
    size_t x = next_extra(s, sp, cur, pl->avg_auction);
    put_text(&ev[F_A_EXTRA], &sp, sp, x);
}

static void make_bid(const nx_plan *pl, uint64_t id, uint64_t *s, sl_value *ev, char *sp)
{
    char tmp[160];
    uint64_t auction = below(s, NX_HOT_AUCTION_RATIO) > 0
                           ? last_auction(pl, id) / NX_HOT_RATIO_100 * NX_HOT_RATIO_100
                           : next_auction(pl, id, s);
    uint64_t bidder = below(s, NX_HOT_BIDDER_RATIO) > 0
                          ? last_person(pl, id) / NX_HOT_RATIO_100 * NX_HOT_RATIO_100 + 1
                          : next_person(pl, id, s);
    int64_t price = next_price(s);
    if (below(s, NX_HOT_CHANNEL_RATIO) > 0) {
        uint64_t k = below(s, SL_ARRAY_LEN(hot_channels));
        put_const(&ev[F_B_CHANNEL], &sp, hot_channels[k]);
        put_const(&ev[F_B_URL], &sp, hot_urls[k]);
    } else {
        uint64_t k = below(s, NX_CHANNELS);
        int n = snprintf(tmp, sizeof tmp, "channel-%llu", (unsigned long long)k);
        put_text(&ev[F_B_CHANNEL], &sp, tmp, (size_t)n);
        /* the channel's URL depends on the channel alone */
        uint64_t cs = sl_mix64(k + 0x5851f42d4c957f2dULL);
        size_t a = (size_t)snprintf(tmp, sizeof tmp, "https://www.nexmark.com/");
        for (int part = 0; part < 3; part++) {
            a += next_string(&cs, tmp + a, 5);
            tmp[a++] = '/';
        }
        a += (size_t)snprintf(tmp + a, sizeof tmp - a, "item.htm?query=1");
        if (k % 10 == 0)
            a += (size_t)snprintf(tmp + a, sizeof tmp - a, "&channel_id=%llu",
                                  (unsigned long long)(sl_mix64(k) & 0x7fffffff));
        put_text(&ev[F_B_URL], &sp, tmp, a);
    }
    ev[F_B_AUCTION].isnull = ev[F_B_BIDDER].isnull = ev[F_B_PRICE].isnull = false;
    ev[F_B_AUCTION].v.i = (int64_t)(auction + NX_FIRST_AUCTION_ID);
    ev[F_B_BIDDER].v.i = (int64_t)(bidder + NX_FIRST_PERSON_ID);
    ev[F_B_PRICE].v.i = price;
    size_t x = next_extra(s, sp, 32, pl->avg_bid);
    put_text(&ev[F_B_EXTRA], &sp, sp, x);
}

/* Event n into ev[] (every field; the other kinds' NULL). */
static void make_event(const nx_plan *pl, uint64_t n, sl_value *ev, char *sp)
{
    for (int f = 0; f < F_COUNT; f++) ev[f].isnull = true;
    uint64_t s = sl_mix64(pl->seed ^ sl_mix64(n + 0x2545f4914f6cdd1dULL));
    int64_t ts = sl_nexmark_timestamp(pl->base_time, pl->delay_us, n);
    uint64_t rem = n % pl->total;
    int kind = rem < pl->pp ? 0 : rem < pl->pp + pl->ap ? 1 : 2;
    ev[F_EVENT_TYPE].isnull = ev[F_DATETIME].isnull = false;
    ev[F_EVENT_TYPE].v.i = kind;
    ev[F_DATETIME].v.i = ts;
    if (kind == 0) make_person(pl, n, &s, ev, sp);
    else if (kind == 1) make_auction(pl, n, ts, &s, ev, sp);
    else make_bid(pl, n, &s, ev, sp);
}

/* ---- lifecycle -------------------------------------------------------- */

static void nx_close(sl_op *op)
{
    nx_state *st = op->priv;
    if (!st) return;
    free(st->shares);
    free(st->vals);
    free(st->strbuf);
    free(st);
    op->priv = NULL;
}

static int nx_open(sl_op *op)
{
    const nx_plan *pl = op->plan;
    nx_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)pl->n, sizeof *st->vals);
    st->strbuf = sl_malloc(NX_STRBUF);
    st->shares = sl_calloc(1, sizeof *st->shares);
    st->nshares = 1;
    st->shares[0].next = (uint64_t)op->subtask;
    st->shares[0].stride = (uint64_t)(op->parallelism > 0 ? op->parallelism : 1);
    return SL_OK;
}

static bool share_done(const nx_plan *pl, const nx_share *sh)
{
    return pl->events > 0 && sh->next >= pl->events;
}

static int nx_run(sl_op *op)
{
    const nx_plan *pl = op->plan;
    nx_state *st = op->priv;
    int live = 0;
    if (st->nshares == 0) return SL_DONE;
    for (int k = 0; k < st->nshares; k++) live += !share_done(pl, &st->shares[k]);
    if (live == 0) return SL_DONE;
    while (share_done(pl, &st->shares[st->cur])) st->cur = (st->cur + 1) % st->nshares;
    nx_share *sh = &st->shares[st->cur];
    sl_row row = {SL_KIND_INSERT, pl->n, st->vals, SL_TS_NONE};
    for (int k = 0; k < NX_BATCH && !share_done(pl, sh); k++) {
        make_event(pl, sh->next, st->ev, st->strbuf);
        sh->next += sh->stride;
        for (int i = 0; i < pl->n; i++) st->vals[i] = st->ev[pl->col[i]];
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) {
            if (rc == SL_ERR && !op->err[0]) sl_op_fail(op, "nexmark: downstream failed");
            if (rc == SL_AGAIN) op->wake_at_ms = sl_mono_ms();
            return rc;
        }
    }
    st->cur = (st->cur + 1) % st->nshares;
    return SL_OK;
}

/* ---- checkpoints ------------------------------------------------------ */

#define NX_BLOB_VERSION 1
static const unsigned char nx_magic[4] = {'S', 'L', 'N', 'X'};

static int nx_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    (void)cpid;
    nx_state *st = op->priv;
    size_t total = 1 + 4 + 4 + (size_t)st->nshares * 16 + 8;
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = NX_BLOB_VERSION;
    memcpy(p, nx_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint64_t)st->nshares, 4);
    for (int k = 0; k < st->nshares; k++) {
        p = sl_put_le_n(p, st->shares[k].next, 8);
        p = sl_put_le_n(p, st->shares[k].stride, 8);
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *blob = b;
    *len = total;
    return SL_OK;
}

static int nx_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    nx_state *st = op->priv;
    nx_share *sh = NULL;
    int n = 0;
    for (int k = 0; k < nblobs; k++) {
        const unsigned char *b = blobs[k], *p;
        size_t len = lens[k];
        const char *why = NULL;
        if (len < 17 || memcmp(b + 1, nx_magic, 4) != 0) why = "not nexmark state";
        else if (b[0] != NX_BLOB_VERSION) why = "another format version";
        if (!why) {
            p = b + len - 8;
            if (sl_get_le_n(&p, 8) != sl_blob_fnv1a(b, len - 8)) why = "checksum mismatch";
        }
        uint64_t cnt = 0;
        if (!why) {
            p = b + 5;
            cnt = sl_get_le_n(&p, 4);
            if (len != 17 + cnt * 16) why = "damaged (length does not match its shares)";
        }
        for (uint64_t i = 0; !why && i < cnt; i++) {
            sh = sl_realloc(sh, (size_t)(n + 1) * sizeof *sh);
            sh[n].next = sl_get_le_n(&p, 8);
            sh[n].stride = sl_get_le_n(&p, 8);
            if (sh[n].stride == 0) why = "damaged (a share with stride 0)";
            n++;
        }
        if (why) {
            free(sh);
            return sl_op_fail(op, "nexmark '%s' subtask %d: cannot restore state %d of %d: %s",
                              op->vertex ? op->vertex->id : "?", op->subtask, k + 1, nblobs, why);
        }
    }
    free(st->shares);
    st->shares = sh; /* none: this subtask is done at once */
    st->nshares = n;
    st->cur = 0;
    return SL_OK;
}

static const sl_op_option nx_options[] = {
    {"first-event.rate", SL_CT_INT, "10000000", NULL,
     "Events per second, over all subtasks (at least 1)."},
    {"next-event.rate", SL_CT_INT, NULL, NULL,
     "Must equal first-event.rate when given: the rate is constant."},
    {"events.num", SL_CT_INT, "0", NULL,
     "Events to generate, then end; 0: unbounded."},
    {"person.proportion", SL_CT_INT, "1", NULL,
     "Persons among every (person + auction + bid) proportion events."},
    {"auction.proportion", SL_CT_INT, "3", NULL,
     "Auctions among them."},
    {"bid.proportion", SL_CT_INT, "46", NULL,
     "Bids among them."},
    {"person.avg-size", SL_CT_INT, "200", NULL,
     "Average size in bytes of a person event (its extra column pads it)."},
    {"auction.avg-size", SL_CT_INT, "500", NULL,
     "Average size in bytes of an auction event."},
    {"bid.avg-size", SL_CT_INT, "100", NULL,
     "Average size in bytes of a bid event."},
    {"base-time", SL_CT_INT, "1767225600000", NULL,
     "Event time of the first event (epoch ms; default 2026-01-01 00:00:00 UTC)."},
    {"seed", SL_CT_INT, "0", NULL,
     "Seed of the generator: the same seed gives the same events."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_nexmark = {
    .abi = SL_OP_ABI_VERSION,
    .name = "nexmark",
    .flags = SL_OPF_SOURCE,
    .options = nx_options,
    .plan = nx_plan_new,
    .plan_free = nx_plan_free,
    .open = nx_open,
    .run = nx_run,
    .close = nx_close,
    .snapshot_state = nx_snapshot,
    .restore_state = nx_restore,
};
