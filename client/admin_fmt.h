/* admin_fmt.h — pfsadmin output helpers: human-readable sizes and aligned
 * text tables.
 *
 * Sizes use powers of 1024 with one decimal below 10 units ("1.5G", "512K",
 * "0B"), like `lfs df -h`.  A table collects rows of strings (copied) and
 * prints them with each column as wide as its widest cell, numeric columns
 * right-aligned.  Table width is unbounded: cells are never cut, because an
 * admin would rather see a wide table than a truncated UUID. */
#ifndef CLI_ADMIN_FMT_H
#define CLI_ADMIN_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Format bytes into out (outsz >= 8 is always enough for human form).
 * human = 0: the plain decimal number; human = 1: "1.5G" style.
 * Returns out. */
char *cli_fmt_size(uint64_t bytes, int human, char *out, size_t outsz);

/* Percentage used of total, rounded up like df ("0%" when total is 0). */
unsigned cli_fmt_pct(uint64_t used, uint64_t total);

typedef struct cli_table cli_table;

typedef struct cli_col {
	const char *name; /* header text; borrowed for the table's lifetime */
	int right;        /* 1 = right-align (numbers) */
} cli_col;

/* Create a table with ncols columns described by cols (borrowed: must
 * outlive the table).  0 or -ENOMEM/-EINVAL. */
int cli_table_create(const cli_col *cols, size_t ncols, cli_table **out);
/* Append one row of ncols cells (copied; NULL prints as "-").  0 or -ENOMEM. */
int cli_table_add(cli_table *t, const char *const *cells);
/* Append a separator row (printed as a blank line). 0 or -ENOMEM. */
int cli_table_add_break(cli_table *t);
/* Print the header and rows to out. */
void cli_table_print(const cli_table *t, FILE *out);
void cli_table_free(cli_table *t);

#endif
