/*
 * gen_docs.c -- prints the generated parts of the docs as markdown.
 *
 *   gen_docs config      docs/CONFIG.md's table of keys (core/config.c's table)
 *   gen_docs operators   docs/OPERATORS.md's option tables, one per built-in
 *                        operator type in registration order (each type's
 *                        sl_op_def.options)
 *
 * scripts/gen_docs.py puts the output between the files' generated-block
 * markers (`make docs`); tests/test_docs.py fails when they differ.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "operator.h"

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "config")) {
        sl_config_print_docs(stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "operators")) {
        sl_ops_register_builtin();
        for (int i = 0; sl_op_nth(i); i++) {
            const sl_op_def *def = sl_op_nth(i);
            printf("%s### `%s`\n\n", i ? "\n" : "", def->name);
            sl_op_options_print_docs(def, stdout);
        }
        return 0;
    }
    fprintf(stderr, "usage: %s config|operators\n", argv[0]);
    return 2;
}
