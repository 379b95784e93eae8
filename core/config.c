/*
 * config.c -- the configuration table, its YAML reader and its parsers.
 *
 * Every key Sluice understands is one row of `defs[]` below: Flink's name,
 * a type, a default in textual form, the allowed range or choices, and a
 * one-line description (which `--help` prints). A configuration object is
 * just one slot per row: the current text of the value and, for numeric
 * types, its parsed number, so getters cost a lookup and no parsing.
 *
 * Every value, the defaults included, goes through one setter that checks
 * it against its row; a bad value is refused with a message naming where it
 * came from ("conf/sluice.yaml:7: rest.port: 'abc' is not a port number").
 *
 * The YAML reader understands the subset Flink's configuration files use:
 * `key: value` lines, `#` comments (a `#` at the start of a line or after
 * whitespace, outside quotes, as in YAML), single- and double-quoted values,
 * blank lines, and nested block maps whose keys are joined with dots
 * (`rest:` / `  port: 8081` is `rest.port`). A key with nothing after the
 * colon and nothing nested below it has the empty value. Anything else --
 * tabs in indentation, lists, flow collections, block scalars, a line
 * without `key:` -- is an error naming the file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "duration.h"
#include "log.h"
#include "store.h"
#include "sl_limits.h"
#include "text.h"

/* One row of the table: the public descriptor plus what validation needs. */
typedef struct {
    sl_conf_key k;
    int64_t min, max;    /* inclusive bounds for INT and DURATION */
    const char *aliases; /* ENUM: "alias=choice,..." accepted on input */
} sl_conf_def;

#define NOLIM INT64_MIN, INT64_MAX

