/*
 * report.h - the machine-readable summary of a conversion (--stats-json)
 * and the coverage gate (--min-coverage), for CI pipelines.
 *
 * One report covers every input of a command: start it, add each input
 * (converted or not), then write it.  The report owns its text.
 */
#ifndef RESTACK_CMD_REPORT_H
#define RESTACK_CMD_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/run.h"
#include "common/strbuf.h"

/* What one input cost. */
struct report_timing {
	double start_wall, start_cpu; /* at report_timing_start() */
	double wall_s;        /* elapsed */
	double cpu_s;         /* user + system, all threads */
	long peak_rss_kb;     /* the process's peak so far */
};

/* How one input ended. */
enum report_status {
	REPORT_OK,            /* converted */
	REPORT_GATE,          /* converted, coverage below --min-coverage */
	REPORT_FAILED,        /* not converted (the error was printed) */
};

struct report {
	struct strbuf inputs; /* the "inputs" array's items so far */
	unsigned nr, nr_ok, nr_gate, nr_failed;
	double min_coverage;  /* -1: no gate */
	unsigned jobs;
};

void report_init(struct report *r, double min_coverage, unsigned jobs);
void report_release(struct report *r);

/* Samples that reached their thread's root, in percent of all samples. */
double report_coverage(const struct run *run);

/*
 * The status of a converted input: REPORT_GATE when its coverage is below
 * the report's gate.
 */
enum report_status report_judge(const struct report *r,
				const struct run *run);

/*
 * Adds one input.  run is the finished run (NULL when the input could
 * not be read at all); out the output written, or NULL.
 */
void report_add(struct report *r, const char *input, const char *out,
		enum report_status status, const struct run *run,
		const struct report_timing *t);

/* Starts measuring an input; report_timing_end() fills the rest. */
void report_timing_start(struct report_timing *t);
void report_timing_end(struct report_timing *t);

/* Writes the JSON document to path ('-': stdout); 0 or -1 (printed). */
int report_write(const struct report *r, const char *path);

#endif
