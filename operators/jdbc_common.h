/*
 * jdbc_common.h -- what the `jdbc-sink` and `jdbc-lookup-join` operators
 * share: Flink's jdbc URL (jdbc:postgresql://host[:port]/db) as a libpq
 * connection string, connecting with the server's own message on failure,
 * and the binary wire form of Sluice's types (parameters and results).
 *
 * Types, as Flink's PostgreSQL dialect maps them (Sluice -> parameter type;
 * result types accepted back):
 *   BOOLEAN            bool          bool
 *   TINYINT, SMALLINT  int2          int2 (TINYINT: a value out of its range fails)
 *   INT                int4          int2, int4
 *   BIGINT             int8          int2, int4, int8
 *   FLOAT              float4        float4
 *   DOUBLE             float8        float4, float8
 *   DECIMAL(p, s)      numeric       numeric: rounded HALF_UP to s; more than p
 *                                    digits read as NULL (Flink's DecimalData);
 *                                    NaN and infinities fail
 *   STRING             text          text, varchar, bpchar, name
 *   BYTES              bytea         bytea
 *   DATE               date          date
 *   TIME(p)            time          time (microseconds kept for p > 3)
 *   TIMESTAMP(p),      timestamp     timestamp, timestamptz (UTC: the session's
 *   TIMESTAMP_LTZ(p)                 TimeZone); microseconds kept for p > 3,
 *                                    nanoseconds written rounded to microseconds
 *   ARRAY<T>           T's array     a one-dimensional array of T's types (an
 *                                    empty one too); T is not itself an ARRAY
 * Infinite dates and timestamps fail (Sluice has no such values). Parameters
 * carry their type, so the server's assignment casts apply (BIGINT into an
 * int4 column) and a type that does not map (STRING into an integer column)
 * is refused when the statement is prepared, with the server's message.
 */
#ifndef SL_JDBC_COMMON_H
#define SL_JDBC_COMMON_H

#include <libpq-fe.h>

#include "buf.h"
#include "jobgraph.h"
#include "row.h"

#define SL_JDBC_CONNINFO_MAX 2048

/* The connection string of vertex v's url, username and password (the
 * session's TimeZone UTC, a 10 s connect timeout). SL_ERR with err naming
 * what is wrong with the URL. */
int sl_jdbc_conninfo(const sl_vertex *v, char *out, size_t cap, char *err, size_t errlen);
/* Connect; NULL with the server's (or libpq's) message in err. */
PGconn *sl_jdbc_connect(const char *conninfo, const char *who, char *err, size_t errlen);
/* libpq's last error of conn or res, one line, into err. Returns SL_ERR. */
int sl_jdbc_error(PGconn *conn, const PGresult *res, const char *who, const char *what,
                  char *err, size_t errlen);

/* A double-quoted identifier (column names, as Flink's PostgresDialect). */
void sl_jdbc_quote(sl_buf *b, const char *ident);
/* Does the connector carry columns of type dt (the table above)? */
int sl_jdbc_carries(const sl_dtype *dt);
/* SL_OK when it carries every column of s; else SL_ERR naming vertex vid's column and type. */
int sl_jdbc_check_columns(const char *vid, const sl_schema *s, char *err, size_t errlen);
/* The parameter type of a Sluice type. */
Oid sl_jdbc_param_type(const sl_dtype *dt);
/* Can a result column of type oid be read as dt? */
int sl_jdbc_result_maps(Oid oid, const sl_dtype *dt);
/* A PostgreSQL type's name for messages ("int4", or the number). */
const char *sl_jdbc_type_name(Oid oid);

/* v's binary parameter form, appended to b. A NULL is not encoded (the
 * caller passes a NULL pointer). */
void sl_jdbc_encode(sl_buf *b, const sl_value *v, const sl_dtype *dt);

/* What decoding an array needs: a bounded arena for the arrays of one row
 * (the caller resets it per row) and room for one array's elements (grown
 * to the longest array, kept). */
typedef struct sl_jdbc_scratch {
    sl_arena arena;
    sl_value *el;
    uint32_t elcap;
} sl_jdbc_scratch;
void sl_jdbc_scratch_init(sl_jdbc_scratch *sc);
void sl_jdbc_scratch_free(sl_jdbc_scratch *sc);

/* A binary result value of type oid as dt into *out (strings borrow p,
 * arrays live in sc's arena; a DECIMAL of more than p digits is NULL).
 * SL_ERR with why (no column name) when it does not read. */
int sl_jdbc_decode(const char *p, int len, Oid oid, const sl_dtype *dt, sl_value *out,
                   sl_jdbc_scratch *sc, char *why, size_t whylen);

#endif
