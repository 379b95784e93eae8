/*
 * prom.h -- Flink's Prometheus reporter: GET /metrics in Prometheus's text
 * exposition format, on metrics.reporter.prom.port (9249), on both daemons.
 *
 * The daemon's own thread owns the figures: it renders them into a text
 * (sl_prom_text_*) and hands the finished text over with sl_prom_publish;
 * the server's thread only ever serves the latest text handed over. The
 * lock between them is a leaf, held to swap or copy one string.
 */
#ifndef SL_PROM_H
#define SL_PROM_H

#include "sl.h"
#include "config.h"

typedef struct sl_prom sl_prom;

/* Is the reporter configured (metrics.reporter.prom.factory.class set)? */
int sl_prom_enabled(const sl_config *c);
/* Start serving on the first free port of metrics.reporter.prom.port ("9249",
 * a range "9250-9260", or 0 for any). NULL with the reason in err. */
sl_prom *sl_prom_start(const sl_config *c, char *err, size_t errlen);
int sl_prom_port(const sl_prom *p);
/* Any thread: serve `text` (taken; heap) from now on. */
void sl_prom_publish(sl_prom *p, char *text);
void sl_prom_stop(sl_prom *p); /* NULL is a no-op */

/* A growing exposition text. */
typedef struct sl_prom_text {
    char *s;
    size_t len, cap;
    const char *last; /* the metric whose HELP/TYPE lines were written last */
} sl_prom_text;

/* One sample: `name` (without flink_, which is added) with labels given as
 * NULL-terminated key, value pairs; values are escaped. HELP and TYPE lines
 * precede the first sample of each name, so give a name's samples together. */
void sl_prom_sample(sl_prom_text *t, const char *name, double value, const char *const *labels);
/* A histogram as Flink's reporter shows one: a summary with the quantiles
 * 0.5, 0.75, 0.95, 0.98, 0.99, 0.999 (quantiles[6], in that order; label
 * `quantile`) and name_count. */
void sl_prom_summary(sl_prom_text *t, const char *name, uint64_t count, const double *quantiles,
                     const char *const *labels);
/* The text so far (caller owns it; t is empty after). */
char *sl_prom_text_take(sl_prom_text *t);

#endif