static const sl_conf_def defs[] = {
    {{"jobmanager.rpc.address", SL_CT_STRING, "localhost", NULL,
      "Host name or address at which TaskManagers reach the JobManager's RPC endpoint."},
     NOLIM, NULL},
    {{"jobmanager.rpc.port", SL_CT_PORT, "6123", NULL,
      "Port of the JobManager's RPC endpoint."},
     NOLIM, NULL},
    {{"jobmanager.bind-host", SL_CT_STRING, "0.0.0.0", NULL,
      "Address (IPv4, or localhost) the JobManager's RPC server listens on; 0.0.0.0, every "
      "interface, as Flink's default. 127.0.0.1 keeps it to this machine."},
     NOLIM, NULL},
    {{"rest.port", SL_CT_PORT, "8081", NULL,
      "Port of the REST API and dashboard; clients connect to it."},
     NOLIM, NULL},
    {{"rest.address", SL_CT_STRING, "localhost", NULL,
      "Host name or address at which clients (the sluice CLI) reach the REST API."},
     NOLIM, NULL},
    {{"rest.bind-address", SL_CT_STRING, "127.0.0.1", NULL,
      "Address the REST server listens on (0.0.0.0 for all interfaces)."},
     NOLIM, NULL},
    {{"taskmanager.numberOfTaskSlots", SL_CT_INT, "1", NULL,
      "Number of task slots a TaskManager offers."},
     1, 65536, NULL},
    {{"taskmanager.host", SL_CT_STRING, "", NULL,
      "Address a TaskManager advertises to others; empty means detect it."},
     NOLIM, NULL},
    {{"taskmanager.bind-host", SL_CT_STRING, "0.0.0.0", NULL,
      "Address (IPv4, or localhost) a TaskManager's data exchange server listens on; 0.0.0.0, "
      "every interface, as Flink's default. 127.0.0.1 keeps it to this machine."},
     NOLIM, NULL},
    {{"taskmanager.data.port", SL_CT_PORT, "0", NULL,
      "Port of a TaskManager's data exchange server; 0 picks a free port."},
     NOLIM, NULL},
    {{"taskmanager.resource-id", SL_CT_STRING, "", NULL,
      "Stable identifier of a TaskManager; empty means generate one."},
     NOLIM, NULL},
    {{"taskmanager.memory.process.size", SL_CT_MEMORY, "1728m", NULL,
      "Total memory budget of a TaskManager process."},
     NOLIM, NULL},
    {{"taskmanager.tmp.dirs", SL_CT_PATH, "/tmp", NULL,
      "Directory for a TaskManager's working files (local RocksDB state)."},
     NOLIM, NULL},
    {{"parallelism.default", SL_CT_INT, "1", NULL,
      "Parallelism of operators that do not set their own."},
     1, 32768, NULL},
    {{"heartbeat.interval", SL_CT_DURATION, "10000 ms", NULL,
      "Interval between heartbeats from the JobManager to TaskManagers."},
     1, INT64_MAX, NULL},
    {{"heartbeat.timeout", SL_CT_DURATION, "50000 ms", NULL,
      "Silence after which a peer is considered lost: the JobManager drops a TaskManager "
      "whose heartbeats stop, a TaskManager whose heartbeats go unanswered cancels its tasks "
      "and reconnects."},
     1, INT64_MAX, NULL},
    {{"slot.request.timeout", SL_CT_DURATION, "300000 ms", NULL,
      "How long a job waits for enough free slots before it fails."},
     1, INT64_MAX, NULL},
    {{"execution.buffer-timeout", SL_CT_DURATION, "100 ms", NULL,
      "Longest time a partly filled network buffer waits before it is sent; 0 sends every record."},
     0, INT64_MAX, NULL},
    {{"taskmanager.network.memory.buffers-per-channel", SL_CT_INT, "2", NULL,
      "Exclusive network buffers (credits) per remote input channel."},
     0, 1024, NULL},
    {{"taskmanager.network.memory.floating-buffers-per-gate", SL_CT_INT, "8", NULL,
      "Floating network buffers shared by the channels of one input gate."},
     0, 65536, NULL},
    {{"taskmanager.memory.segment-size", SL_CT_MEMORY, "32kb", NULL,
      "Size of one network buffer."},
     SL_MIN_SEGMENT_BYTES, SL_MAX_SEGMENT_BYTES, NULL},
    {{"state.backend.type", SL_CT_ENUM, "hashmap", "hashmap,rocksdb",
      "Where keyed state lives: in memory (hashmap) or in RocksDB on local disk (rocksdb)."},
     NOLIM, NULL},
    {{"state.backend.rocksdb.memory.managed", SL_CT_BOOL, "true", NULL,
      "All RocksDB states of a TaskManager share one memory budget of "
      "`taskmanager.memory.managed.size`: one LRU block cache (index and filter blocks "
      "charged to it) and a memtable share split evenly across the live instances. false: "
      "each instance has RocksDB's own defaults. The TaskManager logs the budget at start."},
     NOLIM, NULL},
    {{"taskmanager.memory.managed.size", SL_CT_MEMORY, "256mb", NULL,
      "A TaskManager's managed memory: the budget all its RocksDB states share (Flink derives "
      "it from `taskmanager.memory.managed.fraction` of its memory, about 512 MiB at Flink's "
      "default process size; Sluice takes a fixed size, half of that)."},
     0, INT64_MAX, NULL},
    {{"state.backend.rocksdb.memory.fixed-per-slot", SL_CT_MEMORY, "0", NULL,
      "Above 0: the RocksDB budget is this much per slot, times "
      "`taskmanager.numberOfTaskSlots`, in place of the managed size (it applies whether or "
      "not `memory.managed` is on, as in Flink)."},
     0, INT64_MAX, NULL},
    {{"state.backend.rocksdb.memory.write-buffer-ratio", SL_CT_DOUBLE, "0.5", NULL,
      "Share of the RocksDB budget for memtables; the rest is the block cache. RocksDB 7.8's "
      "C API has no write-buffer manager, so each live instance gets `write_buffer_size` = "
      "share / (2 memtables x instances), reset on every instance when one opens or closes, "
      "with a floor of 256 KiB per memtable (a warning names it when reached)."},
     0, 1, NULL},
    {{"execution.checkpointing.incremental", SL_CT_BOOL, "false", NULL,
      "Read by each TaskManager. With the rocksdb backend a checkpoint uploads only the SST "
      "files not yet in `<state.checkpoints.dir>/<job id>/shared/`; the JobManager deletes a "
      "shared file once no retained checkpoint references it. Savepoints and the hashmap "
      "backend stay full."},
     NOLIM, NULL},
    {{"execution.checkpointing.externalized-checkpoint-retention", SL_CT_ENUM,
      "RETAIN_ON_CANCELLATION", "RETAIN_ON_CANCELLATION,DELETE_ON_CANCELLATION,NO_EXTERNALIZED_CHECKPOINTS",
      "Whether a cancelled job keeps its retained checkpoints (and the shared files of "
      "incremental ones). The other two values both delete them when the job reaches CANCELED "
      "(Sluice has no non-externalized checkpoints); failed and finished jobs keep theirs. "
      "Sluice's default keeps them (Flink's default is NO_EXTERNALIZED_CHECKPOINTS)."},
     NOLIM, NULL},
    {{"state.checkpoints.dir", SL_CT_STORE, "", NULL,
      "Directory that checkpoints are written to (`<dir>/<job id>/chk-<n>`), local or "
      "`s3://bucket/path` (see `s3.endpoint`); empty means /tmp/sluice-checkpoints."},
     NOLIM, NULL},
    {{"state.savepoints.dir", SL_CT_STORE, "", NULL,
      "Default directory for savepoints when a request names none, local or `s3://bucket/path`."},
     NOLIM, NULL},
    {{"s3.endpoint", SL_CT_STRING, "", NULL,
      "The S3-compatible server of `s3://` checkpoint and savepoint directories, "
      "`http://host:port` or `https://host[:port]`; empty means AWS's default endpoint. Read by "
      "the JobManager and every TaskManager."},
     NOLIM, NULL},
    {{"s3.access-key", SL_CT_STRING, "", NULL,
      "Access key id for `s3://` directories (empty: unsigned requests)."},
     NOLIM, NULL},
    {{"s3.secret-key", SL_CT_STRING, "", NULL,
      "Secret key for `s3://` directories."},
     NOLIM, NULL},
    {{"s3.path.style.access", SL_CT_BOOL, "false", NULL,
      "Address buckets as `http://endpoint/bucket/key` rather than "
      "`http://bucket.endpoint/key` (MinIO, Ceph, moto and most servers that are not AWS need "
      "true)."},
     NOLIM, NULL},
    {{"s3.ssl.truststore", SL_CT_PATH, "", NULL,
      "PEM file with the CA certificates an `https://` `s3.endpoint`'s certificate must chain "
      "to (a private CA); empty: the system's CAs. The server's host name is checked against "
      "its certificate either way."},
     NOLIM, NULL},
    {{"s3.region", SL_CT_STRING, "us-east-1", NULL,
      "Region that requests to `s3://` directories are signed for (AWS signature version 4); "
      "with an empty `s3.endpoint` it also picks AWS's endpoint `s3.<region>.amazonaws.com`."},
     NOLIM, NULL},
    {{"s3.multipart.part-size", SL_CT_MEMORY, "16mb", NULL,
      "A state file larger than this is uploaded to S3 in parts of this size (multipart "
      "upload); smaller ones in one PUT. S3 takes parts of 5 MiB to 5 GiB and at most 10,000 "
      "of them per object."},
     (int64_t)5 << 20, (int64_t)5 << 30, NULL},
    {{"s3.connection.timeout", SL_CT_DURATION, "10 s", NULL,
      "How long an S3 request waits for its connection to be made (retried twice)."},
     1, 3600 * 1000, NULL},
    {{"s3.low-speed.time", SL_CT_DURATION, "30 s", NULL,
      "An S3 request whose transfer stays below `s3.low-speed.limit` bytes per second this "
      "long (a server that stops answering) is abandoned and retried (twice); whole seconds."},
     1000, 3600 * 1000, NULL},
    {{"s3.low-speed.limit", SL_CT_INT, "1", NULL,
      "Bytes per second below which an S3 transfer counts as stalled (see `s3.low-speed.time`)."},
     1, INT64_MAX, NULL},
    {{"state.checkpoints.num-retained", SL_CT_INT, "1", NULL,
      "Number of completed checkpoints kept per job."},
     1, 1000000, NULL},
    {{"state.savepoints.rescale.retain", SL_CT_BOOL, "false", NULL,
      "Keep the savepoint a rescale takes (PUT /jobs/:id/resource-requirements) after the job no "
      "longer needs it; by default it is deleted once a checkpoint at the new parallelism (or "
      "a later rescale's savepoint) replaces it as the restore point, or the job finishes or is "
      "cancelled."},
     NOLIM, NULL},
    {{"execution.checkpointing.interval", SL_CT_DURATION, "0", NULL,
      "Interval between checkpoints; 0 disables periodic checkpoints."},
     0, INT64_MAX, NULL},
    {{"execution.checkpointing.timeout", SL_CT_DURATION, "10 min", NULL,
      "A checkpoint that takes longer is aborted."},
     1, INT64_MAX, NULL},
    {{"execution.checkpointing.min-pause", SL_CT_DURATION, "0", NULL,
      "Least time between the end of one checkpoint and the start of the next."},
     0, INT64_MAX, NULL},
    {{"execution.checkpointing.max-concurrent-checkpoints", SL_CT_INT, "1", NULL,
      "Most checkpoints in progress at the same time; Sluice runs one at a time, so only 1 "
      "is accepted."},
     1, INT32_MAX, NULL},
    {{"execution.checkpointing.tolerable-failed-checkpoints", SL_CT_INT, "0", NULL,
      "Consecutive failed checkpoints tolerated before the job fails."},
     0, INT32_MAX, NULL},
    {{"execution.checkpointing.unaligned.enabled", SL_CT_BOOL, "false", NULL,
      "Unaligned checkpoints (exactly-once mode only): a checkpoint barrier overtakes the "
      "buffers queued ahead of it on its way, a task snapshots at its first barrier, and the "
      "buffers overtaken are persisted with the checkpoint (channel state) and replayed into "
      "the operators on restore, also at another parallelism. Savepoints stay aligned."},
     NOLIM, NULL},
    {{"execution.checkpointing.aligned-checkpoint-timeout", SL_CT_DURATION, "0", NULL,
      "With unaligned checkpoints: above 0 a checkpoint starts aligned, and a task still "
      "aligning this long after the checkpoint was triggered switches to unaligned for that "
      "checkpoint; 0 means unaligned from the start."},
     0, INT64_MAX, NULL},
    {{"execution.checkpointing.mode", SL_CT_ENUM, "EXACTLY_ONCE", "EXACTLY_ONCE,AT_LEAST_ONCE",
      "EXACTLY_ONCE aligns barriers; AT_LEAST_ONCE does not and may duplicate after recovery."},
     NOLIM, NULL},
    /* no default, as in Flink: unset means exponential-delay for a job with
     * checkpointing, none without (sl_config_restart_strategy) */
    {{"restart-strategy.type", SL_CT_ENUM, "", "none,fixed-delay,exponential-delay",
      "What to do when a task fails: fail the job (none), or restart it. Not set: "
      "exponential-delay (with its defaults) for a job with checkpointing "
      "(execution.checkpointing.interval above 0), none for one without."},
     NOLIM,
     "off=none,disable=none,no=none,fixeddelay=fixed-delay,exponentialdelay=exponential-delay"},
    {{"restart-strategy.fixed-delay.attempts", SL_CT_INT, "3", NULL,
      "Restarts attempted by the fixed-delay strategy before the job fails."},
     0, INT32_MAX, NULL},
    {{"restart-strategy.fixed-delay.delay", SL_CT_DURATION, "1 s", NULL,
      "Wait between two restart attempts of the fixed-delay strategy."},
     0, INT64_MAX, NULL},
    /* exponential-delay: Flink's keys and defaults (Flink 1.19+) */
    {{"restart-strategy.exponential-delay.initial-backoff", SL_CT_DURATION, "1 s", NULL,
      "Wait before the first restart of the exponential-delay strategy."},
     1, INT64_MAX, NULL},
    {{"restart-strategy.exponential-delay.max-backoff", SL_CT_DURATION, "1 min", NULL,
      "Longest wait between two restarts of the exponential-delay strategy."},
     1, INT64_MAX, NULL},
    {{"restart-strategy.exponential-delay.backoff-multiplier", SL_CT_DOUBLE, "1.5", NULL,
      "Factor the wait grows by after each restart (at least 1)."},
     1, 1000000, NULL},
    {{"restart-strategy.exponential-delay.reset-backoff-threshold", SL_CT_DURATION, "1 h", NULL,
      "A job that has run this long without failing starts again from the initial backoff "
      "and a fresh count of attempts."},
     1, INT64_MAX, NULL},
    {{"restart-strategy.exponential-delay.jitter-factor", SL_CT_DOUBLE, "0.1", NULL,
      "Random share (0 to 1) added to or taken from each wait, so restarts of many jobs "
      "do not fall together."},
     0, 1, NULL},
    {{"restart-strategy.exponential-delay.attempts-before-reset-backoff", SL_CT_INT, "2147483647",
      NULL, "Restarts attempted by the exponential-delay strategy before the job fails."},
     0, INT32_MAX, NULL},
    {{"pipeline.auto-watermark-interval", SL_CT_DURATION, "200 ms", NULL,
      "Default emission interval of `watermark` operators that set no 'interval' of their "
      "own (the JobManager writes it into the job at submission)."},
     1, INT64_MAX, NULL},
    {{"jobstore.max-capacity", SL_CT_INT, "2147483647", NULL,
      "Most finished (FINISHED, CANCELED, FAILED) jobs the JobManager keeps; the oldest "
      "beyond it are forgotten."},
     0, INT32_MAX, NULL},
    {{"jobstore.expiration-time", SL_CT_DURATION, "3600 s", NULL,
      "How long the JobManager keeps a finished job before forgetting it."},
     1, INT64_MAX, NULL},
    {{"rest.auth-token", SL_CT_STRING, "", NULL,
      "Bearer token required by mutating REST calls; empty means none."},
     NOLIM, NULL},
    {{"rest.allowed-hosts", SL_CT_STRING, "", NULL,
      "Host names (comma-separated) under which clients may reach the REST API besides "
      "`rest.address`, localhost, this machine's name and IP addresses; other `Host` headers "
      "get 403 (DNS rebinding). docs/SECURITY.md"},
     NOLIM, NULL},
    {{"web.access-control-allow-origin", SL_CT_STRING, "", NULL,
      "Origins (comma-separated, like `https://ops.example.com`) whose pages may make "
      "mutating REST calls besides the dashboard's own; `*` allows any (unsafe)."},
     NOLIM, NULL},
    {{"rest.allowed-dirs", SL_CT_STRING, "", NULL,
      "Directories (comma-separated) under which REST requests may name savepoint targets, "
      "snapshots to restore from and savepoints to dispose of, besides `state.savepoints.dir` "
      "and `state.checkpoints.dir`."},
     NOLIM, NULL},
    {{"rest.flamegraph.enabled", SL_CT_BOOL, "true", NULL,
      "Serve flame graphs of a vertex's task threads (GET /jobs/:id/vertices/:vid/flamegraph); "
      "Flink defaults this to false, Sluice to true. False answers Flink's disabled graph."},
     NOLIM, NULL},
    {{"rest.flamegraph.num-samples", SL_CT_INT, "100", NULL,
      "Stack samples taken of each task thread for one flame graph."},
     1, 10000, NULL},
    {{"rest.flamegraph.delay-between-samples", SL_CT_DURATION, "50 ms", NULL,
      "Delay between two stack samples of a task thread."},
     1, 60000, NULL},
    {{"cluster.thread-dump.stacktrace-max-depth", SL_CT_INT, "50", NULL,
      "Frames of each thread's user-space stack in the thread dumps of this daemon "
      "(/jobmanager/thread-dump, /taskmanagers/:id/thread-dump), innermost first; a cut stack ends "
      "with \"...\"."},
     1, 256, NULL},
    {{"rest.flamegraph.stack-depth", SL_CT_INT, "100", NULL,
      "Frames kept of each sampled stack (the innermost ones)."},
     1, 256, NULL},
    {{"rest.flamegraph.refresh-interval", SL_CT_DURATION, "60000 ms", NULL,
      "Age after which a vertex's flame graph is sampled anew when asked for."},
     1, INT64_MAX, NULL},
    {{"rest.flamegraph.cleanup-interval", SL_CT_DURATION, "600000 ms", NULL,
      "Age after which a flame graph nobody asked for is dropped."},
     1, INT64_MAX, NULL},
    {{"web.submit.enable", SL_CT_BOOL, "true", NULL,
      "Accept C jobs over REST (POST /jars/upload, /jars/:id/run, ...); false turns the jar "
      "API off."},
     NOLIM, NULL},
    {{"web.upload.dir", SL_CT_PATH, "", NULL,
      "Where uploaded C jobs are stored (a directory the JobManager makes, 0700); empty: "
      "/tmp/sluice-web-upload-<pid of the JobManager>, removed when the JobManager exits (those "
      "of JobManagers no longer running are removed at the next start). File names are the "
      "JobManager's own, never the client's; uploads found there at start-up are listed again."},
     NOLIM, NULL},
    {{"web.upload.max-size", SL_CT_MEMORY, "8 mb", NULL,
      "Largest C job POST /jars/upload accepts (413 beyond), at most 15 mb: it travels to the "
      "TaskManagers inside one control message."},
     NOLIM, NULL},
    {{"web.submit.build.cpu-time", SL_CT_DURATION, "30 s", NULL,
      "CPU time (whole seconds, rounded up) a C job's entry point may use in the child process "
      "that builds its graph for /jars/:id/run and /jars/:id/plan (RLIMIT_CPU); beyond it the "
      "child is killed and the request fails."},
     1, INT64_MAX, NULL},
    {{"web.submit.build.timeout", SL_CT_DURATION, "30 s", NULL,
      "Wall time (whole seconds, rounded up) the child process that runs a C job's entry point "
      "may take for /jars/:id/run and /jars/:id/plan; beyond it the child is killed and the "
      "request fails."},
     1, INT64_MAX, NULL},
    {{"web.submit.build.memory", SL_CT_MEMORY, "2 gb", NULL,
      "Address space the child process that runs a C job's entry point may map (RLIMIT_AS); 0 "
      "means no limit. Not applied by a sanitizer build (its shadow memory needs terabytes)."},
     NOLIM, NULL},
    {{"security.cluster.secret", SL_CT_STRING, "", NULL,
      "Shared secret every JobManager and TaskManager of the cluster must hold: RPC and data "
      "connections prove it (HMAC-SHA256 challenge-response) before anything else; empty "
      "means no authentication. `/jobmanager/config` shows it as `******`."},
     NOLIM, NULL},
    {{"security.ssl.internal.enabled", SL_CT_BOOL, "false", NULL,
      "Mutual TLS (1.2 or later) on RPC and data connections: both ends present a certificate "
      "from `security.ssl.internal.keystore` that a CA in `security.ssl.internal.truststore` "
      "vouches for; a peer without one fails the handshake and is logged. Can be combined "
      "with the cluster secret."},
     NOLIM, NULL},
    {{"security.ssl.internal.keystore", SL_CT_PATH, "", NULL,
      "PEM file holding this daemon's certificate chain and its private key."},
     NOLIM, NULL},
    {{"security.ssl.internal.truststore", SL_CT_PATH, "", NULL,
      "PEM file with the CA certificates a peer's certificate must chain to. Host names are "
      "not checked (as in Flink's internal TLS): trust is the CA's."},
     NOLIM, NULL},
    {{"security.ssl.rest.enabled", SL_CT_BOOL, "false", NULL,
      "Serve the REST API and the dashboard over HTTPS (libmicrohttpd with GnuTLS); the "
      "start-up line then says `https://`. Plain HTTP on the same port is refused by the TLS "
      "handshake."},
     NOLIM, NULL},
    {{"security.ssl.rest.keystore", SL_CT_PATH, "", NULL,
      "PEM file holding the REST server's certificate chain and its private key (both blocks "
      "in one file). Client certificates (Flink's `security.ssl.rest.authentication-enabled`) "
      "are not supported."},
     NOLIM, NULL},
    {{"security.cluster.secret-file", SL_CT_PATH, "", NULL,
      "File holding the cluster secret (instead of `security.cluster.secret`; a trailing "
      "newline is ignored; at most 4096 bytes). Setting both is an error at start-up."},
     NOLIM, NULL},
    {{"web.checkpoints.history", SL_CT_INT, "10", NULL,
      "Number of recent checkpoints the REST API and dashboard remember per job."},
     1, 100000, NULL},
    {{"sluice.operator-plugins", SL_CT_STRING, "", NULL,
      "Shared objects that add operator types (comma-separated paths). Both daemons "
      "load the same list at start-up (docs/OPERATORS.md)."},
     NOLIM, NULL},
    {{"log.level", SL_CT_ENUM, "INFO", "DEBUG,INFO,WARN,ERROR",
      "Least severe log level printed (DEBUG, INFO, WARN or ERROR)."},
     NOLIM, "warning=WARN"},
    {{"metrics.reporter.prom.factory.class", SL_CT_STRING, "", NULL,
      "Set (to org.apache.flink.metrics.prometheus.PrometheusReporterFactory) to serve "
      "Prometheus's text format on metrics.reporter.prom.port, on both daemons."},
     NOLIM, NULL},
    {{"metrics.reporter.prom.port", SL_CT_STRING, "9249", NULL,
      "Port of the Prometheus reporter, or a range (9250-9260) of which the first free one is "
      "taken; 0 picks any free port."},
     NOLIM, NULL},
    {{"metrics.latency.interval", SL_CT_DURATION, "0 ms", NULL,
      "Interval at which sources emit latency markers (Flink's latency tracking); 0 turns them "
      "off. Every operator a marker reaches records the time since its source made it in the "
      "`latency` histogram of the job's metrics. A job's \"config\" may set it too."},
     0, INT64_MAX, NULL},
    {{"metrics.latency.granularity", SL_CT_ENUM, "operator", "single,operator,subtask",
      "How latency histograms are told apart: single (per measuring operator subtask), operator "
      "(also per source), subtask (also per source subtask). Read by each TaskManager."},
     NOLIM, "SINGLE=single,OPERATOR=operator,SUBTASK=subtask"},
    {{"metrics.latency.history-size", SL_CT_INT, "128", NULL,
      "Latency markers each latency histogram keeps (the newest ones): its percentiles are "
      "over these."},
     1, 65536, NULL},
    {{"taskmanager.network.memory.buffer-debloat.enabled", SL_CT_BOOL, "false", NULL,
      "Buffer debloating: each input gate measures its throughput and announces a buffer size "
      "to its producers such that the data in flight before it takes about "
      "`buffer-debloat.target` to process; producers hand on buffers once they hold that much. "
      "Less in-flight data means barriers pass a backpressured job sooner."},
     NOLIM, NULL},
    {{"taskmanager.network.memory.buffer-debloat.target", SL_CT_DURATION, "1 s", NULL,
      "How long the data in flight before a gate should take to process (debloating on)."},
     1, INT64_MAX, NULL},
    {{"taskmanager.network.memory.buffer-debloat.period", SL_CT_DURATION, "200 ms", NULL,
      "How often a gate recomputes its buffer size (debloating on)."},
     1, INT64_MAX, NULL},
    {{"taskmanager.network.memory.buffer-debloat.samples", SL_CT_INT, "20", NULL,
      "Periods the throughput and buffer size are averaged over (an exponential moving "
      "average of this many samples)."},
     1, 1000000, NULL},
    {{"taskmanager.network.memory.buffer-debloat.threshold-percentages", SL_CT_INT, "25", NULL,
      "A new buffer size is announced only when it differs from the last one by at least this "
      "many percent."},
     0, 1000000, NULL},
    {{"taskmanager.memory.min-segment-size", SL_CT_MEMORY, "256b", NULL,
      "Smallest buffer size debloating announces."},
     64, SL_MAX_SEGMENT_BYTES, NULL},
    {{"high-availability.type", SL_CT_ENUM, "none", "none,zookeeper",
      "High availability: none (one JobManager), or zookeeper (standby JobManagers, leader "
      "election and job recovery through ZooKeeper; docs/HA.md)."},
     NOLIM, "NONE=none,ZOOKEEPER=zookeeper"},
    {{"high-availability.zookeeper.quorum", SL_CT_STRING, "", NULL,
      "ZooKeeper servers (host:port,host:port,...) when high-availability.type is zookeeper."},
     NOLIM, NULL},
    {{"high-availability.zookeeper.path.root", SL_CT_STRING, "/flink", NULL,
      "ZooKeeper node under which every cluster keeps its high-availability data."},
     NOLIM, NULL},
    {{"high-availability.cluster-id", SL_CT_STRING, "/default", NULL,
      "This cluster's node under path.root: JobManagers and TaskManagers with the same "
      "cluster-id form one cluster."},
     NOLIM, NULL},
    {{"high-availability.storageDir", SL_CT_STORE, "", NULL,
      "Directory (shared by every JobManager) or s3:// URL holding submitted job graphs and "
      "their C job objects; ZooKeeper keeps only pointers to them. Required with "
      "high-availability.type zookeeper."},
     NOLIM, NULL},
    {{"high-availability.zookeeper.client.session-timeout", SL_CT_DURATION, "60000 ms", NULL,
      "ZooKeeper session timeout: a leader silent for longer loses its leadership."},
     1, INT32_MAX, NULL},
    {{"high-availability.zookeeper.client.connection-timeout", SL_CT_DURATION, "15000 ms", NULL,
      "How long a daemon waits for its first ZooKeeper connection before giving up (the CLI's "
      "leader lookup)."},
     1, INT32_MAX, NULL},
    {{"sluice.local.print-file", SL_CT_STRING, "", NULL,
      "If set, print sinks append to this file instead of the TaskManager's stdout. "
      "**Accepted, but no sink reads it yet.**"},
     NOLIM, NULL},
};

