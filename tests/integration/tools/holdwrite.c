/* holdwrite — write to a file and keep it open until told to close, for
 * the two-mount truncate race of t_two_mounts.sh: a shell cannot hold a
 * written descriptor without closing a copy of it (every close of a copy
 * is a FUSE FLUSH, which pushes the size).
 *
 *   holdwrite FILE BYTES GOFILE
 * opens FILE for writing (created, not truncated), writes BYTES bytes of
 * 0xab from offset 0, prints "written", waits until GOFILE exists, closes
 * and exits 0 (1 on any error, with the call that failed). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long long left, done = 0;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: holdwrite FILE BYTES GOFILE\n");
		return 1;
	}
	left = atoll(argv[2]);
	memset(buf, 0xab, sizeof(buf));
	fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	while (left > 0) {
		size_t n = left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf);
		ssize_t w = pwrite(fd, buf, n, done);

		if (w <= 0) {
			perror("pwrite");
			close(fd);
			return 1;
		}
		done += w;
		left -= w;
	}
	printf("written\n");
	fflush(stdout);
	while (access(argv[3], F_OK) != 0)
		usleep(20000);
	if (close(fd)) {
		perror("close");
		return 1;
	}
	return 0;
}
