/*
 * bridge.h -- SQL over a C job's streams, in the same job graph (the
 * DataStream API's fromDataStream / toDataStream / toChangelogStream,
 * api/datastream.h).
 *
 * A stream is registered in a SQL session as a temporary table whose rows
 * are the output of one vertex of the C job's graph; a query over it is
 * planned by the ordinary planner, straight into that graph, and the vertex
 * its result leaves from is handed back to become a stream again. One job,
 * one graph, one checkpoint: the SQL operators are vertices like any other.
 */
#ifndef SL_SQL_BRIDGE_H
#define SL_SQL_BRIDGE_H

#include <jansson.h>

#include "row.h"
#include "sql.h"

/* Register the output of `vertex` (columns `cols`, event-time attribute
 * `rowtime` or NULL) as the temporary table `name` of session s.
 * `schema` (NULL or "": the stream's own) is the body of a CREATE TABLE:
 * the stream's physical columns (all, in order, with their types; left out,
 * they are taken from the stream), computed columns (`c AS expr`) and one
 * WATERMARK FOR ... AS .... SL_ERR with err saying what did not fit. */
int sl_sql_bridge_register(sl_sql_session *s, const char *name, const char *vertex,
                           const sl_schema *cols, const char *rowtime, const char *schema,
                           char *err, size_t errlen);

/* Plan the SELECT `query` over the session's tables into the job graph
 * (`vertices`, `edges`: the graph's arrays, appended to) and fill *out.
 * SL_ERR with err (the SQL position when the query is at fault). */
int sl_sql_bridge_plan(sl_sql_session *s, const char *query, json_t *vertices, json_t *edges,
                       sl_sql_stream *out, char *err, size_t errlen);

#endif
