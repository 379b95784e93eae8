/*
 * config.h -- the daemon configuration: Flink's key names, one table.
 *
 * Sources, later overriding earlier: built-in defaults, the YAML file
 * (conf/sluice.yaml or --config FILE; flat `key: value` lines, comments,
 * quoted values, and nested maps flattened with dots as Flink does), the
 * SLUICE_PROPERTIES environment variable (YAML lines as in the file), then
 * -D key=value flags. Every key is declared in one table with its type,
 * default and description; an unknown key or a value of the wrong type is
 * a startup error that names the key and where it came from
 * ("conf/sluice.yaml:7: rest.port: 'abc' is not a port number").
 *
 * Flink's names of both generations are accepted: a 2.x name and its 1.x
 * predecessor set the same key (execution.checkpointing.dir and
 * state.checkpoints.dir). Keys of Flink's that only configure the JVM or
 * features Sluice has not (env.java.opts.*, jobmanager.memory.*, ...) are
 * accepted and collected, so that Flink's own config.yaml loads; the daemon
 * names them in one warning line. A key close to a real one is still a
 * misspelling ("did you mean ...?"), whatever family it is in.
 *
 * Directories (SL_CT_PATH) may be written as plain paths or file:// URIs;
 * both mean the same directory, and the getter returns the plain path.
 *
 * Durations accept Flink's forms: "10 s", "500 ms", "1 min", "50000" (ms).
 * Memory sizes accept "64 mb", "1g", "1024" (bytes).
 */
#ifndef SL_CONFIG_H
#define SL_CONFIG_H

#include <stdio.h>

#include "sl.h"

typedef enum {
    SL_CT_STRING,
    SL_CT_INT,      /* signed 64-bit */
    SL_CT_PORT,     /* 0..65535, 0 = pick a free port */
    SL_CT_DURATION, /* milliseconds */
    SL_CT_MEMORY,   /* bytes */
    SL_CT_BOOL,
    SL_CT_ENUM,     /* one of `choices` (comma-separated) */
    SL_CT_DOUBLE,   /* a finite decimal number */
    SL_CT_PATH,     /* a local path: "file:///x", "file:/x" and "/x" are all stored as "/x" */
    SL_CT_STORE,    /* a local path as SL_CT_PATH, or an s3://bucket/path URL (core/store.h) */
    SL_CT_JSON      /* operator options only: any JSON value (a list, an object, an
                       expression...) that the operator's plan() reads itself */
} sl_conf_type;

typedef struct sl_conf_key {
    const char *key;
    sl_conf_type type;
    const char *dflt;        /* default in its textual form */
    const char *choices;     /* for SL_CT_ENUM */
    const char *description;
} sl_conf_key;

typedef struct sl_config sl_config;

sl_config *sl_config_new(void); /* all defaults */
void sl_config_destroy(sl_config *c);

/* Load a YAML file. `required`: missing file is an error (for --config);
 * otherwise a missing file is silently skipped (for the default path). */
int sl_config_load_file(sl_config *c, const char *path, int required, char *err, size_t errlen);
/* Apply YAML text (the SLUICE_PROPERTIES form); `origin` names it in errors. */
int sl_config_load_text(sl_config *c, const char *text, const char *origin, char *err,
                        size_t errlen);
/* Apply one "key=value" (-D). */
int sl_config_set_kv(sl_config *c, const char *kv, char *err, size_t errlen);
int sl_config_set(sl_config *c, const char *key, const char *value, const char *origin,
                  char *err, size_t errlen);

/* Parse daemon command-line arguments in the common form:
 *   --config FILE, -D key=value (also -Dkey=value), --help
 * then environment SLUICE_PROPERTIES. Order of precedence as above. Returns
 * SL_OK, SL_DONE after printing help, or SL_ERR with message. */
int sl_config_from_args(sl_config *c, int argc, char **argv, const char *default_path,
                        char *err, size_t errlen);

/* Checks across keys, run by sl_config_from_args once everything is loaded
 * (a daemon refuses to start on SL_ERR): heartbeat.timeout must be larger
 * than heartbeat.interval; max-concurrent-checkpoints must be 1; the
 * exponential-delay initial backoff must not exceed its maximum. */
int sl_config_check(const sl_config *c, char *err, size_t errlen);

/* The keys accepted but not used (JVM-only, or features Sluice has not),
 * comma-separated in the order first seen, or NULL when there are none.
 * Borrowed from c. */
const char *sl_config_ignored(const sl_config *c);

/* "file:///x", "file://localhost/x", "file:/x" or a plain path -> the plain
 * path (caller frees); NULL with the reason in err for a URI of another
 * scheme or host, which Sluice cannot write to. */
char *sl_config_local_path(const char *value, char *err, size_t errlen);

/* Typed getters; the key must be declared in the table (else SL_ASSERT). */
const char *sl_config_str(const sl_config *c, const char *key);
int64_t sl_config_int(const sl_config *c, const char *key);
double sl_config_double(const sl_config *c, const char *key);
int sl_config_bool(const sl_config *c, const char *key);

/* The restart strategy a job with configuration c gets: restart-strategy.type
 * when it is set, else as in Flink 1.19+/2.x "exponential-delay" when
 * checkpointing is on (execution.checkpointing.interval > 0) and "none"
 * when it is off. Borrowed from c (or static). */
const char *sl_config_restart_strategy(const sl_config *c);

/* Iterate all keys with their current textual values (for GET /jobmanager/config). */
int sl_config_count(const sl_config *c);
void sl_config_entry(const sl_config *c, int i, const char **key, const char **value);

/* Shared parsers (also used for operator options). */
/* The entry of the NULL-terminated `choices` closest to `key` (a plausible
 * typo of it), or NULL: for "did you mean" hints. */
const char *sl_closest(const char *key, const char *const *choices);

int sl_parse_duration_ms(const char *s, int64_t *out);
int sl_parse_memory(const char *s, int64_t *out);
int sl_parse_int(const char *s, int64_t *out);
int sl_parse_bool(const char *s, int *out);

/* One value checked against a key's row: its type, the inclusive range
 * [min, max] of INT, DURATION, MEMORY and DOUBLE (INT64_MIN/INT64_MAX = no
 * bound), ENUM's choices and `aliases` ("alias=choice,...", may be NULL).
 * On success *out holds the text (canonical for ENUM, the plain path for
 * PATH; caller frees out->text) and the parsed number. On failure err reads
 * "<origin>: <label>: '<value>' is not ..." (origin may be NULL; label NULL
 * names k->key). This is the parser of the cluster's configuration and of
 * every operator's options (core/opregistry.c). */
typedef struct sl_conf_value {
    char *text;
    int64_t num;   /* INT, PORT: the number; DURATION: ms; MEMORY: bytes; BOOL: 0/1; ENUM: index */
    double real;   /* DOUBLE */
} sl_conf_value;
int sl_conf_parse_value(const sl_conf_key *k, int64_t min, int64_t max, const char *aliases,
                        const char *label, const char *value, const char *origin,
                        sl_conf_value *out, char *err, size_t errlen);
/* What a value of k must look like, for messages and docs: "integer",
 * "duration", "a, b, c" for ENUM. */
const char *sl_conf_type_name(const sl_conf_key *k);
/* The type as a docs table shows it ("a, b" for ENUM), to out. */
void sl_conf_print_type(FILE *out, const sl_conf_key *k);
/* docs/CONFIG.md's table of every key (the block between the generated
 * markers), as markdown, to out. */
void sl_config_print_docs(FILE *out);

#endif
