/* sim_trace.c — the strict CSV job-trace reader behind `pfs-sim run
 * --trace` (see sim_trace.h; format in bench/sim/README.md). */
#include "bench/sim/sim_trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "bench/sim/sim_rng.h"

enum col {
	C_JOB, C_SUBMIT, C_NODES, C_OSTS, C_PHASES, C_IO_MB, C_COMPUTE,
	C_APP, C_RANKS, C_STRIPE, C_PRIORITY, C_TF, C_N
};

static const char *const col_names[C_N] = {
	"job", "submit", "nodes", "osts", "phases", "io_mb", "compute_s",
	"app", "ranks", "stripe_count", "priority", "throttle_friendly",
};
#define C_REQUIRED C_APP /* columns before C_APP are required */

typedef struct tparse {
	sim_scenario *sc;
	char *err;
	size_t errlen;
	size_t line;              /* current line, 1-based */
	int pos[C_N];             /* column -> field index, -1 if absent */
	int n_fields;
	size_t cap;               /* of sc->apps and sc->jobs */
	size_t *lines;            /* [cap] line of each job */
	char (*jobid)[QOS_ID_MAX];/* [cap] job ids */
	double last_submit;
	size_t rr_next;           /* next OST of the rr rule */
	sim_rng rng;              /* the random rule */
	int *scratch;             /* [n_osts] */
} tparse;

