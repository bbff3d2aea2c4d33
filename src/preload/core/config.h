/*
 * config.h - the MEMTAP_* environment as libmemtap.so runs by it: the
 * rows of sys/run_config.h, read once, at start-up, into one struct, its
 * strings copied (the program may change its environment afterwards).
 * What the command sets is cli/run_env.c's.
 */
#ifndef MEMTAP_PRELOAD_CONFIG_H
#define MEMTAP_PRELOAD_CONFIG_H

#include "sys/run_config.h"

typedef run_config preload_config;

/* The configuration, read on the first call (the library's start-up,
 * before any other thread). */
const preload_config *config(void);

#endif