#define NDEFS ((int)SL_ARRAY_LEN(defs))

/* Other names of keys in defs[]: Flink 2.x renamed some keys, and 1.x had
 * older spellings of others. Either sets the same slot. */
static const struct {
    const char *name, *key;
} aliases[] = {
    {"execution.checkpointing.dir", "state.checkpoints.dir"},
    {"execution.checkpointing.savepoint-dir", "state.savepoints.dir"},
    {"execution.checkpointing.num-retained", "state.checkpoints.num-retained"},
    {"state.backend", "state.backend.type"},
    {"state.backend.incremental", "execution.checkpointing.incremental"},
    {"execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled"},
    {"execution.checkpointing.alignment-timeout", "execution.checkpointing.aligned-checkpoint-timeout"},
    {"restart-strategy", "restart-strategy.type"},
    {"io.tmp.dirs", "taskmanager.tmp.dirs"},
    {"high-availability", "high-availability.type"},
    {"high-availability.zookeeper.storageDir", "high-availability.storageDir"},
};

/* Flink's keys that configure the JVM, Flink's deployment or features that
 * Sluice has not: accepted (so that Flink's config.yaml loads), not used,
 * named in one warning. A name ending in '.' is a family (a prefix). */
static const char *const ignored_keys[] = {
    "env.",                          /* env.java.opts.*, env.log.dir, env.pid.dir, ... */
    "jobmanager.memory.",            /* the JobManager's JVM memory model */
    "taskmanager.memory.flink.size", "taskmanager.memory.task.heap.size",
    "taskmanager.memory.task.off-heap.size",
    "taskmanager.memory.managed.fraction", "taskmanager.memory.network.min",
    "taskmanager.memory.network.max", "taskmanager.memory.network.fraction",
    "taskmanager.memory.jvm-metaspace.size", "taskmanager.memory.jvm-overhead.min",
    "taskmanager.memory.jvm-overhead.max", "taskmanager.memory.jvm-overhead.fraction",
    "taskmanager.memory.framework.heap.size", "taskmanager.memory.framework.off-heap.size",
    "taskmanager.cpu.cores",
    "jobmanager.execution.failover-strategy", /* Sluice restarts the whole job */
    "jobmanager.archive.fs.dir", "historyserver.",
    "blob.server.port", "query.server.port", "high-availability.",
    "classloader.", "pekko.", "akka.", "kubernetes.", "yarn.", "security.", "fs.", "s3.",
    "web.cancel.enable", "web.tmpdir",
    "state.checkpoint-storage", "execution.checkpointing.storage",  /* always the file system */
    "state.backend.rocksdb.", "metrics.", "rest.profiling.enabled",
    "cluster.evenly-spread-out-slots", "execution.runtime-mode", "pipeline.name",
    "python.", "table.",
};

