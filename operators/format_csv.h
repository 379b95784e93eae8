/*
 * format_csv.h -- the one CSV row encoder, shared by the Kafka csv format
 * (kafka_common.c) and the file sink (file.c).
 *
 * Flink's csv format, RFC 4180: fields separated by commas, no header; a
 * STRING holding a comma, a quote, CR or LF is quoted with its quotes
 * doubled, and an empty STRING is "" so that it stays apart from NULL, which
 * is an empty field; BYTES are base64, TIMESTAMP Flink's SQL text
 * ("2026-01-01 00:00:00.02"), numbers and booleans Java's text; DECIMAL
 * with its scale ("12.30"), DATE, TIME(p) and TIMESTAMP(p) as the json
 * format's texts without quotes ("2026-01-01", "10:00:01.5",
 * "2026-01-01 00:00:00.123456"), TINYINT, SMALLINT and FLOAT as numbers;
 * intervals and nested values are refused at planning. CSV carries
 * no row kind: callers refuse rows that are not inserts.
 *
 * The decoder is kf_decode (kafka_common.c), shared by the Kafka source and
 * the file source. The encoder appends to the caller's reused buffer
 * (lib's sl_buf, named sl_buf in kafka_common.h; base64 through lib's
 * sl_base64_encode): no allocation per record once the buffer has grown.
 */
#ifndef SL_FORMAT_CSV_H
#define SL_FORMAT_CSV_H

#include "kafka_common.h"

/* v (of type t) as one csv field, appended to out (nothing for NULL). */
void sl_fmt_csv_value(sl_buf *out, const sl_value *v, sl_type t);

/* The codec's columns of row as one csv record without its line end.
 * Columns past row->n are left out. */
void sl_fmt_csv_fields(sl_buf *out, const kf_codec *c, const sl_row *row);

#endif
