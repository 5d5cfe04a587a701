/*
 * store_query: the filters of the store's listings (runs, events), plain
 * types shared by the store's read model (daemon/store.h) and the API's
 * request parser (daemon/api_parse.h), which fills them without knowing
 * the store, SQLite or jansson.
 */
#ifndef TW_STORE_QUERY_H
#define TW_STORE_QUERY_H

#include <stdint.h>

/* A page of runs (store_read_runs()). */
struct store_runs_query {
	const char *probe;          /* NULL: any */
	const char *status;         /* NULL: any */
	int64_t since_ms, until_ms; /* 0: open */
	int64_t cursor;             /* return runs with id < cursor; 0: from the newest */
	int limit;                  /* 1..500 */
};

/* A page of regression events (store_read_events()). */
struct store_events_query {
	const char *metric; /* NULL: any */
	int64_t since_ms,
	    until_ms; /* filter t_ms (when the change began), both inclusive; 0: open */
	int limit;    /* 1..1000 */
};

#endif
