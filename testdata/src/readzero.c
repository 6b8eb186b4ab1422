/*
 * readzero.c - a workload with kernel and user time: reads /dev/zero
 * (kernel frames under read()) and computes, here and in libwork.so
 * (user frames), N rounds.  Link with libwork.c.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

double lib_work(int n);

static char buf[1 << 16];

__attribute__((noinline)) static double spin(int n)
{
	double x = 0;
	int i;

	for (i = 0; i < n; i++)
		x += i * 0.5;
	return x;
}

__attribute__((noinline)) static void pull(int fd, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			exit(1);
}

int main(int argc, char **argv)
{
	int fd = open("/dev/zero", O_RDONLY);
	int r, n = argc > 1 ? atoi(argv[1]) : 200;
	double s = 0;

	if (fd < 0)
		return 1;
	for (r = 0; r < n; r++) {
		pull(fd, 100);
		s += spin(200000);
		s += lib_work(100000);
	}
	return s < 0;
}