static int is_ignored_key(const char *key)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(ignored_keys); i++) {
        const char *k = ignored_keys[i];
        size_t n = strlen(k);
        if (k[n - 1] == '.' ? !strncmp(key, k, n) && key[n] : !strcmp(key, k)) return 1;
    }
    return 0;
}

static const char *alias_of(const char *key)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(aliases); i++)
        if (!strcmp(aliases[i].name, key)) return aliases[i].key;
    return NULL;
}

struct sl_config {
    char *ignored;                   /* keys accepted but not used, "a,b", or NULL; owned */
    char *value[SL_ARRAY_LEN(defs)]; /* current text of each key, owned */
    int64_t num[SL_ARRAY_LEN(defs)]; /* parsed: ms, bytes, int, bool 0/1, enum index */
    double real[SL_ARRAY_LEN(defs)]; /* parsed DOUBLE values */
};

/* ------------------------------------------------------------------------ */
/* Parsers                                                                   */

/* Skip leading spaces; return the start of the rest. */
static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* Parse a run of decimal digits (at least one) into a non-negative int64.
 * Returns the end pointer, or NULL when there are no digits or it overflows. */
static const char *parse_digits(const char *s, int64_t *out)
{
    if (!isdigit((unsigned char)*s)) return NULL;
    int64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        int d = *s - '0';
        if (v > (INT64_MAX - d) / 10) return NULL;
        v = v * 10 + d;
    }
    *out = v;
    return s;
}

