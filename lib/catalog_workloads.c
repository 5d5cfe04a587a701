/*
 * catalog_workloads: the master copy of the figures threadwatchd keeps for
 * each workload every observer window (see catalog.h). The store keeps a
 * row's figures under these names, /api/v1/workloads/{ref}/series reads
 * them, /metrics exports them, and the page and `threadwatch fleet
 * --workloads` name them: adding a figure is adding a row.
 */
#include <string.h>

#include <jansson.h>

#include "catalog.h"

const struct catalog_workload_metric catalog_workload_metrics[] = {
    {"threads", "threads", "threads", "Live threads of the workload at the window's end.",
     "Threads", "threadwatch_workload_threads",
     "Live threads of each of the costliest workloads at the end of the observer's last "
     "window (workload=\"other\": the rest)."},
    {"creates_per_second", "creates_per_s", "per_s",
     "Threads the workload created per second over the window.", "Creates/s",
     "threadwatch_workload_creates_per_second",
     "Threads each workload created per second over the observer's last window."},
    {"switches_per_second", "switches_per_s/total", "per_s",
     "Context switches per second of all the workload's threads over the window.", "Switches/s",
     "threadwatch_workload_switches_per_second",
     "Context switches per second of all of each workload's threads over the observer's "
     "last window."},
    {"stack_bytes", "stacks/resident_bytes", "bytes",
     "Resident bytes of the workload's thread stacks at the window's end.", "Stack bytes",
     "threadwatch_workload_stack_resident_bytes",
     "Resident bytes of each workload's thread stacks at the end of the observer's last "
     "window."},
    {"stack_thp_bytes", "stacks/thp_bytes", "bytes",
     "Bytes of the workload's thread stacks backed by transparent huge pages.",
     "Stacks on huge pages", "threadwatch_workload_stack_thp_bytes",
     "Bytes of each workload's thread stacks backed by transparent huge pages at the end of "
     "the observer's last window."},
    {"cpu_share", "costs/cpu_share", "share",
     "Share of one CPU the workload's creates and switches cost at this host's measured "
     "prices.",
     "Share of a CPU", "threadwatch_workload_cpu_share",
     "Share of one CPU each workload's thread creates and context switches cost at this "
     "host's measured prices, over the observer's last window."},
    {"create_cpu_share", "costs/create/cpu_share", "share",
     "Share of one CPU the workload's thread creates alone cost at this host's measured "
     "create price.",
     "Creating threads", "threadwatch_workload_create_cpu_share",
     "Share of one CPU each workload's thread creates alone cost at this host's measured "
     "create price, over the observer's last window."},
};
const size_t catalog_n_workload_metrics =
    sizeof(catalog_workload_metrics) / sizeof(catalog_workload_metrics[0]);

const struct catalog_workload_metric *catalog_workload_metric_find(const char *name)
{
	for (size_t i = 0; name && i < catalog_n_workload_metrics; i++)
		if (!strcmp(catalog_workload_metrics[i].name, name))
			return &catalog_workload_metrics[i];
	return NULL;
}

json_t *catalog_workloads_json(void)
{
	json_t *list = json_array();

	for (size_t i = 0; i < catalog_n_workload_metrics; i++) {
		const struct catalog_workload_metric *m = &catalog_workload_metrics[i];

		json_array_append_new(
		    list, json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s}}", "name", m->name, "unit",
		                    m->unit, "description", m->description, "label", m->label,
		                    "prometheus", "name", m->prom, "type", "gauge"));
	}
	return list;
}
