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

/* A rate in bytes/s with SI units and one decimal, as TBF rule text reads
 * it ("100.0MB/s", "1.5GB/s", "512B/s"); a negative rate (no limit) prints
 * as "unlimited".  outsz >= 16 is always enough.  Returns out. */
char *cli_fmt_rate(double bytes_per_s, char *out, size_t outsz);

/* A duration in microseconds: "850us", "1.5ms", "2.30s".  Returns out. */
char *cli_fmt_usec(double us, char *out, size_t outsz);

/* A CLOCK_REALTIME time in nanoseconds as UTC ISO 8601 with milliseconds
 * ("2026-11-26T02:37:21.123Z"); 0 or less prints as "-" (never happened).
 * UTC so the output does not depend on the reader's time zone.  outsz >= 32
 * is always enough.  Returns out. */
char *cli_fmt_time(int64_t ns, char *out, size_t outsz);

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
/* Append a row with a first cell and then free text across the other
 * columns ("pfs-OST0002_UUID  : inactive device"); the text does not widen
 * any column.  Both copied.  0, -ENOMEM, or -EINVAL for a one-column
 * table. */
int cli_table_add_span(cli_table *t, const char *first, const char *text);
/* Print the header and rows to out. */
void cli_table_print(const cli_table *t, FILE *out);
void cli_table_free(cli_table *t);

#endif
