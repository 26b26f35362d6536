/* sim_json.c — JSON reader helpers (see sim_json.h). */
#include "bench/sim/sim_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sim_json_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int sim_json_check_keys(json_t *obj, const char *const *known, const char *where, char *err,
			size_t len)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		size_t i;
		for (i = 0; known[i]; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (!known[i])
			return sim_json_fail(err, len, "%s: unknown key '%s'", where, key);
	}
	return 0;
}
