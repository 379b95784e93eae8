/*
 * jdbc_common.h -- what the `jdbc-sink` and `jdbc-lookup-join` operators
 * share: Flink's jdbc URL (jdbc:postgresql://host[:port]/db) as a libpq
 * connection string, connecting with the server's own message on failure,
 * and the binary wire form of Sluice's types (parameters and results).
 *
 * Types (Sluice -> PostgreSQL parameter type; results accepted back):
 *   BOOLEAN   bool          bool
 *   INT       int4          int2, int4
 *   BIGINT    int8          int2, int4, int8
 *   DOUBLE    float8        float4, float8, numeric is refused (cast it in SQL)
 *   STRING    text          text, varchar, bpchar, name
 *   BYTES     bytea         bytea
 *   TIMESTAMP timestamp     timestamp, timestamptz (UTC: the session's TimeZone)
 * Parameters carry their type, so the server's assignment casts apply
 * (BIGINT into an int4 column) and a type that does not map (STRING into an
 * integer column) is refused when the statement is prepared, with the
 * server's message.
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
/* The parameter type of a Sluice type. */
Oid sl_jdbc_param_type(sl_type t);
/* Can a result column of type oid be read as t? */
int sl_jdbc_result_maps(Oid oid, sl_type t);
/* A PostgreSQL type's name for messages ("int4", or the number). */
const char *sl_jdbc_type_name(Oid oid);

/* v's binary parameter form into b (appended); *len its length. A NULL is
 * not encoded (the caller passes a NULL pointer). */
void sl_jdbc_encode(sl_buf *b, const sl_value *v, sl_type t);
/* A binary result value of type oid as t into *out (strings borrow p). */
int sl_jdbc_decode(const char *p, int len, Oid oid, sl_type t, sl_value *out);

#endif
