/* sharp_live.c — pfs-sharp: SHARP's budgeted search (qos/sharp.h,
 * qos_sharp_search) driving a benchmark command, for live clusters
 * (bench/sharp_live.sh runs it against deploy/pfs-cluster).
 *
 *   pfs-sharp [--runs N] [--mode hill|sampled] [--seed S] [--weight W]
 *             [--patience P] [--start FILE] --out FILE -- CMD [ARG...]
 *
 * Each benchmark run writes the candidate rule set (qos/ascar.h text
 * format) to a temporary file and runs CMD ARG... FILE.  CMD prints on
 * stdout one line "TP P99" (aggregate throughput, any unit; 99th
 * percentile latency, any unit) and then, optionally, per-rule statistics
 * "rule I HITS SUM_ACK SUM_SEND SUM_PT" (summed over clients; they name
 * the hottest rule and where to split it).  A run that exits non-zero or
 * prints no TP line ends the search.  The first run is the reference:
 * score = qos_sharp_score(TP, P99, TP_1, P99_1, W) (W = 0: throughput
 * only; default 0.5).  Every run is reported on stderr; the best rule
 * set goes to --out with a comment header.  Exit 0, 1 on a failure, 2 on
 * bad usage. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos/sharp.h"

struct drv {
	char **cmd;      /* CMD ARG... and a slot for the file, NULL-terminated */
	int ncmd;
	char tmp[64];    /* the rule file of the run */
	double w;
	int have_ref;
	double tp_ref, p99_ref;
	unsigned long run;
};

static int write_rules(const char *path, const qos_ascar_ruleset *rs, const char *head)
{
	size_t need = qos_ascar_ruleset_print(rs, NULL, 0) + 1;
	char *buf = malloc(need);
	FILE *f;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	qos_ascar_ruleset_print(rs, buf, need);
	f = fopen(path, "w");
	if (!f) {
		rc = -errno;
	} else {
		if (head)
			fprintf(f, "# %s\n", head);
		fputs(buf, f);
		if (fclose(f))
			rc = -errno;
	}
	free(buf);
	return rc;
}

/* Run the command on the rules in d->tmp; parse its output into rs's
 * statistics and *tp, *p99. */
static int run_cmd(struct drv *d, qos_ascar_ruleset *rs, double *tp, double *p99)
{
	int fds[2], status, got = 0, rc = 0;
	char *line = NULL;
	size_t cap = 0;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(d->cmd[0], d->cmd);
		fprintf(stderr, "pfs-sharp: %s: %s\n", d->cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f) {
		rc = -errno;
		close(fds[0]);
	} else {
		while (getline(&line, &cap, f) > 0) {
			unsigned long i;
			double h, s0, s1, s2;
			if (!got && sscanf(line, "%lf %lf", tp, p99) == 2) {
				got = 1;
			} else if (sscanf(line, "rule %lu %lf %lf %lf %lf", &i, &h, &s0, &s1,
					  &s2) == 5 && i < rs->n && h >= 0) {
				rs->r[i].hits += h;
				rs->r[i].sum[0] += s0;
				rs->r[i].sum[1] += s1;
				rs->r[i].sum[2] += s2;
			}
		}
		fclose(f);
	}
	free(line);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (rc)
		return rc;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pfs-sharp: the benchmark command failed (status %d)\n", status);
		return -EIO;
	}
	if (!got) {
		fprintf(stderr, "pfs-sharp: the benchmark printed no \"TP P99\" line\n");
		return -EBADMSG;
	}
	return 0;
}

static int bench(void *arg, qos_ascar_ruleset *rs, double *score)
{
	struct drv *d = arg;
	double tp = 0, p99 = 0;
	int rc = write_rules(d->tmp, rs, NULL);

	if (rc)
		return rc;
	rc = run_cmd(d, rs, &tp, &p99);
	if (rc)
		return rc;
	if (!d->have_ref) {
		d->have_ref = 1;
		d->tp_ref = tp;
		d->p99_ref = p99;
	}
	*score = qos_sharp_score(tp, p99, d->tp_ref, d->p99_ref, d->w);
	d->run++;
	fprintf(stderr, "pfs-sharp: run %lu: %zu rules, tp %.2f p99 %.1f score %.4f\n",
		d->run, rs->n, tp, p99, *score);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = n + 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n - 1, f);
		if (k == 0)
			break;
		n += k;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

