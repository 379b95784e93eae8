/*
 * jthrowable.c -- a failure as Flink's REST client can read it.
 *
 * Flink reports a failed asynchronous operation (savepoint, checkpoint,
 * disposal) as operation.failure-cause = {"class", "stack-trace",
 * "serialized-throwable"}, and its client reads only the last: base64 of a
 * Java-serialized org.apache.flink.util.SerializedThrowable. A cause the
 * client cannot deserialize makes it retry until it times out, so the
 * reason never reaches the user. This file writes that object in the Java
 * Object Serialization Stream Protocol (JDK "Object Serialization
 * Specification", ch. 6) from its grammar: the class descriptors of
 * SerializedThrowable, Exception and Throwable, then Throwable's fields
 * (cause null, detailMessage, an empty stackTrace, the empty suppressed
 * list), then SerializedThrowable's (the stringified trace, the original
 * class name, and serializedException null -- which makes Flink's
 * deserializeError() return the SerializedThrowable itself, whose
 * toString() is "<class>: <message>"). The serialVersionUIDs are those of
 * Flink 2.x and Java 17's classes; tests/integration/test_flink_cli.py
 * checks that Flink's own CLI prints the reason.
 */
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "jm.h"

static void u8(sl_buf *b, unsigned v) { sl_buf_putc(b, (char)(uint8_t)v); }

static void u16(sl_buf *b, unsigned v)
{
    u8(b, v >> 8);
    u8(b, v & 0xff);
}

static void u64(sl_buf *b, uint64_t v)
{
    for (int s = 56; s >= 0; s -= 8) u8(b, (unsigned)(v >> s) & 0xff);
}

/* A short "modified UTF-8" string as the class and field names are written. */
static void utf(sl_buf *b, const char *s)
{
    u16(b, (unsigned)strlen(s));
    sl_buf_put(b, s, strlen(s));
}

enum {
    TC_NULL = 0x70, TC_REFERENCE = 0x71, TC_CLASSDESC = 0x72, TC_OBJECT = 0x73,
    TC_STRING = 0x74, TC_ARRAY = 0x75, TC_ENDBLOCKDATA = 0x78, TC_LONGSTRING = 0x7c,
    SC_WRITE_METHOD = 0x01, SC_SERIALIZABLE = 0x02
};
#define HANDLE(n) (0x7e0000u + (n))

/* A string value (a new object), from text that may hold anything: bytes
 * outside printable ASCII and tab/newline become '?', so the modified UTF-8
 * is always valid; at most 65535 bytes (TC_STRING). */
static void jstring(sl_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (n > 65535) n = 65535;
    u8(b, TC_STRING);
    u16(b, (unsigned)n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        u8(b, (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? c : '?');
    }
}

static void field(sl_buf *b, char type, const char *name)
{
    u8(b, (unsigned)type);
    utf(b, name);
}

char *jm_throwable_b64(const char *cls, const char *msg, const char *trace)
{
    sl_buf b = SL_BUF_INIT;
    u16(&b, 0xaced); /* STREAM_MAGIC */
    u16(&b, 5);      /* STREAM_VERSION */
    u8(&b, TC_OBJECT);
    /* handle 0: SerializedThrowable's class descriptor */
    u8(&b, TC_CLASSDESC);
    utf(&b, "org.apache.flink.util.SerializedThrowable");
    u64(&b, 0x65169df51fa713f3ull);
    u8(&b, SC_SERIALIZABLE);
    u16(&b, 3); /* object fields, sorted by name */
    field(&b, 'L', "fullStringifiedStackTrace");
    jstring(&b, "Ljava/lang/String;"); /* handle 1 */
    field(&b, 'L', "originalErrorClassName");
    u8(&b, TC_REFERENCE);
    u16(&b, HANDLE(1) >> 16);
    u16(&b, HANDLE(1) & 0xffff);
    field(&b, '[', "serializedException");
    jstring(&b, "[B"); /* handle 2 */
    u8(&b, TC_ENDBLOCKDATA);
    /* handle 3: its superclass java.lang.Exception, no fields */
    u8(&b, TC_CLASSDESC);
    utf(&b, "java.lang.Exception");
    u64(&b, 0xd0fd1f3e1a3b1cc4ull);
    u8(&b, SC_SERIALIZABLE);
    u16(&b, 0);
    u8(&b, TC_ENDBLOCKDATA);
    /* handle 4: java.lang.Throwable, which has a writeObject method */
    u8(&b, TC_CLASSDESC);
    utf(&b, "java.lang.Throwable");
    u64(&b, 0xd5c635273977b8cbull);
    u8(&b, SC_SERIALIZABLE | SC_WRITE_METHOD);
    u16(&b, 4);
    field(&b, 'L', "cause");
    jstring(&b, "Ljava/lang/Throwable;"); /* handle 5 */
    field(&b, 'L', "detailMessage");
    u8(&b, TC_REFERENCE);
    u16(&b, HANDLE(1) >> 16);
    u16(&b, HANDLE(1) & 0xffff);
    field(&b, '[', "stackTrace");
    jstring(&b, "[Ljava/lang/StackTraceElement;"); /* handle 6 */
    field(&b, 'L', "suppressedExceptions");
    jstring(&b, "Ljava/util/List;"); /* handle 7 */
    u8(&b, TC_ENDBLOCKDATA);
    u8(&b, TC_NULL); /* Throwable's superclass: none serializable */
    /* handle 8 is the object itself. Throwable's fields: */
    u8(&b, TC_NULL);    /* cause: none */
    jstring(&b, msg);   /* detailMessage */
    u8(&b, TC_ARRAY);   /* stackTrace: StackTraceElement[0] */
    u8(&b, TC_CLASSDESC);
    utf(&b, "[Ljava.lang.StackTraceElement;");
    u64(&b, 0x02462a3c3cfd2239ull);
    u8(&b, SC_SERIALIZABLE);
    u16(&b, 0);
    u8(&b, TC_ENDBLOCKDATA);
    u8(&b, TC_NULL);
    sl_buf_put(&b, "\0\0\0\0", 4);
    u8(&b, TC_OBJECT); /* suppressedExceptions: Collections.emptyList() */
    u8(&b, TC_CLASSDESC);
    utf(&b, "java.util.Collections$EmptyList");
    u64(&b, 0x7ab817b43ca79edeull);
    u8(&b, SC_SERIALIZABLE);
    u16(&b, 0);
    u8(&b, TC_ENDBLOCKDATA);
    u8(&b, TC_NULL);
    u8(&b, TC_ENDBLOCKDATA); /* end of Throwable.writeObject's data */
    /* SerializedThrowable's fields */
    jstring(&b, trace);
    jstring(&b, cls);
    u8(&b, TC_NULL); /* serializedException */
    sl_buf out = SL_BUF_INIT;
    sl_base64_encode(&out, b.p, b.len);
    sl_buf_free(&b);
    return sl_buf_take(&out); /* caller frees */
}
