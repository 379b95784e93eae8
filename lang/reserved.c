/*
 * reserved.c -- the words Flink SQL reserves (Flink 2.3's parser,
 * FlinkSqlParserImpl: its metadata's reserved words, in strcasecmp order, 432 of them). Used
 * unquoted as a name -- a column, an alias, a table, a view -- one is a
 * parse error in Flink ("Encountered ..."), so it is here too, with a hint
 * to back-quote it. Function names (a word before '('), the niladic
 * functions (CURRENT_TIMESTAMP) and the words of Sluice's own syntax are
 * not names and are not checked.
 */
#include <string.h>
#include <strings.h>

#include "parse.h"

static const char *const reserved[] = {
    "ABS", "ALL", "ALLOCATE", "ALLOW", "ALTER", "AND", "ANY", "ARE", "ARRAY",
    "ARRAY_CONCAT_AGG", "ARRAY_MAX_CARDINALITY", "AS", "ASENSITIVE", "ASYMMETRIC", "AT",
    "ATOMIC", "AUTHORIZATION", "AVG", "BEGIN", "BEGIN_FRAME", "BEGIN_PARTITION", "BETWEEN",
    "BIGINT", "BINARY", "BIT", "BITMAP", "BLOB", "BOOLEAN", "BOTH", "BUCKETS", "BY", "BYTES",
    "CALL", "CALLED", "CARDINALITY", "CASCADED", "CASE", "CAST", "CATALOGS", "CEIL", "CEILING",
    "CHAR", "CHAR_LENGTH", "CHARACTER", "CHARACTER_LENGTH", "CHECK", "CLASSIFIER", "CLOB",
    "CLOSE", "COALESCE", "COLLATE", "COLLECT", "COLUMN", "COMMENT", "COMMIT", "CONDITION",
    "CONNECT", "CONNECTIONS", "CONSTRAINT", "CONTAINS", "CONTAINS_SUBSTR", "CONTINUOUS",
    "CONVERT", "CORR", "CORRESPONDING", "COUNT", "COVAR_POP", "COVAR_SAMP", "CREATE", "CROSS",
    "CUBE", "CUME_DIST", "CURRENT", "CURRENT_CATALOG", "CURRENT_DATE",
    "CURRENT_DEFAULT_TRANSFORM_GROUP", "CURRENT_PATH", "CURRENT_ROLE", "CURRENT_ROW",
    "CURRENT_SCHEMA", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_TRANSFORM_GROUP_FOR_TYPE",
    "CURRENT_USER", "CURSOR", "CYCLE", "DATABASES", "DATE", "DATE_TRUNC", "DATETIME",
    "DATETIME_TRUNC", "DAY", "DEALLOCATE", "DEC", "DECIMAL", "DECLARE", "DEFAULT", "DEFINE",
    "DELETE", "DENSE_RANK", "DEREF", "DESCRIBE", "DETERMINISTIC", "DISALLOW", "DISCONNECT",
    "DISTINCT", "DISTRIBUTED", "DISTRIBUTION", "DOT", "DOUBLE", "DROP", "DYNAMIC", "EACH",
    "ELEMENT", "ELSE", "EMPTY", "END", "END_FRAME", "END_PARTITION", "EQUALS", "ESCAPE",
    "EVERY", "EXCEPT", "EXEC", "EXECUTE", "EXISTS", "EXP", "EXPLAIN", "EXTEND", "EXTENDED",
    "EXTERNAL", "EXTRACT", "FALSE", "FETCH", "FILTER", "FIRST_VALUE", "FLOAT", "FLOOR", "FOR",
    "FOREIGN", "FRAME_ROW", "FREE", "FRESHNESS", "FRIDAY", "FROM", "FULL", "FUNCTION",
    "FUNCTIONS", "FUSION", "GET", "GLOBAL", "GRANT", "GROUP", "GROUP_CONCAT", "GROUPING",
    "GROUPS", "HASH", "HAVING", "HOLD", "HOUR", "IDENTITY", "ILIKE", "IMPORT", "IN", "INCLUDE",
    "INDICATOR", "INITIAL", "INNER", "INOUT", "INSENSITIVE", "INSERT", "INT", "INTEGER",
    "INTERSECT", "INTERSECTION", "INTERVAL", "INTO", "IS", "JOIN", "JSON_ARRAY",
    "JSON_ARRAYAGG", "JSON_EXISTS", "JSON_OBJECT", "JSON_OBJECTAGG", "JSON_QUERY", "JSON_SCOPE",
    "JSON_VALUE", "LAG", "LANGUAGE", "LARGE", "LAST_VALUE", "LATERAL", "LEAD", "LEADING",
    "LEFT", "LIKE", "LIKE_REGEX", "LIMIT", "LN", "LOCAL", "LOCALTIME", "LOCALTIMESTAMP",
    "LOWER", "MATCH", "MATCH_NUMBER", "MATCH_RECOGNIZE", "MATCHES", "MATERIALIZED", "MAX",
    "MEASURES", "MEMBER", "MERGE", "METHOD", "MIN", "MINUS", "MINUTE", "MOD", "MODELS",
    "MODIFIES", "MODIFY", "MODULE", "MODULES", "MONDAY", "MONTH", "MULTISET", "NATIONAL",
    "NATURAL", "NCHAR", "NCLOB", "NEW", "NEXT", "NO", "NONE", "NORMALIZE", "NOT", "NTH_VALUE",
    "NTILE", "NULL", "NULLIF", "NUMERIC", "OCCURRENCES_REGEX", "OCTET_LENGTH", "OF", "OFFSET",
    "OLD", "OMIT", "ON", "ONE", "ONLY", "OPEN", "OR", "ORDER", "ORDINAL", "OUT", "OUTER",
    "OVER", "OVERLAPS", "OVERLAY", "PARAMETER", "PARTITION", "PATTERN", "PER", "PERCENT",
    "PERCENT_RANK", "PERCENTILE_CONT", "PERCENTILE_DISC", "PERIOD", "PERMUTE", "PIVOT",
    "PORTION", "POSITION", "POSITION_REGEX", "POWER", "PRECEDES", "PRECISION", "PREPARE",
    "PREV", "PRIMARY", "PROCEDURE", "PROCEDURES", "QUALIFY", "QUARTERS", "RANGE", "RANK", "RAW",
    "READS", "REAL", "RECURSIVE", "REF", "REFERENCES", "REFERENCING", "REFRESH", "REFRESH_MODE",
    "REGR_AVGX", "REGR_AVGY", "REGR_COUNT", "REGR_INTERCEPT", "REGR_R2", "REGR_SLOPE",
    "REGR_SXX", "REGR_SXY", "REGR_SYY", "RELEASE", "RENAME", "RESET", "RESULT", "RESUME",
    "RETURN", "RETURNS", "REVOKE", "RIGHT", "RLIKE", "ROLLBACK", "ROLLUP", "ROW", "ROW_NUMBER",
    "ROWS", "RUNNING", "SAFE_CAST", "SAFE_OFFSET", "SAFE_ORDINAL", "SATURDAY", "SAVEPOINT",
    "SCALA", "SCOPE", "SCROLL", "SEARCH", "SECOND", "SEEK", "SELECT", "SENSITIVE", "SEPARATOR",
    "SESSION_USER", "SET", "SHOW", "SIMILAR", "SKIP", "SMALLINT", "SOME", "SPECIFIC",
    "SPECIFICTYPE", "SQL", "SQLEXCEPTION", "SQLSTATE", "SQLWARNING", "SQRT", "START",
    "STATEMENT", "STATIC", "STDDEV_POP", "STDDEV_SAMP", "STREAM", "STRING", "STRING_AGG",
    "STRUCTURED", "SUBMULTISET", "SUBSET", "SUBSTRING", "SUBSTRING_REGEX", "SUCCEEDS", "SUM",
    "SUNDAY", "SUSPEND", "SYMMETRIC", "SYSTEM", "SYSTEM_TIME", "SYSTEM_USER", "TABLE", "TABLES",
    "TABLESAMPLE", "THEN", "THURSDAY", "TIME", "TIME_DIFF", "TIME_TRUNC", "TIMESTAMP",
    "TIMESTAMP_DIFF", "TIMESTAMP_LTZ", "TIMESTAMP_TRUNC", "TIMEZONE_HOUR", "TIMEZONE_MINUTE",
    "TINYINT", "TO", "TRAILING", "TRANSLATE", "TRANSLATE_REGEX", "TRANSLATION", "TREAT",
    "TRIGGER", "TRIM", "TRIM_ARRAY", "TRUE", "TRUNCATE", "TRY_CAST", "TUESDAY", "UESCAPE",
    "UNION", "UNIQUE", "UNKNOWN", "UNNEST", "UNPIVOT", "UPDATE", "UPPER", "UPSERT", "USE",
    "USER", "USING", "VALUE", "VALUE_OF", "VALUES", "VAR_POP", "VAR_SAMP", "VARBINARY",
    "VARCHAR", "VARIANT", "VARYING", "VERSIONING", "VIEWS", "WATERMARK", "WATERMARKS",
    "WEDNESDAY", "WEEKS", "WHEN", "WHENEVER", "WHERE", "WIDTH_BUCKET", "WINDOW", "WITH",
    "WITHIN", "WITHOUT", "YEAR",
};

/* Reserved words an expression takes bare, as no name: the niladic functions
 * (USER, which Flink reads as its function, is a column here), the time
 * units (TIMESTAMPDIFF(SECOND, ...), EXTRACT(YEAR FROM ...)), and CURRENT and
 * UNBOUNDED, which an OVER frame's bound (CURRENT ROW, UNBOUNDED PRECEDING)
 * parses as an expression before the planner reads it. */
static const char *const bare[] = {"CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
                                   "CURRENT_USER", "DAY", "HOUR", "LOCALTIME", "LOCALTIMESTAMP",
                                   "MINUTE", "MONTH", "SECOND", "SESSION_USER", "SYSTEM_USER",
                                   "UNBOUNDED", "USER", "YEAR"};

int sql_flink_reserved_column(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
        if (strlen(bare[i]) == n && !strncasecmp(bare[i], s, n)) return 0;
    return sql_flink_reserved(s, n);
}

int sql_flink_reserved(const char *s, size_t n)
{
    size_t lo = 0, hi = sizeof reserved / sizeof reserved[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncasecmp(reserved[mid], s, n);
        if (c == 0 && reserved[mid][n] != '\0') c = 1;
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}
