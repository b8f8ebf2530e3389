/* A shared object that exports no plugin struct. */
#include "rooflined/plugin.h"

RL_EXPORT int not_a_plugin(void);

int not_a_plugin(void)
{
	return 42;
}
