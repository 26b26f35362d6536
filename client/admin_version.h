/* admin_version.h — pfsadmin --version: the version is common/version.h's
 * (the one place it is written down). */
#ifndef CLI_ADMIN_VERSION_H
#define CLI_ADMIN_VERSION_H

#include "common/version.h"

#endif