typedef struct {
    const char *name;
    int64_t factor;
} unit_def;

/* Number, optional spaces, optional unit word, optional trailing spaces;
 * an empty unit means a factor of 1. */
static int parse_with_unit(const char *s, const unit_def *units, size_t nunits, int64_t *out)
{
    int64_t v;
    const char *p = parse_digits(skip_ws(s), &v);
    if (!p) return SL_ERR;
    p = skip_ws(p);
    const char *u = p;
    while (isalpha((unsigned char)*p)) p++;
    size_t ulen = (size_t)(p - u);
    if (*skip_ws(p) != '\0') return SL_ERR;
    int64_t factor = 0;
    if (ulen == 0) {
        factor = 1;
    } else {
        for (size_t i = 0; i < nunits; i++) {
            if (strlen(units[i].name) == ulen && strncasecmp(units[i].name, u, ulen) == 0) {
                factor = units[i].factor;
                break;
            }
        }
    }
    if (factor == 0 || v > INT64_MAX / factor) return SL_ERR;
    *out = v * factor;
    return SL_OK;
}

/* Flink's duration: digits, an optional unit (lib/duration.c), no sign. */
int sl_parse_duration_ms(const char *s, int64_t *out)
{
    const char *p = skip_ws(s), *unit;
    size_t unit_len;
    if (*p == '+' || *p == '-') return SL_ERR;
    return sl_duration_parse(p, strlen(p), out, &unit, &unit_len) == SL_DUR_OK ? SL_OK : SL_ERR;
}

int sl_parse_memory(const char *s, int64_t *out)
{
    static const unit_def units[] = {
        {"b", 1},
        {"bytes", 1},
        {"k", 1024},
        {"kb", 1024},
        {"kibibytes", 1024},
        {"m", 1024 * 1024},
        {"mb", 1024 * 1024},
        {"mebibytes", 1024 * 1024},
        {"g", 1024LL * 1024 * 1024},
        {"gb", 1024LL * 1024 * 1024},
        {"gibibytes", 1024LL * 1024 * 1024},
        {"t", 1024LL * 1024 * 1024 * 1024},
        {"tb", 1024LL * 1024 * 1024 * 1024},
        {"tebibytes", 1024LL * 1024 * 1024 * 1024},
    };
    return parse_with_unit(s, units, SL_ARRAY_LEN(units), out);
}

int sl_parse_int(const char *s, int64_t *out)
{
    const char *p = skip_ws(s);
    int neg = 0;
    if (*p == '+' || *p == '-') neg = (*p++ == '-');
    if (!isdigit((unsigned char)*p)) return SL_ERR;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > (uint64_t)INT64_MAX + 1) return SL_ERR;
    }
    if (*skip_ws(p) != '\0') return SL_ERR;
    if (!neg && v > (uint64_t)INT64_MAX) return SL_ERR;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return SL_OK;
}

int sl_parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"true", "yes", "on", "1"};
    static const char *no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < SL_ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) { *out = 1; return SL_OK; }
        if (strcasecmp(s, no[i]) == 0) { *out = 0; return SL_OK; }
    }
    return SL_ERR;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

static int find_def(const char *key)
{
    for (int i = 0; i < NDEFS; i++)
        if (strcmp(defs[i].k.key, key) == 0) return i;
    return -1;
}

/* The declared key closest to `key`, or NULL if none is close enough to be
 * a plausible typo. */
static const char *closest_key(const char *key)
{
    size_t limit = strlen(key) >= 12 ? 3 : 2, best = (size_t)-1;
    const char *found = NULL;
    for (int i = 0; i < NDEFS; i++) {
        size_t d = (size_t)sl_edit_distance(key, defs[i].k.key);
        if (d < best) { best = d; found = defs[i].k.key; }
    }
    return best <= limit ? found : NULL;
}

const char *sl_closest(const char *key, const char *const *choices)
{
    size_t limit = strlen(key) >= 12 ? 3 : 2, best = (size_t)-1;
    const char *found = NULL;
    for (const char *const *c = choices; *c; c++) {
        size_t d = (size_t)sl_edit_distance(key, *c);
        if (d < best) { best = d; found = *c; }
    }
    return best <= limit ? found : NULL;
}

/* Find `value` among the comma-separated `list`, case-insensitively.
 * Returns its index and its canonical spelling, or -1. */
static int find_choice(const char *list, const char *value, const char **canon, size_t *canon_len)
{
    size_t vlen = strlen(value);
    int idx = 0;
    for (const char *p = list; *p; idx++) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == vlen && strncasecmp(p, value, n) == 0) {
            *canon = p;
            *canon_len = n;
            return idx;
        }
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