static int perr(tparse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(tparse *p, const char *fmt, ...)
{
	va_list ap;
	int n = 0;
	if (p->err && p->errlen) {
		n = snprintf(p->err, p->errlen, "line %zu: ", p->line);
		if (n < 0 || (size_t)n >= p->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Trim ASCII blanks around [*s, *e). */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/* Split [s, e) at commas into at most max fields (trimmed). Returns the
 * field count, or max + 1 if there are more. */
static int split(const char *s, const char *e, const char **fs, const char **fe, int max)
{
	int n = 0;
	for (;;) {
		const char *c = memchr(s, ',', (size_t)(e - s));
		const char *end = c ? c : e;
		if (n == max)
			return max + 1;
		fs[n] = s;
		fe[n] = end;
		trim(&fs[n], &fe[n]);
		n++;
		if (!c)
			return n;
		s = c + 1;
	}
}

/* A plain decimal number (digits, '.', exponent, sign: no hex, inf, nan)
 * in [lo, hi]; integral if integer. */
static int field_num(tparse *p, const char *s, const char *e, enum col c, double lo, double hi,
		     int integer, double *out)
{
	char buf[64], *end;
	size_t n = (size_t)(e - s);
	if (n == 0)
		return perr(p, "%s: empty", col_names[c]);
	if (n >= sizeof(buf))
		return perr(p, "%s: not a number (too long)", col_names[c]);
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789.eE+-", s[i]))
			return perr(p, "%s: '%.*s' is not a decimal number", col_names[c], (int)n, s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || end == buf || errno == ERANGE || !isfinite(v))
		return perr(p, "%s: '%s' is not a decimal number", col_names[c], buf);
	if (integer && v != floor(v))
		return perr(p, "%s: '%s' is not an integer", col_names[c], buf);
	if (!(v >= lo && v <= hi))
		return perr(p, "%s: %s is out of range [%g, %g]", col_names[c], buf, lo, hi);
	*out = v;
	return 0;
}

/* Job and application ids: 1..QOS_ID_MAX-1 of [A-Za-z0-9._:+@/-]. */
static int field_id(tparse *p, const char *s, const char *e, enum col c, char *out)
{
	size_t n = (size_t)(e - s);
	if (n == 0)
		return perr(p, "%s: empty", col_names[c]);
	if (n >= QOS_ID_MAX)
		return perr(p, "%s: longer than %d characters", col_names[c], QOS_ID_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || strchr("._:+@/-", ch)))
			return perr(p, "%s: character '%c' not allowed (letters, digits, ._:+@/-)",
				    col_names[c], ch >= 32 && ch < 127 ? ch : '?');
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int parse_header(tparse *p, const char *s, const char *e)
{
	const char *fs[C_N + 1], *fe[C_N + 1];
	int n = split(s, e, fs, fe, C_N);

	for (int c = 0; c < C_N; c++)
		p->pos[c] = -1;
	if (n > C_N)
		return perr(p, "header: more than %d columns", C_N);
	for (int f = 0; f < n; f++) {
		int c;
		for (c = 0; c < C_N; c++)
			if ((size_t)(fe[f] - fs[f]) == strlen(col_names[c]) &&
			    !memcmp(fs[f], col_names[c], (size_t)(fe[f] - fs[f])))
				break;
		if (c == C_N)
			return perr(p, "header: unknown column '%.*s' (known: job, submit, nodes, "
				       "osts, phases, io_mb, compute_s, app, ranks, stripe_count, "
				       "priority, throttle_friendly)",
				    (int)(fe[f] - fs[f] > 64 ? 64 : fe[f] - fs[f]), fs[f]);
		if (p->pos[c] >= 0)
			return perr(p, "header: column '%s' twice", col_names[c]);
		p->pos[c] = f;
	}
	for (int c = 0; c < C_REQUIRED; c++)
		if (p->pos[c] < 0)
			return perr(p, "header: missing column '%s'", col_names[c]);
	p->n_fields = n;
	return 0;
}

static int grow(tparse *p)
{
	sim_scenario *sc = p->sc;
	if (sc->n_jobs < p->cap)
		return 0;
	size_t n = p->cap ? p->cap * 2 : 256;
	sim_app *a = realloc(sc->apps, n * sizeof(*a));
	if (a)
		sc->apps = a;
	sim_jobspec *j = realloc(sc->jobs, n * sizeof(*j));
	if (j)
		sc->jobs = j;
	size_t *l = realloc(p->lines, n * sizeof(*l));
	if (l)
		p->lines = l;
	char(*id)[QOS_ID_MAX] = realloc(p->jobid, n * sizeof(*id));
	if (id)
		p->jobid = id;
	if (!a || !j || !l || !id)
		return -ENOMEM;
	p->cap = n;
	return 0;
}

/* The osts field: "i;j;k", "random:N" or "rr:N".  Fills out[] and *n. */
static int field_osts(tparse *p, const char *s, const char *e, int *out, int *n)
{
	size_t no = p->sc->n_osts;
	double v;
	int rc;

	if (e - s > 7 && !memcmp(s, "random:", 7)) {
		if ((rc = field_num(p, s + 7, e, C_OSTS, 1, (double)no, 1, &v)))
			return rc;
		*n = (int)v;
		/* partial Fisher-Yates over a fresh identity permutation */
		for (size_t i = 0; i < no; i++)
			p->scratch[i] = (int)i;
		for (int i = 0; i < *n; i++) {
			size_t k = (size_t)sim_rng_int(&p->rng, i, (long)no - 1);
			int t = p->scratch[i];
			p->scratch[i] = p->scratch[k];
			p->scratch[k] = t;
			out[i] = p->scratch[i];
		}
		return 0;
	}
	if (e - s > 3 && !memcmp(s, "rr:", 3)) {
		if ((rc = field_num(p, s + 3, e, C_OSTS, 1, (double)no, 1, &v)))
			return rc;
		*n = (int)v;
		for (int i = 0; i < *n; i++) {
			out[i] = (int)p->rr_next;
			p->rr_next = (p->rr_next + 1) % no;
		}
		return 0;
	}
	if (s == e)
		return perr(p, "osts: empty (give \"i;j;...\", \"random:N\" or \"rr:N\")");
	*n = 0;
	for (;;) {
		const char *c = memchr(s, ';', (size_t)(e - s));
		const char *end = c ? c : e;
		trim(&s, &end);
		if (*n >= (int)no)
			return perr(p, "osts: more than the cluster's %zu OSTs", no);
		if ((rc = field_num(p, s, end, C_OSTS, 0, (double)no - 1, 1, &v)))
			return rc;
		for (int i = 0; i < *n; i++)
			if (out[i] == (int)v)
				return perr(p, "osts: OST %d twice", (int)v);
		out[(*n)++] = (int)v;
		if (!c)
			return 0;
		s = c + 1;
	}
}

static int parse_job(tparse *p, const char *s, const char *e)
{
	sim_scenario *sc = p->sc;
	const char *fs[C_N + 1], *fe[C_N + 1];
	int n = split(s, e, fs, fe, C_N), rc, n_osts = 0;
	double submit, nodes, phases, io_mb, comp, ranks, stripe, prio = 1, tf = 1;

	if (n > C_N)
		return perr(p, "more than %d fields, the header has %d", C_N, p->n_fields);
	if (n != p->n_fields)
		return perr(p, "%d fields, the header has %d", n, p->n_fields);
	if (sc->n_jobs >= SIM_TRACE_MAX_JOBS)
		return perr(p, "more than %d jobs", SIM_TRACE_MAX_JOBS);
	if ((rc = grow(p)))
		return rc;
	size_t k = sc->n_jobs;
	sim_app *a = &sc->apps[k];
	sim_jobspec *j = &sc->jobs[k];
	memset(a, 0, sizeof(*a));
	memset(j, 0, sizeof(*j));
#define F(c) fs[p->pos[c]], fe[p->pos[c]]
#define HAS(c) (p->pos[c] >= 0 && fs[p->pos[c]] < fe[p->pos[c]])
	if ((rc = field_id(p, F(C_JOB), C_JOB, p->jobid[k])) ||
	    (rc = field_num(p, F(C_SUBMIT), C_SUBMIT, 0, 1e10, 0, &submit)) ||
	    (rc = field_num(p, F(C_NODES), C_NODES, 1, sc->nodes, 1, &nodes)) ||
	    (rc = field_num(p, F(C_PHASES), C_PHASES, 1, 1e6, 1, &phases)) ||
	    (rc = field_num(p, F(C_IO_MB), C_IO_MB, 0, 1e12, 0, &io_mb)) ||
	    (rc = field_num(p, F(C_COMPUTE), C_COMPUTE, 0, 1e9, 0, &comp)))
		return rc;
	if (submit < p->last_submit)
		return perr(p, "submit: %g is before the previous job's %g (sort the trace by "
			       "submit time)",
			    submit, p->last_submit);
	ranks = nodes;
	if (HAS(C_RANKS) && (rc = field_num(p, F(C_RANKS), C_RANKS, 1, 1 << 24, 1, &ranks)))
		return rc;
	if (HAS(C_PRIORITY) &&
	    (rc = field_num(p, F(C_PRIORITY), C_PRIORITY, 1e-9, 1e9, 0, &prio)))
		return rc;
	if (HAS(C_TF) && (rc = field_num(p, F(C_TF), C_TF, 0, 1, 1, &tf)))
		return rc;
	if (HAS(C_APP)) {
		if ((rc = field_id(p, F(C_APP), C_APP, a->id)))
			return rc;
	} else {
		memcpy(a->id, p->jobid[k], sizeof(a->id));
	}
	if (!(j->osts = malloc(sc->n_osts * sizeof(int))))
		return -ENOMEM;
	sc->n_jobs++; /* j->osts is now sim_scen_free's */
	if ((rc = field_osts(p, F(C_OSTS), j->osts, &n_osts)))
		return rc;
	stripe = n_osts;
	if (HAS(C_STRIPE) &&
	    (rc = field_num(p, F(C_STRIPE), C_STRIPE, 1, n_osts, 1, &stripe)))
		return rc;
	if (n_osts > ranks * stripe)
		return perr(p, "%d OSTs but ranks x stripe_count = %g: some OSTs would get no "
			       "data",
			    n_osts, ranks * stripe);
#undef F
#undef HAS
	a->nodes = (int)nodes;
	a->ranks = (int)ranks;
	a->n_osts = n_osts;
	a->stripe = (int)stripe;
	a->phases = (int)phases;
	a->io_per_rank = io_mb / phases / ranks;
	a->compute_s = comp;
	a->priority = prio;
	a->throttle_friendly = tf != 0;
	j->app = k;
	j->submit = submit;
	j->io_scale = 1;
	j->compute_scale = 1;
	p->lines[k] = p->line;
	p->last_submit = submit;
	return 0;
}

typedef struct keyed {
	const char *key;
	size_t idx;
} keyed;

static int keyed_cmp(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Duplicate job ids (error naming both lines), then app_group. */
static int finish(tparse *p)
{
	sim_scenario *sc = p->sc;
	size_t n = sc->n_jobs;
	keyed *k = malloc(n * sizeof(*k));
	int rc = 0;

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		k[i] = (keyed){p->jobid[i], i};
	qsort(k, n, sizeof(*k), keyed_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(k[i].key, k[i - 1].key)) {
			p->line = p->lines[k[i].idx];
			rc = perr(p, "job: duplicate id '%s' (first on line %zu)", k[i].key,
				  p->lines[k[i - 1].idx]);
			goto out;
		}
	if (!(sc->app_group = malloc(n * sizeof(size_t)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (keyed){sc->apps[i].id, i};
	qsort(k, n, sizeof(*k), keyed_cmp);
	for (size_t i = 0, first = 0; i < n; i++) {
		if (i && strcmp(k[i].key, k[i - 1].key))
			first = i;
		sc->app_group[k[i].idx] = k[first].idx; /* sorted: the lowest index */
	}
	sc->n_apps = n;
out:
	free(k);
	return rc;
}

int sim_trace_parse(const char *text, size_t len, sim_scenario *sc, char *err, size_t errlen)
{
	tparse p;
	const char *s = text, *end = text + len;
	int rc = 0, have_header = 0;

	memset(&p, 0, sizeof(p));
	p.sc = sc;
	p.err = err;
	p.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	if (sc->n_apps || sc->n_jobs || !sc->n_osts || sc->nodes < 1) {
		rc = perr(&p, "the scenario must give a cluster and no jobs");
		goto out;
	}
	if (!(p.scratch = malloc(sc->n_osts * sizeof(int)))) {
		rc = -ENOMEM;
		goto out;
	}
	sim_rng_seed(&p.rng, sc->seed * 4 + 5);
	/* Oversized traces are refused before anything is allocated for
	 * them: count the lines that are neither blank nor comments. */
	{
		size_t lines = 0, data = 0;
		for (const char *q = s; q < end;) {
			const char *nl = memchr(q, '\n', (size_t)(end - q));
			const char *e = nl ? nl : end;
			lines++;
			while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			if (q < e && *q != '#' && ++data > (size_t)SIM_TRACE_MAX_JOBS + 1) {
				p.line = lines;
				rc = perr(&p, "more than %d jobs", SIM_TRACE_MAX_JOBS);
				goto out;
			}
			q = nl ? nl + 1 : end;
		}
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		p.line++;
		if ((size_t)(e - s) > SIM_TRACE_MAX_LINE) {
			rc = perr(&p, "longer than %d bytes", SIM_TRACE_MAX_LINE);
			goto out;
		}
		if (memchr(s, '\0', (size_t)(e - s))) {
			rc = perr(&p, "NUL byte (not a text file?)");
			goto out;
		}
		if (!nl) {
			rc = perr(&p, "no newline at the end (truncated file?)");
			goto out;
		}
		if (e > s && e[-1] == '\r')
			e--;
		const char *ts = s, *te = e;
		trim(&ts, &te);
		if (ts == te || *ts == '#') {
			s = nl + 1;
			continue;
		}
		if (memchr(s, '"', (size_t)(e - s))) {
			rc = perr(&p, "quotes are not supported (fields never contain commas)");
			goto out;
		}
		if (!have_header) {
			rc = parse_header(&p, s, e);
			have_header = 1;
		} else {
			rc = parse_job(&p, s, e);
		}
		if (rc)
			goto out;
		s = nl + 1;
	}
	if (!have_header) {
		p.line = 0;
		rc = perr(&p, "no header line (an empty trace?)");
		goto out;
	}
	if (sc->n_jobs == 0) {
		rc = perr(&p, "no jobs after the header");
		goto out;
	}
	rc = finish(&p);
out:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	if (rc) {
		/* apps[0 .. n_jobs) may be partly set: n_apps stays 0 until
		 * finish(), sim_scen_free frees the arrays either way */
		sim_scen_free(sc);
	}
	free(p.lines);
	free(p.jobid);
	free(p.scratch);
	return rc;
}

int sim_trace_load(const char *path, sim_scenario *sc, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		sim_scen_free(sc);
		return rc;
	}
	rc = pfs_file_read_stream(f, &buf, &n);
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		else
			snprintf(err, errlen, "%s: read error", path);
		sim_scen_free(sc);
		goto out;
	}
	rc = sim_trace_parse(buf, n, sc, err, errlen);
out:
	free(buf);
	fclose(f);
	return rc;
}

int sim_trace_scenario(const char *scen_path, const char *trace_path, long long seed_override,
		       sim_scenario *sc, char *err, size_t errlen)
{
	char terr[400];
	int rc;

	if (!trace_path)
		return sim_scen_load(scen_path, seed_override, sc, err, errlen);
	if ((rc = sim_scen_load_cluster(scen_path, seed_override, sc, err, errlen)))
		return rc;
	rc = sim_trace_load(trace_path, sc, terr, sizeof(terr));
	if (rc == -EINVAL)
		snprintf(err, errlen, "trace %s: %s", trace_path, terr);
	else if (rc)
		snprintf(err, errlen, "%s", terr);
	return rc;
}
