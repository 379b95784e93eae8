/*
 * sql_remote.h -- `sluice sql --endpoint`: statements through a SQL gateway (cli/sql_remote.c).
 */
#ifndef SL_CLI_SQL_REMOTE_H
#define SL_CLI_SQL_REMOTE_H

#include <signal.h>
#include <stddef.h>

#include "cli.h"

/* Run one statement in the gateway session *sid (opened on first use) and
 * print its outcome as the local client does. SL_OK, or SL_ERR with the
 * reason in err; *stop (Ctrl-C) ends a query and cancels it. */
int sl_sql_remote_statement(sl_cli_http *gw, char **sid, const char *text, size_t len,
                            volatile sig_atomic_t *stop, char *err, size_t errlen);
/* Close the session, if one was opened. */
void sl_sql_remote_close(sl_cli_http *gw, char **sid);

#endif