/* Resolve an ENUM value (or one of its aliases) to its choice index. */
static int enum_index(const sl_conf_def *d, const char *value, const char **canon,
                      size_t *canon_len)
{
    int idx = find_choice(d->k.choices, value, canon, canon_len);
    if (idx >= 0 || !d->aliases) return idx;
    size_t vlen = strlen(value);
    for (const char *p = d->aliases; *p;) {
        const char *eq = strchr(p, '=');
        const char *e = strchr(p, ',');
        if (!eq) break;
        if ((size_t)(eq - p) == vlen && strncasecmp(p, value, vlen) == 0) {
            char target[64];
            size_t tn = e ? (size_t)(e - eq - 1) : strlen(eq + 1);
            if (tn >= sizeof target) break;
            memcpy(target, eq + 1, tn);
            target[tn] = '\0';
            return find_choice(d->k.choices, target, canon, canon_len);
        }
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

const char *sl_conf_type_name(const sl_conf_key *k)
{
    switch (k->type) {
    case SL_CT_STRING: return "string";
    case SL_CT_INT: return "integer";
    case SL_CT_PORT: return "port";
    case SL_CT_DURATION: return "duration";
    case SL_CT_MEMORY: return "memory size";
    case SL_CT_BOOL: return "boolean";
    case SL_CT_ENUM: return k->choices;
    case SL_CT_DOUBLE: return "number";
    case SL_CT_PATH: return "directory (a path or file:// URI)";
    case SL_CT_STORE: return "directory (a path, file:// URI or s3://bucket/path)";
    case SL_CT_JSON: return "JSON";
    }
    return "?";
}

/* "<origin>: " or nothing. */
#define ORIGIN_FMT "%s%s"
#define ORIGIN_ARGS(o) ((o) ? (o) : ""), ((o) ? ": " : "")

/* The one value parser, for the cluster's keys and operator options alike
 * (see config.h). */
int sl_conf_parse_value(const sl_conf_key *k, int64_t min, int64_t max, const char *alias_list,
                        const char *label, const char *value, const char *origin,
                        sl_conf_value *out, char *err, size_t errlen)
{
    const sl_conf_def dd = {*k, min, max, alias_list}, *d = &dd;
    const char *key = label ? label : k->key;
    int64_t num = 0;
    double real = 0;
    char *text = NULL;

    switch (d->k.type) {
    case SL_CT_STRING:
    case SL_CT_JSON:
        break;
    case SL_CT_PATH:
    case SL_CT_STORE: {
        char why[256];
        if (d->k.type == SL_CT_STORE && sl_store_is_s3(value)) {
            if (sl_store_check_url(value, why, sizeof why) != SL_OK)
                return sl_seterr(err, errlen, ORIGIN_FMT "%s: %s", ORIGIN_ARGS(origin), key, why);
            size_t n = strlen(value);
            while (n && value[n - 1] == '/') n--; /* "s3://b/ck/" is "s3://b/ck" */
            text = sl_strndup(value, n);
            break;
        }
        text = *value ? sl_config_local_path(value, why, sizeof why) : sl_strdup("");
        if (!text)
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: %s", ORIGIN_ARGS(origin), key, why);
        break;
    }
    case SL_CT_INT:
        if (sl_parse_int(value, &num) != SL_OK)
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is not an integer",
                             ORIGIN_ARGS(origin), key, value);
        break;
    case SL_CT_PORT:
        if (sl_parse_int(value, &num) != SL_OK || num < 0 || num > 65535)
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is not a port number (0-65535)",
                             ORIGIN_ARGS(origin), key, value);
        break;
    case SL_CT_DURATION:
        if (sl_parse_duration_ms(value, &num) != SL_OK)
            return sl_seterr(err, errlen,
                             ORIGIN_FMT "%s: '%s' is not a duration (like '500 ms', '10 s', "
                                        "'1 min', '2 h', '1 d'; a bare number is milliseconds)",
                             ORIGIN_ARGS(origin), key, value);
        break;
    case SL_CT_MEMORY:
        if (sl_parse_memory(value, &num) != SL_OK)
            return sl_seterr(err, errlen,
                             ORIGIN_FMT "%s: '%s' is not a memory size (like '32kb', '64 mb', "
                                        "'1g'; a bare number is bytes)",
                             ORIGIN_ARGS(origin), key, value);
        break;
    case SL_CT_BOOL: {
        int b;
        if (sl_parse_bool(value, &b) != SL_OK)
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is not a boolean (true or false)",
                             ORIGIN_ARGS(origin), key, value);
        num = b;
        break;
    }
    case SL_CT_ENUM: {
        const char *canon;
        size_t canon_len;
        if (!*value && !*d->k.dflt) {
            /* an enum without a default: empty is "not set" */
            num = -1;
            break;
        }
        int idx = enum_index(d, value, &canon, &canon_len);
        if (idx < 0) {
            char choices[256];
            snprintf(choices, sizeof choices, "%s", d->k.choices);
            for (char *p = choices; (p = strchr(p, ',')) != NULL;) {
                /* "a,b" reads better as "a, b" */
                size_t rest = strlen(p + 1) + 1;
                if ((size_t)(p - choices) + 2 + rest > sizeof choices) break;
                memmove(p + 2, p + 1, rest);
                p[1] = ' ';
                p += 2;
            }
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is not one of: %s",
                             ORIGIN_ARGS(origin), key, value, choices);
        }
        num = idx;
        text = sl_strndup(canon, canon_len);
        break;
    }
    case SL_CT_DOUBLE: {
        char *end = NULL;
        const char *v = skip_ws(value);
        errno = 0;
        real = *v ? strtod(v, &end) : 0;
        if (!*v || errno || !end || *skip_ws(end) || !isfinite(real))
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is not a number",
                             ORIGIN_ARGS(origin), key, value);
        if (real < (double)d->min || real > (double)d->max)
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is out of range (%lld to %lld)",
                             ORIGIN_ARGS(origin), key, value, (long long)d->min,
                             (long long)d->max);
        break;
    }
    }

    if (d->k.type == SL_CT_INT || d->k.type == SL_CT_DURATION || d->k.type == SL_CT_MEMORY) {
        if (num < d->min || num > d->max) {
            char lo[32] = "", hi[32] = "";
            if (d->min != INT64_MIN) snprintf(lo, sizeof lo, "%lld", (long long)d->min);
            if (d->max != INT64_MAX) snprintf(hi, sizeof hi, "%lld", (long long)d->max);
            const char *unit = d->k.type == SL_CT_DURATION ? " ms"
                               : d->k.type == SL_CT_MEMORY ? " bytes"
                                                           : "";
            if (*lo && *hi)
                return sl_seterr(err, errlen,
                                 ORIGIN_FMT "%s: '%s' is out of range (%s to %s%s)",
                                 ORIGIN_ARGS(origin), key, value, lo, hi, unit);
            return sl_seterr(err, errlen, ORIGIN_FMT "%s: '%s' is out of range (%s %s%s)",
                             ORIGIN_ARGS(origin), key, value, *lo ? "at least" : "at most",
                             *lo ? lo : hi, unit);
        }
    }

    out->text = text ? text : sl_strdup(value);
    out->num = num;
    out->real = real;
    return SL_OK;
}

/* Check `value` against row `i`; on success store it (canonical text for
 * ENUM) with its parsed number. */
static int set_index(sl_config *c, int i, const char *value, const char *origin, char *err,
                     size_t errlen)
{
    const sl_conf_def *d = &defs[i];
    sl_conf_value v;
    if (sl_conf_parse_value(&d->k, d->min, d->max, d->aliases, NULL, value, origin, &v, err,
                            errlen) != SL_OK)
        return SL_ERR;
    free(c->value[i]);
    c->value[i] = v.text;
    c->num[i] = v.num;
    c->real[i] = v.real;
    return SL_OK;
}

sl_config *sl_config_new(void)
{
    sl_config *c = sl_calloc(1, sizeof *c);
    for (int i = 0; i < NDEFS; i++) {
        char err[256];
        int rc = set_index(c, i, defs[i].k.dflt, "default", err, sizeof err);
        if (rc != SL_OK) sl_assert_fail(err, __FILE__, __LINE__);
    }
    return c;
}

void sl_config_destroy(sl_config *c)
{
    if (!c) return;
    for (int i = 0; i < NDEFS; i++) free(c->value[i]);
    free(c->ignored);
    free(c);
}

int sl_config_set(sl_config *c, const char *key, const char *value, const char *origin,
                  char *err, size_t errlen)
{
    int i = find_def(key);
    if (i < 0 && alias_of(key)) i = find_def(alias_of(key));
    if (i < 0) {
        const char *hint = closest_key(key);
        if (!hint && is_ignored_key(key)) {
            /* Flink's, not Sluice's: remember it for the one warning */
            size_t n = strlen(key);
            int seen = 0;
            for (const char *p = c->ignored; p && (p = strstr(p, key)); p += n)
                seen |= (p == c->ignored || p[-1] == ',') && (p[n] == ',' || !p[n]);
            if (!seen) {
                char *list = c->ignored ? sl_sprintf("%s,%s", c->ignored, key) : sl_strdup(key);
                free(c->ignored);
                c->ignored = list;
            }
            return SL_OK;
        }
        if (hint)
            return sl_seterr(err, errlen,
                             ORIGIN_FMT "unknown configuration key '%s'; did you mean '%s'?",
                             ORIGIN_ARGS(origin), key, hint);
        return sl_seterr(err, errlen, ORIGIN_FMT "unknown configuration key '%s'",
                         ORIGIN_ARGS(origin), key);
    }
    return set_index(c, i, value, origin, err, errlen);
}

/* Trim spaces and tabs at both ends, in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

int sl_config_set_kv(sl_config *c, const char *kv, char *err, size_t errlen)
{
    const char *eq = strchr(kv, '=');
    if (!eq) return sl_seterr(err, errlen, "-D: expected key=value, got '%s'", kv);
    char *copy = sl_strdup(kv);
    copy[eq - kv] = '\0';
    char *key = trim(copy), *value = trim(copy + (eq - kv) + 1);
    int rc;
    if (*key == '\0')
        rc = sl_seterr(err, errlen, "-D: expected key=value, got '%s'", kv);
    else
        rc = sl_config_set(c, key, value, "-D", err, errlen);
    free(copy);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* YAML                                                                      */

/* One open block map: the line `name:` at `indent` whose children are
 * indented by `child_indent` (-1 until the first child is seen). */
typedef struct {
    int indent;
    int child_indent;
    char *prefix; /* dotted name of the map; "" for the document */
} yaml_frame;

typedef struct {
    sl_config *c;
    const char *origin;
    int lineno;
    char *err;
    size_t errlen;
    yaml_frame stack[32];
    int depth;
    char *pending;      /* dotted key of a `key:` line not yet known to be a map */
    int pending_indent;
    int pending_line;
} yaml_reader;