static void usage(void)
{
	fprintf(stderr, "usage: pfs-sharp [--runs N] [--mode hill|sampled] [--seed S] "
		"[--weight W] [--patience P] [--start FILE] --out FILE -- CMD [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	qos_sharp_budget p = { .runs = 12, .mode = QOS_SHARP_HILL, .seed = 1 };
	struct drv d = { .w = 0.5 };
	qos_ascar_ruleset start;
	qos_sharp_result res;
	const char *out = NULL, *startf = NULL;
	char head[256];
	int i, fd, rc;

	qos_ascar_ruleset_init(&start);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!strcmp(a, "--"))
			break;
		if (!v)
			usage();
		if (!strcmp(a, "--runs")) {
			p.runs = strtoul(v, &end, 10);
		} else if (!strcmp(a, "--mode")) {
			if (!strcmp(v, "hill"))
				p.mode = QOS_SHARP_HILL;
			else if (!strcmp(v, "sampled"))
				p.mode = QOS_SHARP_SAMPLED;
			else
				usage();
		} else if (!strcmp(a, "--seed")) {
			p.seed = strtoull(v, &end, 10);
		} else if (!strcmp(a, "--weight")) {
			d.w = strtod(v, &end);
			if (!(d.w >= 0 && d.w <= 1))
				usage();
		} else if (!strcmp(a, "--patience")) {
			p.patience = (unsigned)strtoul(v, &end, 10);
		} else if (!strcmp(a, "--start")) {
			startf = v;
		} else if (!strcmp(a, "--out")) {
			out = v;
		} else {
			usage();
		}
		if (end && *end)
			usage();
		i++;
	}
	if (!out || i + 1 >= argc || p.runs == 0)
		usage();
	d.ncmd = argc - i - 1;
	d.cmd = calloc((size_t)d.ncmd + 2, sizeof(*d.cmd));
	if (!d.cmd)
		return 1;
	memcpy(d.cmd, argv + i + 1, (size_t)d.ncmd * sizeof(*d.cmd));
	snprintf(d.tmp, sizeof(d.tmp), "/tmp/pfs-sharp.XXXXXX");
	fd = mkstemp(d.tmp);
	if (fd < 0) {
		perror("pfs-sharp: mkstemp");
		free(d.cmd);
		return 1;
	}
	close(fd);
	d.cmd[d.ncmd] = d.tmp;
	if (startf) {
		char *text = slurp(startf);
		int line = 0;
		rc = text ? qos_ascar_ruleset_parse(text, &start, &line) : -errno;
		free(text);
		if (rc) {
			fprintf(stderr, "pfs-sharp: %s: %s (line %d)\n", startf, strerror(-rc), line);
			unlink(d.tmp);
			free(d.cmd);
			return 2;
		}
		p.start = &start;
	}
	rc = qos_sharp_search(&p, bench, &d, &res);
	if (!rc && res.best.n) {
		snprintf(head, sizeof(head), "SHARP (pfs-sharp --mode %s --weight %.2f): best of %lu "
			 "runs, score %.4f (1st run = reference), %u splits",
			 p.mode == QOS_SHARP_HILL ? "hill" : "sampled", d.w, res.evals,
			 res.best_score, res.epochs);
		rc = write_rules(out, &res.best, head);
		if (!rc)
			fprintf(stderr, "pfs-sharp: best score %.4f after %lu runs -> %s\n",
				res.best_score, res.evals, out);
	} else if (!rc) {
		rc = -ENOENT;
	}
	if (rc)
		fprintf(stderr, "pfs-sharp: %s\n", strerror(-rc));
	qos_sharp_result_free(&res);
	qos_ascar_ruleset_free(&start);
	unlink(d.tmp);
	free(d.cmd);
	return rc ? 1 : 0;
}
