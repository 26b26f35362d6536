/* sim_json.h — small helpers shared by pfs-sim's JSON readers (decide
 * input, scenarios): error messages that name the offending field, and the
 * unknown-key check that keeps typos from passing silently. */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stddef.h>

#include <jansson.h>

/* Format a message into err (if err and len) and return -EINVAL. */
int sim_json_fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 0 if every key of obj is in the NULL-terminated known; else -EINVAL with
 * "<where>: unknown key '<key>'" in err. */
int sim_json_check_keys(json_t *obj, const char *const *known, const char *where, char *err,
			size_t len);

#endif