static int yaml_fail(yaml_reader *r, int line, const char *msg, const char *arg)
{
    return sl_seterr(r->err, r->errlen, "%s:%d: %s%s%s%s", r->origin, line, msg,
                     arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
}

static int yaml_apply(yaml_reader *r, int line, const char *key, const char *value)
{
    char where[512];
    snprintf(where, sizeof where, "%s:%d", r->origin, line);
    return sl_config_set(r->c, key, value, where, r->err, r->errlen);
}

/* A `key:` line with nothing after it turned out not to open a map: it sets
 * the key to the empty value. */
static int yaml_flush_pending(yaml_reader *r)
{
    int rc = SL_OK;
    if (r->pending) {
        rc = yaml_apply(r, r->pending_line, r->pending, "");
        free(r->pending);
        r->pending = NULL;
    }
    return rc;
}

/* Parse a quoted value starting at `s` (on the quote) into `out` (which has
 * room for strlen(s) bytes); return the position after the closing quote or
 * NULL if unterminated or with a bad escape. */
static const char *yaml_unquote(const char *s, char *out)
{
    char q = *s++;
    size_t n = 0;
    for (;;) {
        char ch = *s++;
        if (ch == '\0') return NULL;
        if (ch == q) {
            if (q == '\'' && *s == '\'') { out[n++] = '\''; s++; continue; }
            break;
        }
        if (q == '"' && ch == '\\') {
            char e = *s++;
            switch (e) {
            case '\\': out[n++] = '\\'; break;
            case '"': out[n++] = '"'; break;
            case '/': out[n++] = '/'; break;
            case 'n': out[n++] = '\n'; break;
            case 't': out[n++] = '\t'; break;
            case 'r': out[n++] = '\r'; break;
            default: return NULL;
            }
            continue;
        }
        out[n++] = ch;
    }
    out[n] = '\0';
    return s;
}

static int valid_key_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '.' || ch == '_' || ch == '-';
}

/* Handle one line (NUL-terminated, no newline). */
static int yaml_line(yaml_reader *r, char *line)
{
    int ln = r->lineno;
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';

    int indent = 0;
    while (line[indent] == ' ') indent++;
    if (line[indent] == '\t') {
        /* A tab after only spaces is indentation unless the line is blank. */
        const char *p = line + indent;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '\0' && *p != '#')
            return yaml_fail(r, ln, "tab character used for indentation (use spaces)", NULL);
    }
    char *content = line + indent;
    {
        const char *p = skip_ws(content);
        if (*p == '\0' || *p == '#') return SL_OK; /* blank or comment */
    }
    if (content[0] == '-' && (content[1] == ' ' || content[1] == '\0'))
        return yaml_fail(r, ln, "lists are not supported in the configuration", NULL);
    if (strncmp(content, "---", 3) == 0 || strncmp(content, "...", 3) == 0)
        return yaml_fail(r, ln, "multiple YAML documents are not supported", NULL);

    /* The key ends at the first ':' followed by a space or the line's end. */
    char *colon = NULL;
    for (char *p = content; *p; p++) {
        if (*p == '#' && p > content && (p[-1] == ' ' || p[-1] == '\t')) break;
        if (*p == ':' && (p[1] == ' ' || p[1] == '\t' || p[1] == '\0')) { colon = p; break; }
    }
    if (!colon) {
        char shown[80];
        snprintf(shown, sizeof shown, "%s", content);
        return yaml_fail(r, ln, "expected 'key: value', got", shown);
    }
    *colon = '\0';
    char *key = trim(content);
    if (*key == '\0') return yaml_fail(r, ln, "missing key before ':'", NULL);
    for (const char *p = key; *p; p++)
        if (!valid_key_char(*p)) return yaml_fail(r, ln, "invalid configuration key", key);

    /* The value: quoted, plain up to a comment, or nothing. */
    char *rest = (char *)skip_ws(colon + 1);
    int has_value = 1;
    char *value = rest;
    if (*rest == '\0' || *rest == '#') {
        has_value = 0;
    } else if (*rest == '"' || *rest == '\'') {
        const char *after = yaml_unquote(rest, rest); /* unquoting only shrinks */
        if (!after) return yaml_fail(r, ln, "unterminated quoted value or bad escape", NULL);
        after = skip_ws(after);
        if (*after != '\0' && *after != '#')
            return yaml_fail(r, ln, "unexpected text after the closing quote", NULL);
    } else if (*rest == '[' || *rest == '{') {
        return yaml_fail(r, ln,
                         *rest == '[' ? "lists are not supported in the configuration (quote "
                                        "the value if it is text)"
                                      : "inline maps are not supported in the configuration",
                         NULL);
    } else if (*rest == '|' || *rest == '>') {
        return yaml_fail(r, ln, "multi-line values are not supported (quote the value)", NULL);
    } else {
        for (char *p = rest; *p; p++) {
            if (*p == '#' && (p[-1] == ' ' || p[-1] == '\t')) { *p = '\0'; break; }
        }
        value = trim(rest);
    }

    /* Place the line in the tree of open maps. */
    if (r->pending) {
        if (indent > r->pending_indent) {
            if (r->depth == (int)SL_ARRAY_LEN(r->stack))
                return yaml_fail(r, ln, "maps nested too deeply", NULL);
            yaml_frame *f = &r->stack[r->depth++];
            f->indent = r->pending_indent;
            f->child_indent = indent;
            f->prefix = r->pending;
            r->pending = NULL;
        } else if (yaml_flush_pending(r) != SL_OK) {
            return SL_ERR;
        }
    }
    while (r->depth > 1 && r->stack[r->depth - 1].indent >= indent) {
        free(r->stack[r->depth - 1].prefix);
        r->depth--;
    }
    yaml_frame *top = &r->stack[r->depth - 1];
    if (top->child_indent < 0) top->child_indent = indent;
    if (indent != top->child_indent)
        return yaml_fail(r, ln, "inconsistent indentation", NULL);

    char *full = *top->prefix ? sl_sprintf("%s.%s", top->prefix, key) : sl_strdup(key);
    if (!has_value) {
        r->pending = full;
        r->pending_indent = indent;
        r->pending_line = ln;
        return SL_OK;
    }
    int rc = yaml_apply(r, ln, full, value);
    free(full);
    return rc;
}

int sl_config_load_text(sl_config *c, const char *text, const char *origin, char *err,
                        size_t errlen)
{
    yaml_reader r = {.c = c, .origin = origin ? origin : "config", .err = err, .errlen = errlen};
    r.stack[0] = (yaml_frame){.indent = -1, .child_indent = -1, .prefix = sl_strdup("")};
    r.depth = 1;

    char *copy = sl_strdup(text);
    int rc = SL_OK;
    char *line = copy;
    while (rc == SL_OK && line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        r.lineno++;
        rc = yaml_line(&r, line);
        line = nl ? nl + 1 : NULL;
    }
    if (rc == SL_OK) rc = yaml_flush_pending(&r);
    free(r.pending);
    for (int i = 0; i < r.depth; i++) free(r.stack[i].prefix);
    free(copy);
    return rc;
}

int sl_config_load_file(sl_config *c, const char *path, int required, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT && !required) return SL_OK;
        if (errno == ENOENT)
            return sl_seterr(err, errlen, "configuration file '%s' does not exist", path);
        return sl_seterr(err, errlen, "cannot open configuration file '%s': %s", path,
                         strerror(errno));
    }
    size_t cap = 4096, len = 0;
    char *buf = sl_malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) buf = sl_realloc(buf, cap *= 2);
    }
    int rc = SL_OK;
    if (ferror(f))
        rc = sl_seterr(err, errlen, "cannot read configuration file '%s': %s", path,
                       strerror(errno));
    fclose(f);
    buf[len] = '\0';
    if (rc == SL_OK && memchr(buf, '\0', len))
        rc = sl_seterr(err, errlen, "%s: not a text file (contains a NUL byte)", path);
    if (rc == SL_OK) rc = sl_config_load_text(c, buf, path, err, errlen);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

