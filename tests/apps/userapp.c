/*
 * userapp - a user's own program for tests/integration/app.t: it lives in the
 * user's directory, reads an input deck given on its command line (relative
 * to its working directory), calls into a shared library of its own
 * (libuserapp.so, found through its RUNPATH), and prints what it saw: who
 * runs it, where, the deck, the library's answer, and the variables a
 * pipeline's env and modules set.  Exit 1 when the deck cannot be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int userapp_answer(void); /* libuserapp.so */

int main(int argc, char **argv)
{
	char cwd[4096], line[256] = "";
	FILE *deck = argc > 1 ? fopen(argv[1], "r") : NULL;

	if (!deck || !fgets(line, sizeof(line), deck)) {
		fprintf(stderr, "userapp: cannot read the deck '%s'\n",
			argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	fclose(deck);
	printf("uid=%u\n", (unsigned)getuid());
	printf("cwd=%s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	printf("deck=%s", line);
	printf("answer=%d\n", userapp_answer());
	printf("APP_GREETING=%s\n", getenv("APP_GREETING") ? getenv("APP_GREETING") : "");
	printf("STANDIN_HOME=%s\n", getenv("STANDIN_HOME") ? getenv("STANDIN_HOME") : "");
	printf("LOADEDMODULES=%s\n", getenv("LOADEDMODULES") ? getenv("LOADEDMODULES") : "");
	return 0;
}
