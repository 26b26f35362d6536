/* admin_fmt.c — human sizes and aligned tables for pfsadmin (see admin_fmt.h).
 *
 * A table keeps every cell as its own malloc'd string in a flat array that
 * grows by doubling; tables printed by pfsadmin have at most a few hundred
 * rows (one per OST or stripe), so nothing cleverer is needed. */
#include "client/admin_fmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROW_CELLS, ROW_BREAK, ROW_SPAN };

struct cli_table {
	const cli_col *cols;
	size_t ncols;
	char **cells;   /* nrows * ncols; a break has all NULL, a span two cells */
	unsigned char *kind; /* per row: ROW_CELLS, ROW_BREAK, ROW_SPAN */
	size_t nrows, cap;
};

char *cli_fmt_size(uint64_t bytes, int human, char *out, size_t outsz)
{
	static const char units[] = "BKMGTPE";
	unsigned u = 0;
	uint64_t whole = bytes;
	uint64_t rem = 0;

	if (!human) {
		snprintf(out, outsz, "%" PRIu64, bytes);
		return out;
	}
	while (whole >= 1024 && u < sizeof(units) - 2) {
		rem = whole % 1024;
		whole /= 1024;
		u++;
	}
	if (u == 0) {
		snprintf(out, outsz, "%" PRIu64 "B", bytes);
	} else if (whole < 10) {
		/* One decimal, rounded half up from the remainder in 1024ths;
		 * 9.96 rounds to "10" rather than printing "10.0". */
		uint64_t tenths = (rem * 10 + 512) / 1024;

		if (tenths >= 10) {
			whole++;
			tenths = 0;
		}
		if (whole >= 10)
			snprintf(out, outsz, "%" PRIu64 "%c", whole, units[u]);
		else
			snprintf(out, outsz, "%" PRIu64 ".%" PRIu64 "%c", whole, tenths, units[u]);
	} else {
		/* Round to nearest whole unit; 1023.6K becomes "1024K", which is
		 * still exact enough and never wrong by more than half a unit. */
		if (rem >= 512)
			whole++;
		snprintf(out, outsz, "%" PRIu64 "%c", whole, units[u]);
	}
	return out;
}

unsigned cli_fmt_pct(uint64_t used, uint64_t total)
{
	if (total == 0)
		return 0;
	/* Round up as df does, so a nearly full OST never shows as 99%
	 * when it has only a few bytes left; use long double to avoid the
	 * overflow of used * 100 on exabyte values. */
	long double p = (long double)used * 100.0L / (long double)total;
	unsigned r = (unsigned)p;

	if ((long double)r < p)
		r++;
	return r > 100 ? 100 : r;
}

char *cli_fmt_rate(double v, char *out, size_t outsz)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB", "EB" };
	size_t u = 0;

	if (v < 0) {
		snprintf(out, outsz, "unlimited");
		return out;
	}
	/* Step up while the value would print as 1000.0 or more, so 999.96 KB/s
	 * becomes "1.0MB/s" and not "1000.0KB/s". */
	while (v >= 999.95 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(out, outsz, "%.0fB/s", v);
	else
		snprintf(out, outsz, "%.1f%s/s", v, units[u]);
	return out;
}

char *cli_fmt_usec(double us, char *out, size_t outsz)
{
	if (us < 999.5)
		snprintf(out, outsz, "%.0fus", us < 0 ? 0 : us);
	else if (us < 999950)
		snprintf(out, outsz, "%.1fms", us / 1e3);
	else
		snprintf(out, outsz, "%.2fs", us / 1e6);
	return out;
}

char *cli_fmt_time(int64_t ns, char *out, size_t outsz)
{
	struct tm tm;
	time_t t;
	char buf[24];

	if (ns <= 0) {
		snprintf(out, outsz, "-");
		return out;
	}
	t = (time_t)(ns / 1000000000);
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(out, outsz, "%lld ns", (long long)ns);
		return out;
	}
	snprintf(out, outsz, "%s.%03dZ", buf, (int)(ns % 1000000000 / 1000000));
	return out;
}