static void print_help(FILE *out, const char *prog, const char *default_path)
{
    fprintf(out,
            "Usage: %s [--config FILE] [-D key=value]... [--help]\n"
            "\n"
            "  --config FILE   read the configuration from FILE%s%s%s\n"
            "  -D key=value    set one configuration key (also -Dkey=value)\n"
            "  --help          print this help and exit\n"
            "\n"
            "Later sources override earlier ones: defaults, the configuration file,\n"
            "the SLUICE_PROPERTIES environment variable (YAML lines), then -D.\n"
            "Durations: '500 ms', '10 s', '1 min', '2 h', '1 d' (a bare number is ms).\n"
            "Memory sizes: '32kb', '64 mb', '1g' (a bare number is bytes).\n"
            "\n"
            "Configuration keys:\n",
            prog, default_path ? " (default " : "", default_path ? default_path : "",
            default_path ? ")" : "");
    for (int i = 0; i < NDEFS; i++) {
        const sl_conf_def *d = &defs[i];
        fprintf(out, "  %s  [%s, default %s%s%s]\n      %s\n", d->k.key, sl_conf_type_name(&d->k),
                *d->k.dflt ? "'" : "", *d->k.dflt ? d->k.dflt : "empty", *d->k.dflt ? "'" : "",
                d->k.description);
    }
}

int sl_config_from_args(sl_config *c, int argc, char **argv, const char *default_path,
                        char *err, size_t errlen)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "sluice";
    const char *slash = strrchr(prog, '/');
    if (slash) prog = slash + 1;
    const char *config_path = NULL;

    /* First pass: check every argument, find --config and --help. */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(stdout, prog, default_path);
            return SL_DONE;
        } else if (strcmp(a, "--config") == 0) {
            if (i + 1 >= argc) return sl_seterr(err, errlen, "--config needs a file name");
            config_path = argv[++i];
        } else if (strncmp(a, "--config=", 9) == 0) {
            config_path = a + 9;
        } else if (strcmp(a, "-D") == 0) {
            if (i + 1 >= argc) return sl_seterr(err, errlen, "-D needs key=value");
            i++;
        } else if (strncmp(a, "-D", 2) == 0) {
            /* -Dkey=value */
        } else {
            return sl_seterr(err, errlen, "unknown argument '%s' (try --help)", a);
        }
    }
    if (config_path && *config_path == '\0')
        return sl_seterr(err, errlen, "--config needs a file name");

    if (config_path) {
        if (sl_config_load_file(c, config_path, 1, err, errlen) != SL_OK) return SL_ERR;
    } else if (default_path) {
        if (sl_config_load_file(c, default_path, 0, err, errlen) != SL_OK) return SL_ERR;
    }
    const char *props = getenv("SLUICE_PROPERTIES");
    if (props && sl_config_load_text(c, props, "SLUICE_PROPERTIES", err, errlen) != SL_OK)
        return SL_ERR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--config") == 0) {
            i++;
        } else if (strcmp(a, "-D") == 0) {
            if (sl_config_set_kv(c, argv[++i], err, errlen) != SL_OK) return SL_ERR;
        } else if (strncmp(a, "-D", 2) == 0) {
            if (sl_config_set_kv(c, a + 2, err, errlen) != SL_OK) return SL_ERR;
        }
    }
    if (c->ignored)
        sl_warn("config", "Accepted but not used (Flink's JVM or features Sluice has not): %s",
                c->ignored);
    return sl_config_check(c, err, errlen);
}

const char *sl_config_ignored(const sl_config *c)
{
    return c->ignored;
}

char *sl_config_local_path(const char *value, char *err, size_t errlen)
{
    const char *p = value;
    if (!strncmp(p, "file://", 7)) {
        p += 7;
        if (!strncmp(p, "localhost/", 10)) p += 9;
        if (*p != '/') {
            sl_seterr(err, errlen, "'%s' names a host; Sluice writes to local directories only "
                      "(file:///path or /path)", value);
            return NULL;
        }
    } else if (!strncmp(p, "file:", 5)) {
        p += 5;
    } else {
        const char *colon = strstr(p, "://");
        if (colon) {
            sl_seterr(err, errlen, "'%s': the %.*s:// file system is not supported; Sluice writes "
                      "to local directories only (file:///path or /path)", value,
                      (int)SL_MIN((size_t)(colon - p), (size_t)32), p);
            return NULL;
        }
    }
    if (!*p) {
        sl_seterr(err, errlen, "'%s' names no directory", value);
        return NULL;
    }
    return sl_strdup(p);
}

int sl_config_check(const sl_config *c, char *err, size_t errlen)
{
    int64_t hi = sl_config_int(c, "heartbeat.interval"), ht = sl_config_int(c, "heartbeat.timeout");
    if (ht <= hi)
        return sl_seterr(err, errlen,
                         "heartbeat.timeout (%lld ms) must be larger than heartbeat.interval "
                         "(%lld ms): a peer would be declared lost between two heartbeats",
                         (long long)ht, (long long)hi);
    int64_t mc = sl_config_int(c, "execution.checkpointing.max-concurrent-checkpoints");
    if (mc != 1)
        return sl_seterr(err, errlen,
                         "execution.checkpointing.max-concurrent-checkpoints: %lld is not "
                         "supported: Sluice runs one checkpoint at a time (set it to 1)",
                         (long long)mc);
    int64_t ib = sl_config_int(c, "restart-strategy.exponential-delay.initial-backoff");
    int64_t mb = sl_config_int(c, "restart-strategy.exponential-delay.max-backoff");
    if (ib > mb)
        return sl_seterr(err, errlen,
                         "restart-strategy.exponential-delay.initial-backoff (%lld ms) must not "
                         "be larger than restart-strategy.exponential-delay.max-backoff (%lld ms)",
                         (long long)ib, (long long)mb);
    return SL_OK;
}

/* ------------------------------------------------------------------------ */
/* Getters                                                                   */

static int must_find(const char *key)
{
    int i = find_def(key);
    if (i < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "configuration key '%s' is declared", key);
        sl_assert_fail(msg, __FILE__, __LINE__);
    }
    return i;
}

const char *sl_config_str(const sl_config *c, const char *key)
{
    return c->value[must_find(key)];
}

int64_t sl_config_int(const sl_config *c, const char *key)
{
    int i = must_find(key);
    SL_ASSERT(defs[i].k.type != SL_CT_STRING && defs[i].k.type != SL_CT_DOUBLE &&
              defs[i].k.type != SL_CT_PATH && defs[i].k.type != SL_CT_STORE);
    return c->num[i];
}

double sl_config_double(const sl_config *c, const char *key)
{
    int i = must_find(key);
    SL_ASSERT(defs[i].k.type == SL_CT_DOUBLE);
    return c->real[i];
}

int sl_config_bool(const sl_config *c, const char *key)
{
    int i = must_find(key);
    SL_ASSERT(defs[i].k.type == SL_CT_BOOL);
    return (int)c->num[i];
}

const char *sl_config_restart_strategy(const sl_config *c)
{
    const char *rs = sl_config_str(c, "restart-strategy.type");
    if (*rs) return rs;
    return sl_config_int(c, "execution.checkpointing.interval") > 0 ? "exponential-delay" : "none";
}

int sl_config_count(const sl_config *c)
{
    SL_UNUSED(c);
    return NDEFS;
}

void sl_config_entry(const sl_config *c, int i, const char **key, const char **value)
{
    SL_ASSERT(i >= 0 && i < NDEFS);
    if (key) *key = defs[i].k.key;
    if (value) *value = c->value[i];
}

/* ------------------------------------------------------------------------ */
/* Documentation                                                             */

/* A markdown table cell: '|' escaped, so a description may contain one. */
static void md_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
}

/* An ENUM's choices read better as "a, b" in a table. */
void sl_conf_print_type(FILE *out, const sl_conf_key *k)
{
    const char *t = sl_conf_type_name(k);
    for (; *t; t++) {
        fputc(*t, out);
        if (k->type == SL_CT_ENUM && *t == ',') fputc(' ', out);
    }
}

void sl_config_print_docs(FILE *out)
{
    fprintf(out, "| key | Flink's name | type | default | what Sluice does with it |\n"
                 "| --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < NDEFS; i++) {
        const sl_conf_def *d = &defs[i];
        fprintf(out, "| `%s` | ", d->k.key);
        int nalias = 0;
        for (size_t a = 0; a < SL_ARRAY_LEN(aliases); a++)
            if (!strcmp(aliases[a].key, d->k.key))
                fprintf(out, "%s`%s`", nalias++ ? ", " : "also ", aliases[a].name);
        if (!nalias) fputs("same", out);
        fputs(" | ", out);
        sl_conf_print_type(out, &d->k);
        if (*d->k.dflt) fprintf(out, " | '%s' | ", d->k.dflt);
        else fputs(" | empty | ", out);
        md_cell(out, d->k.description);
        fputs(" |\n", out);
    }
}
