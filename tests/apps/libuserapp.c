/* libuserapp - userapp's own shared library (tests/apps/userapp.c). */
int userapp_answer(void);

int userapp_answer(void)
{
	return 42;
}
