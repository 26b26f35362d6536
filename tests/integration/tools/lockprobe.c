/* lockprobe.c — fcntl and flock actions for t_locks.sh (flock(1) covers
 * only flock).  Each action prints one line and flushes it, so a test can
 * wait for "locked" before acting on another mount.
 *
 *   lockprobe getlk  FILE r|w START LEN        -> "unlocked" | "locked r|w PID START LEN"
 *   lockprobe setlk  FILE r|w START LEN HOLD   -> "locked" (held HOLD s) | "busy", exit 2
 *   lockprobe setlkw FILE r|w START LEN HOLD   -> "locked" once granted, held HOLD s
 *   lockprobe flock  FILE ex|sh|exnb|shnb HOLD -> "locked" | "busy", exit 2
 *   lockprobe intr   FILE r|w START LEN SECS   -> F_SETLKW with a SIGALRM (no
 *                    SA_RESTART) after SECS: "eintr" exit 0, else exit 1
 *   lockprobe append FILE TAG N                -> N lines "TAG i ..." by one
 *                    write(2) each on an O_APPEND descriptor
 *   lockprobe hold   FILE UNTIL                -> a POSIX write lock on all of
 *                    FILE and an exclusive flock on it: "locked", held until
 *                    the file UNTIL exists, then both unlocked: "released"
 * Exit 1 on any other error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

static int usage(void)
{
	fprintf(stderr, "usage: lockprobe getlk|setlk|setlkw|flock|intr|append|hold FILE ...\n");
	return 1;
}

static int get_flock(char **a, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));
	if (!strcmp(a[0], "r"))
		fl->l_type = F_RDLCK;
	else if (!strcmp(a[0], "w"))
		fl->l_type = F_WRLCK;
	else
		return -1;
	fl->l_whence = SEEK_SET;
	fl->l_start = atoll(a[1]);
	fl->l_len = atoll(a[2]);
	return 0;
}

static void say(const char *s)
{
	printf("%s\n", s);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct flock fl;
	int fd;

	if (argc < 4)
		return usage();
	const char *act = argv[1], *file = argv[2];

	if (!strcmp(act, "append")) {
		char line[256];
		int n = atoi(argv[4]);

		if (argc != 5)
			return usage();
		fd = open(file, O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (fd < 0) {
			perror(file);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			int len = snprintf(line, sizeof(line),
					   "%s %06d the quick brown fox jumps over the lazy dog\n",
					   argv[3], i);
			if (write(fd, line, (size_t)len) != len) {
				perror("write");
				return 1;
			}
		}
		return close(fd) ? 1 : 0;
	}
	fd = open(file, O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		perror(file);
		return 1;
	}
	if (!strcmp(act, "hold") && argc == 4) {
		int fd2 = open(file, O_RDWR);

		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		if (fd2 < 0 || fcntl(fd, F_SETLK, &fl) || flock(fd2, LOCK_EX | LOCK_NB)) {
			perror("hold");
			return 1;
		}
		say("locked");
		/* at most 10 minutes, and not past a test that died */
		for (int i = 0; access(argv[3], F_OK) && i < 6000 && getppid() != 1; i++)
			usleep(100000);
		fl.l_type = F_UNLCK;
		if (fcntl(fd, F_SETLK, &fl) || flock(fd2, LOCK_UN)) {
			perror("unlock");
			return 1;
		}
		say("released");
		return 0;
	}
	if (!strcmp(act, "getlk") && argc == 6) {
		if (get_flock(argv + 3, &fl) || fcntl(fd, F_GETLK, &fl)) {
			perror("F_GETLK");
			return 1;
		}
		if (fl.l_type == F_UNLCK)
			say("unlocked");
		else
			printf("locked %s %d %lld %lld\n", fl.l_type == F_WRLCK ? "w" : "r",
			       (int)fl.l_pid, (long long)fl.l_start, (long long)fl.l_len);
		return 0;
	}
	if ((!strcmp(act, "setlk") || !strcmp(act, "setlkw")) && argc == 7) {
		if (get_flock(argv + 3, &fl))
			return usage();
		if (fcntl(fd, act[5] == 'w' ? F_SETLKW : F_SETLK, &fl)) {
			if (errno == EAGAIN || errno == EACCES) {
				say("busy");
				return 2;
			}
			perror("F_SETLK");
			return 1;
		}
		say("locked");
		sleep((unsigned)atoi(argv[6]));
		return 0;
	}
	if (!strcmp(act, "flock") && argc == 5) {
		int op = !strncmp(argv[3], "ex", 2) ? LOCK_EX : LOCK_SH;

		if (strstr(argv[3], "nb"))
			op |= LOCK_NB;
		if (flock(fd, op)) {
			if (errno == EWOULDBLOCK) {
				say("busy");
				return 2;
			}
			perror("flock");
			return 1;
		}
		say("locked");
		sleep((unsigned)atoi(argv[4]));
		return 0;
	}
	if (!strcmp(act, "intr") && argc == 7) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm; /* no SA_RESTART: the wait must end with EINTR */
		sigaction(SIGALRM, &sa, NULL);
		if (get_flock(argv + 3, &fl))
			return usage();
		alarm((unsigned)atoi(argv[6]));
		if (fcntl(fd, F_SETLKW, &fl) == 0) {
			say("locked");
			return 1;
		}
		if (errno == EINTR) {
			say("eintr");
			return 0;
		}
		perror("F_SETLKW");
		return 1;
	}
	return usage();
}