int cli_table_create(const cli_col *cols, size_t ncols, cli_table **out)
{
	cli_table *t;

	if (!cols || ncols == 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cols = cols;
	t->ncols = ncols;
	*out = t;
	return 0;
}

static int grow(cli_table *t)
{
	size_t ncap;
	char **nc;
	unsigned char *nb;

	if (t->nrows < t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 16;
	nc = realloc(t->cells, ncap * t->ncols * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	t->cells = nc;
	nb = realloc(t->kind, ncap);
	if (!nb)
		return -ENOMEM;
	t->kind = nb;
	t->cap = ncap;
	return 0;
}

int cli_table_add(cli_table *t, const char *const *cells)
{
	char **row;
	size_t i;
	int rc = grow(t);

	if (rc)
		return rc;
	row = t->cells + t->nrows * t->ncols;
	for (i = 0; i < t->ncols; i++) {
		row[i] = strdup(cells[i] ? cells[i] : "-");
		if (!row[i])
			goto nomem;
	}
	t->kind[t->nrows++] = ROW_CELLS;
	return 0;
nomem:
	while (i-- > 0)
		free(row[i]);
	return -ENOMEM;
}

int cli_table_add_break(cli_table *t)
{
	int rc = grow(t);

	if (rc)
		return rc;
	memset(t->cells + t->nrows * t->ncols, 0, t->ncols * sizeof(char *));
	t->kind[t->nrows++] = ROW_BREAK;
	return 0;
}

int cli_table_add_span(cli_table *t, const char *first, const char *text)
{
	char **row;
	int rc;

	if (t->ncols < 2)
		return -EINVAL;
	rc = grow(t);
	if (rc)
		return rc;
	row = t->cells + t->nrows * t->ncols;
	memset(row, 0, t->ncols * sizeof(char *));
	row[0] = strdup(first);
	row[1] = strdup(text);
	if (!row[0] || !row[1]) {
		free(row[0]);
		free(row[1]);
		return -ENOMEM;
	}
	t->kind[t->nrows++] = ROW_SPAN;
	return 0;
}

static void print_row(const cli_table *t, const size_t *w, const char *const *cells, FILE *out)
{
	size_t last = t->ncols - 1;

	/* Stop at the last non-empty cell so no line ends in blanks. */
	while (last > 0 && cells[last][0] == '\0')
		last--;
	for (size_t c = 0; c <= last; c++) {
		int wi = (int)w[c];

		if (t->cols[c].right)
			fprintf(out, "%*s", wi, cells[c]);
		else if (c == last)
			fputs(cells[c], out);
		else
			fprintf(out, "%-*s", wi, cells[c]);
		fputs(c == last ? "\n" : "  ", out);
	}
}

void cli_table_print(const cli_table *t, FILE *out)
{
	size_t *w = calloc(t->ncols, sizeof(*w));
	const char **hdr = calloc(t->ncols, sizeof(*hdr));

	if (!w || !hdr) {
		free(w);
		free(hdr);
		return;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		hdr[c] = t->cols[c].name;
		w[c] = strlen(hdr[c]);
	}
	for (size_t r = 0; r < t->nrows; r++) {
		if (t->kind[r] == ROW_BREAK)
			continue;
		for (size_t c = 0; c < (t->kind[r] == ROW_SPAN ? 1 : t->ncols); c++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);
			if (l > w[c])
				w[c] = l;
		}
	}
	print_row(t, w, hdr, out);
	for (size_t r = 0; r < t->nrows; r++) {
		char *const *row = t->cells + r * t->ncols;

		if (t->kind[r] == ROW_BREAK)
			fputc('\n', out);
		else if (t->kind[r] == ROW_SPAN)
			fprintf(out, "%-*s  %s\n", (int)w[0], row[0], row[1]);
		else
			print_row(t, w, (const char *const *)row, out);
	}
	free(w);
	free(hdr);
}

void cli_table_free(cli_table *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			free(t->cells[r * t->ncols + c]);
	free(t->cells);
	free(t->kind);
	free(t);
}
