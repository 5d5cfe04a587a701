/*
 * catalog: the metric and built-in probe tables (see catalog.h). Every
 * consumer reads its rows from here: adding a metric is adding a row.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"

const char *const catalog_units[] = {
    "ns",    "cycles", "ratio",   "count", "hz",         "bool", "address", "bytes",
    "slope", "vmas",   "threads", "per_s", "ns_per_vma", "s",    NULL,
};

/* A row for a probe's scalar. */
#define SCALAR(p, s) .name = p "." s, .probe = p, .scalar = s
/* A row for the median of a series' points near x (detection only). */
#define POINT(p, s, n) .name = p "." s "_at_" #n, .probe = p, .series = s, .x = n
#define PROM(n, h, l, sc) .prom = {.name = n, .type = "gauge", .help = h, .labels = l, .scale = sc}
/* A family renamed from `old`, which stays one release (deprecated). */
#define PROM_RENAMED(n, old, h)                                                                    \
	.prom = {.name = n, .type = "gauge", .help = h, .scale = 1, .deprecated = old}
#define RUN(l, lo, hi) .run_label = l, .ci_lo = lo, .ci_hi = hi

#define HELP_RATE(b)                                                                               \
	"Thread creates per second in the " b " of the last threads run, by stack policy."
#define HELP_KNEE                                                                                  \
	"Live threads at which the create rate stepped down at least 2x and stayed down, by "      \
	"stack policy; no sample when there is no knee."
#define HELP_FAILURES "MAP_32BIT mmap calls that failed in the last threads run, by stack policy."
/* The log-log slopes of map32 run from 0.03 (flat) to 1 (linear): a
 * relative change alone means little near 0. */
#define SLOPE_FLOOR 0.1

/* The figures of one stack policy of the threads probe; the help texts
 * go on the first policy's rows, `run` is its label in `threadwatch run`. */
/* The first, last and lowest bucket rates are three metrics rather than
 * one with a bucket label, since a sum or average over buckets means
 * nothing (Prometheus's "writing exporters" guide). */
#define POLICY(p, what, h, run, l_first, l_steady)                                                 \
	{SCALAR("threads", p "_first_rate"),                                                       \
	 .unit = "per_s",                                                                          \
	 .label = l_first,                                                                         \
	 .description = "Thread creates per second in the first bucket, " what,                    \
	 PROM("threadwatch_threads_first_create_rate_per_second",                                  \
	      h ? HELP_RATE("first bucket") : NULL, "policy=\"" p "\"", 1),                        \
	 RUN(run, NULL, NULL)},                                                                    \
	    {SCALAR("threads", p "_last_rate"), .unit = "per_s",                                   \
	     .description = "Thread creates per second in the last bucket, " what,                 \
	     PROM("threadwatch_threads_last_create_rate_per_second",                               \
	          h ? HELP_RATE("last bucket") : NULL, "policy=\"" p "\"", 1)},                    \
	    {SCALAR("threads", p "_min_rate"), .unit = "per_s",                                    \
	     .description = "Lowest thread-create rate of any bucket, " what,                      \
	     PROM("threadwatch_threads_min_create_rate_per_second",                                \
	          h ? HELP_RATE("slowest bucket") : NULL, "policy=\"" p "\"", 1)},                 \
	    {SCALAR("threads", p "_steady_rate"), .unit = "per_s", .label = l_steady,              \
	     .description = "Median thread-create rate of the buckets after the first (the first " \
	                    "is cold), " what,                                                     \
	     PROM("threadwatch_threads_steady_create_rate_per_second",                             \
	          h ? HELP_RATE("buckets after the first (median)") : NULL, "policy=\"" p "\"",    \
	          1)},                                                                             \
	    {SCALAR("threads", p "_knee"), .unit = "threads", .key = 1,                            \
	     .description = "Live threads where the create rate stepped down at least 2x for "     \
	                    "3 buckets and the rest of the run, " what,                            \
	     PROM("threadwatch_threads_knee", h ? HELP_KNEE : NULL, "policy=\"" p "\"", 1)},       \
	    {SCALAR("threads", p "_map32_failures"), .unit = "count",                              \
	     .description = "MAP_32BIT mmap calls that failed, " what,                             \
	     PROM("threadwatch_threads_map32_failures", h ? HELP_FAILURES : NULL,                  \
	          "policy=\"" p "\"", 1)},                                                         \
	    {POINT("threads", p "_median_ns", 64), .unit = "ns", .key = 1,                         \
	     .description = "Median thread-create time near 64 live threads, " what},              \
	    {POINT("threads", p "_median_ns", 512), .unit = "ns", .key = 1,                        \
	     .description = "Median thread-create time near 512 live threads, " what},             \
	{                                                                                          \
		POINT("threads", p "_median_ns", 2048),                                            \
		    .unit = "ns", .key = 1,                                                        \
		    .description = "Median thread-create time near 2048 live threads, " what       \
	}

/* The memory of an idle thread of one stack kind and size (stackmem). */
#define STACKMEM(k, sfx, size, what, is_key, lbl, help, ...)                                       \
	{SCALAR("stackmem", k sfx "_bytes_per_thread"),                                            \
	 .unit = "bytes",                                                                          \
	 .key = is_key,                                                                            \
	 .abs_floor = (is_key) ? 65536 : 0,                                                        \
	 .label = lbl,                                                                             \
	 .description = "Resident memory per idle thread, " what,                                  \
	 PROM("threadwatch_stack_bytes_per_thread", help, "stack=\"" k "\",size=\"" size "\"", 1), \
	 __VA_ARGS__},                                                                             \
	    {SCALAR("stackmem", k sfx "_bytes_per_thread_ci_lo"), .unit = "bytes",                 \
	     .description = "Lowest of the rounds (a 96.9% CI of the median), " what},             \
	    {SCALAR("stackmem", k sfx "_bytes_per_thread_ci_hi"), .unit = "bytes",                 \
	     .description = "Highest of the rounds (a 96.9% CI of the median), " what},            \
	{                                                                                          \
		SCALAR("stackmem", k sfx "_huge_bytes_per_thread"),                                \
		    .unit = "bytes", .description = "AnonHugePages per idle thread, " what         \
	}
#define STACKMEM_HELP                                                                              \
	"Resident memory an idle thread holds, by how its stack was mapped and its size."

/* The figures of n creators at once, with or without glibc's stack cache
 * (createscale). */
#define CREATORS(c, n, what)                                                                       \
	{SCALAR("createscale", c "_" n "_rate"), .unit = "per_s",                                  \
	 .description = "Creates per second per creator, " n " creators at once, " what},          \
	    {SCALAR("createscale", c "_" n "_efficiency"), .unit = "ratio",                        \
	     .description = "Scaling efficiency of " n " creators, rate(" n ") / rate(1), " what,  \
	     PROM("threadwatch_create_scaling_efficiency", NULL,                                   \
	          "creators=\"" n "\",stack_cache=\"" c "\"", 1)},                                 \
	    {SCALAR("createscale", c "_" n "_efficiency_ci_lo"), .unit = "ratio",                  \
	     .description = "Lower bound of the 95% CI of that efficiency, " what},                \
	{                                                                                          \
		SCALAR("createscale", c "_" n "_efficiency_ci_hi"),                                \
		    .unit = "ratio",                                                               \
		    .description = "Upper bound of the 95% CI of that efficiency, " what           \
	}

/* The figures of one placement of the handoff probe. */
#define PLACEMENT(p, what)                                                                         \
	{SCALAR("handoff", p "_ns"), .unit = "ns",                                                 \
	 .description = "Median time of a hand-off between " what,                                 \
	 PROM("threadwatch_handoff_seconds", NULL, "placement=\"" p "\"", 1e9)},                   \
	    {SCALAR("handoff", p "_ci_lo"), .unit = "ns",                                          \
	     .description = "Lower bound of the 95% CI of the hand-off between " what},            \
	    {SCALAR("handoff", p "_ci_hi"), .unit = "ns",                                          \
	     .description = "Upper bound of the 95% CI of the hand-off between " what},            \
	    {SCALAR("handoff", p "_ratio"), .unit = "ratio",                                       \
	     .description = "Paired ratio of a hand-off between " what " to one on one CPU"},      \
	    {SCALAR("handoff", p "_ratio_ci_lo"), .unit = "ratio",                                 \
	     .description = "Lower bound of the 95% CI of that ratio, " what},                     \
	{                                                                                          \
		SCALAR("handoff", p "_ratio_ci_hi"),                                               \
		    .unit = "ratio",                                                               \
		    .description = "Upper bound of the 95% CI of that ratio, " what                \
	}

/* The figures of one map32 ladder without a Prometheus name or key-figure
 * role (those that have one are rows of their own below). */
#define LADDER(l, what, per)                                                                       \
	{SCALAR("map32", l "_start_vmas"), .unit = "vmas",                                         \
	 .description = "VMA count " per " at the first rung of the " l " ladder"},                \
	    {SCALAR("map32", l "_max_vmas"), .unit = "vmas",                                       \
	     .description = "VMA count " per " at the top rung of the " l " ladder"},              \
	    {SCALAR("map32", l "_ns_per_vma_ci_lo"), .unit = "ns_per_vma",                         \
	     .description = "Lower bound of the 95% CI of b, " what},                              \
	    {SCALAR("map32", l "_ns_per_vma_ci_hi"), .unit = "ns_per_vma",                         \
	     .description = "Upper bound of the 95% CI of b, " what},                              \
	    {SCALAR("map32", l "_fixed_ns"), .unit = "ns",                                         \
	     .description = what ": the fixed part a of a + b n"},                                 \
	    {SCALAR("map32", l "_rise"), .unit = "ratio",                                          \
	     .description = what ": fitted rise over the ladder, over its start"},                 \
	{                                                                                          \
		SCALAR("map32", l "_loglog_slope"),                                                \
		    .unit = "slope", .description = what ": log-log slope, for reference"          \
	}

/* In the order /api/v1/metrics lists the metrics no run has stored yet
 * (threads.max_threads after the policies, so that `threadwatch run`
 * shows "default, low, max").
 * The key figures are the switch costs and their ratio, the
 * create cost at 64, 512 and 2048 live threads and the knee of each
 * policy, and the map32 fail latency, slope and window capacity. */
const struct catalog_metric catalog_metrics[] = {
    {SCALAR("ctxsw", "low_ns"), .unit = "ns", .key = 1, .label = "Switch with low stacks",
     .description = "Median time per thread switch with low (MAP_32BIT) stacks",
     PROM("threadwatch_ctxsw_switch_seconds",
          "Median time of one thread switch, by stack placement.", "stack=\"low\"", 1e9),
     RUN("low", "low_ci_lo", "low_ci_hi")},
    {SCALAR("ctxsw", "high_ns"), .unit = "ns", .key = 1, .label = "Switch with high stacks",
     .description = "Median time per thread switch with high (MAP_STACK) stacks",
     PROM("threadwatch_ctxsw_switch_seconds", NULL, "stack=\"high\"", 1e9),
     RUN("high", "high_ci_lo", "high_ci_hi")},
    {SCALAR("ctxsw", "low_cycles"), .unit = "cycles",
     .description = "Median cycles per switch with low stacks (core cycles or TSC, as "
                    "info.cycles_source says)",
     PROM("threadwatch_ctxsw_switch_cycles",
          "Median cycles of one thread switch (core cycles or TSC, as the probe's "
          "info.cycles_source says), by stack placement.",
          "stack=\"low\"", 1)},
    {SCALAR("ctxsw", "high_cycles"), .unit = "cycles",
     .description = "Median cycles per switch with high stacks",
     PROM("threadwatch_ctxsw_switch_cycles", NULL, "stack=\"high\"", 1)},
    {SCALAR("ctxsw", "low_mad_ns"), .unit = "ns",
     .description = "Median absolute deviation of the low-stack switch time"},
    {SCALAR("ctxsw", "high_mad_ns"), .unit = "ns",
     .description = "Median absolute deviation of the high-stack switch time"},
    {SCALAR("ctxsw", "low_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the low-stack median"},
    {SCALAR("ctxsw", "low_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the low-stack median"},
    {SCALAR("ctxsw", "high_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the high-stack median"},
    {SCALAR("ctxsw", "high_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the high-stack median"},
    {SCALAR("ctxsw", "ratio"), .unit = "ratio", .key = 1, .label = "Low/high switch ratio",
     .description = "Median of paired low/high switch-time ratios (< 1: low is faster)",
     PROM("threadwatch_ctxsw_ratio",
          "Median of paired low/high switch-time ratios; below 1 low stacks switch faster.", NULL,
          1),
     RUN("ratio", "ratio_ci_lo", "ratio_ci_hi")},
    {SCALAR("ctxsw", "ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the switch-time ratio",
     PROM("threadwatch_ctxsw_ratio_ci_lower", "Lower bound of the 95% CI of the switch-time ratio.",
          NULL, 1)},
    {SCALAR("ctxsw", "ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the switch-time ratio",
     PROM("threadwatch_ctxsw_ratio_ci_upper", "Upper bound of the 95% CI of the switch-time ratio.",
          NULL, 1)},
    {SCALAR("ctxsw", "ratio_ci90_lo"), .unit = "ratio",
     .description = "Lower bound of the 90% CI of the switch-time ratio (equivalence: TOST at "
                    "alpha 0.05)"},
    {SCALAR("ctxsw", "ratio_ci90_hi"), .unit = "ratio",
     .description = "Upper bound of the 90% CI of the switch-time ratio (equivalence: TOST at "
                    "alpha 0.05)"},
    {SCALAR("ctxsw", "pairs"), .unit = "count",
     .description = "Paired low/high measurements taken"},
    {SCALAR("ctxsw", "switches_per_pair"), .unit = "count",
     .description = "Thread switches timed in each measurement"},
    {SCALAR("ctxsw", "tsc_hz"), .unit = "hz", .description = "Calibrated TSC frequency"},
    {SCALAR("ctxsw", "fsgsbase"), .unit = "bool",
     .description = "The CPU and kernel offer FSGSBASE (1) or not (0)",
     PROM("threadwatch_ctxsw_fsgsbase", "1 when user space may use FSGSBASE.", NULL, 1)},
    {SCALAR("ctxsw", "low_fs_base"), .unit = "address",
     .description = "FS base of a thread with a low stack"},
    {SCALAR("ctxsw", "high_fs_base"), .unit = "address",
     .description = "FS base of a thread with a high stack"},
    {SCALAR("ctxsw", "low_stack"), .unit = "address",
     .description = "Address of a low thread stack"},
    {SCALAR("ctxsw", "high_stack"), .unit = "address",
     .description = "Address of a high thread stack"},
    /* The 32-bit segment path and the A/A control. */
    {SCALAR("ctxsw", "high_mad_cycles"), .unit = "cycles",
     .description = "Median absolute deviation of the high-stack cycles"},
    {SCALAR("ctxsw", "low_mad_cycles"), .unit = "cycles",
     .description = "Median absolute deviation of the low-stack cycles"},
    {SCALAR("ctxsw", "selector_ns"), .unit = "ns",
     .description = "Median time per thread switch when FS is loaded from a segment selector "
                    "(low stacks)",
     PROM("threadwatch_ctxsw_selector_switch_seconds",
          "Median time of one thread switch when FS is loaded from a 32-bit segment selector.",
          NULL, 1e9)},
    {SCALAR("ctxsw", "selector_cycles"), .unit = "cycles",
     .description = "Median cycles per switch of the selector arm"},
    {SCALAR("ctxsw", "selector_mad_ns"), .unit = "ns",
     .description = "Median absolute deviation of the selector-arm switch time"},
    {SCALAR("ctxsw", "selector_mad_cycles"), .unit = "cycles",
     .description = "Median absolute deviation of the selector-arm cycles"},
    {SCALAR("ctxsw", "selector_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the selector-arm median"},
    {SCALAR("ctxsw", "selector_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the selector-arm median"},
    {SCALAR("ctxsw", "selector_ratio"), .unit = "ratio", .key = 1,
     .label = "Selector/high switch ratio",
     .description = "Median of paired selector/high switch-time ratios (< 1: the 32-bit segment "
                    "path is faster)",
     PROM("threadwatch_ctxsw_selector_ratio",
          "Median of paired selector/high switch-time ratios; below 1 the segment path is "
          "faster.",
          NULL, 1),
     RUN("selector/high", "selector_ratio_ci_lo", "selector_ratio_ci_hi")},
    {SCALAR("ctxsw", "selector_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the selector ratio",
     PROM("threadwatch_ctxsw_selector_ratio_ci_lower",
          "Lower bound of the 95% CI of the selector/high ratio.", NULL, 1)},
    {SCALAR("ctxsw", "selector_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the selector ratio",
     PROM("threadwatch_ctxsw_selector_ratio_ci_upper",
          "Upper bound of the 95% CI of the selector/high ratio.", NULL, 1)},
    {SCALAR("ctxsw", "selector_equivalent"), .unit = "bool",
     .description = "1 when the selector ratio's 90% CI lies within the equivalence margin of 1.0"},
    {SCALAR("ctxsw", "selector_fs_base"), .unit = "address",
     .description = "FS base of a thread of the selector arm"},
    {SCALAR("ctxsw", "selector_stack"), .unit = "address",
     .description = "Address of a selector-arm thread stack"},
    {SCALAR("ctxsw", "aa_ns"), .unit = "ns",
     .description = "Median time per switch of the A/A control (high stacks again)"},
    {SCALAR("ctxsw", "aa_cycles"), .unit = "cycles",
     .description = "Median cycles per switch of the A/A control"},
    {SCALAR("ctxsw", "aa_mad_ns"), .unit = "ns",
     .description = "Median absolute deviation of the A/A control's switch time"},
    {SCALAR("ctxsw", "aa_mad_cycles"), .unit = "cycles",
     .description = "Median absolute deviation of the A/A control's cycles"},
    {SCALAR("ctxsw", "aa_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the A/A control's median"},
    {SCALAR("ctxsw", "aa_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the A/A control's median"},
    {SCALAR("ctxsw", "aa_ratio"), .unit = "ratio",
     .description = "Median of paired A/A (high/high) ratios; 1.0 unless biased",
     PROM("threadwatch_ctxsw_aa_ratio",
          "Median of paired A/A (high/high) ratios; its CI holds 1 unless the run is biased.", NULL,
          1),
     RUN("a/a", "aa_ratio_ci_lo", "aa_ratio_ci_hi")},
    {SCALAR("ctxsw", "aa_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the A/A ratio",
     PROM("threadwatch_ctxsw_aa_ratio_ci_lower", "Lower bound of the 95% CI of the A/A ratio.",
          NULL, 1)},
    {SCALAR("ctxsw", "aa_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the A/A ratio",
     PROM("threadwatch_ctxsw_aa_ratio_ci_upper", "Upper bound of the 95% CI of the A/A ratio.",
          NULL, 1)},
    {SCALAR("ctxsw", "aa_equivalent"), .unit = "bool",
     .description = "1 when the A/A ratio's 90% CI lies within the margin of 1.0"},
    {SCALAR("ctxsw", "aa_fs_base"), .unit = "address",
     .description = "FS base of a thread of the A/A control"},
    {SCALAR("ctxsw", "aa_stack"), .unit = "address",
     .description = "Address of an A/A-control thread stack"},
    /* The selector arm's control: high stacks sampled in a child process,
     * as the selector arm is. */
    {SCALAR("ctxsw", "child_ns"), .unit = "ns",
     .description = "Median time per switch of high stacks sampled in a child process (the "
                    "selector arm's control)"},
    {SCALAR("ctxsw", "child_cycles"), .unit = "cycles",
     .description = "Median cycles per switch of the child-process control"},
    {SCALAR("ctxsw", "child_mad_ns"), .unit = "ns",
     .description = "Median absolute deviation of the child-process control's switch time"},
    {SCALAR("ctxsw", "child_mad_cycles"), .unit = "cycles",
     .description = "Median absolute deviation of the child-process control's cycles"},
    {SCALAR("ctxsw", "child_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the child-process control's median"},
    {SCALAR("ctxsw", "child_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the child-process control's median"},
    {SCALAR("ctxsw", "child_ratio"), .unit = "ratio",
     .description = "Median of paired child/high ratios: what sampling in a child process adds"},
    {SCALAR("ctxsw", "child_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the child/high ratio"},
    {SCALAR("ctxsw", "child_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the child/high ratio"},
    {SCALAR("ctxsw", "child_equivalent"), .unit = "bool",
     .description = "1 when the child/high ratio's 90% CI lies within the margin of 1.0"},
    {SCALAR("ctxsw", "child_fs_base"), .unit = "address",
     .description = "FS base of a thread of the child-process control"},
    {SCALAR("ctxsw", "child_stack"), .unit = "address",
     .description = "Address of a child-process control thread stack"},
    {SCALAR("ctxsw", "selector_child_ratio"), .unit = "ratio",
     .description = "Median of paired selector/child ratios: the segment path against high "
                    "stacks sampled the same way, in a child process",
     /* the figure the recommendation uses, named apart from selector/high */
     RUN("selector/control", "selector_child_ratio_ci_lo", "selector_child_ratio_ci_hi")},
    {SCALAR("ctxsw", "selector_child_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the selector/child ratio"},
    {SCALAR("ctxsw", "selector_child_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the selector/child ratio"},
    {SCALAR("ctxsw", "selector_child_equivalent"), .unit = "bool",
     .description = "1 when the selector/child ratio's 90% CI lies within the margin of 1.0"},
    /* A hand-off across CPUs against a switch on one CPU (the handoff
     * probe), per placement the host has. */
    {SCALAR("handoff", "same_cpu_ns"), .unit = "ns",
     .description = "Median time of a futex hand-off between two threads on one CPU (a switch)",
     PROM("threadwatch_handoff_seconds",
          "Median time of one futex hand-off between two threads, by placement.",
          "placement=\"same_cpu\"", 1e9),
     RUN("same", "same_cpu_ci_lo", "same_cpu_ci_hi")},
    {SCALAR("handoff", "same_cpu_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the same-CPU hand-off"},
    {SCALAR("handoff", "same_cpu_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the same-CPU hand-off"},
    {SCALAR("handoff", "cross_ratio"), .unit = "ratio", .key = 1, .abs_floor = 1,
     .label = "Hand-off across CPUs / on one",
     .description = "Paired ratio of a hand-off to a thread on the nearest other CPU the host "
                    "has (info.cross_placement) to one on the same CPU",
     PROM("threadwatch_handoff_cross_ratio",
          "A hand-off to a thread on the nearest other CPU over one on the same CPU (paired "
          "median ratio).",
          NULL, 1),
     RUN("cross", "cross_ratio_ci_lo", "cross_ratio_ci_hi")},
    {SCALAR("handoff", "cross_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the cross-CPU ratio"},
    {SCALAR("handoff", "cross_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the cross-CPU ratio"},
/* clang-format off */
#define PLACEMENT_ROWS(p, between, to) PLACEMENT(p, between),
    CATALOG_HANDOFF_PLACEMENTS(PLACEMENT_ROWS)
#undef PLACEMENT_ROWS
    /* clang-format on */
    {SCALAR("handoff", "aa_ns"), .unit = "ns",
     .description = "Median same-CPU hand-off of the A/A control"},
    {SCALAR("handoff", "aa_ci_lo"), .unit = "ns",
     .description = "Lower bound of the 95% CI of the A/A control's hand-off"},
    {SCALAR("handoff", "aa_ci_hi"), .unit = "ns",
     .description = "Upper bound of the 95% CI of the A/A control's hand-off"},
    {SCALAR("handoff", "aa_ratio"), .unit = "ratio",
     .description = "Paired A/A ratio (the same CPU against itself); 1.0 unless biased"},
    {SCALAR("handoff", "aa_ratio_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of the A/A ratio"},
    {SCALAR("handoff", "aa_ratio_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of the A/A ratio"},
    {SCALAR("handoff", "blocks"), .unit = "count", .description = "Interleaved blocks measured"},
    {SCALAR("handoff", "handoffs_per_sample"), .unit = "count",
     .description = "Hand-offs timed per sample"},
    /* Creators at once (createscale): the key figure is two creators
     * without glibc's stack cache, where they contend for mmap_lock. */
    {SCALAR("createscale", "cached_1_rate"), .unit = "per_s",
     .description = "Creates per second by one creator, with glibc's stack cache",
     RUN("create+join, cached", NULL, NULL)},
    {SCALAR("createscale", "nocache_1_rate"), .unit = "per_s",
     .description = "Creates per second by one creator, without glibc's stack cache"},
    {SCALAR("createscale", "nocache_2_efficiency"), .unit = "ratio", .key = 1, .abs_floor = 0.1,
     .label = "Two creators' scaling, no stack cache",
     .description = "Scaling efficiency of 2 creators, rate(2) / rate(1), without glibc's "
                    "stack cache (1: no contention; below 0.5: two make fewer than one)",
     PROM("threadwatch_create_scaling_efficiency",
          "Creates per second per creator with n creators at once over one creator alone, by "
          "creators and stack cache.",
          "creators=\"2\",stack_cache=\"nocache\"", 1),
     RUN("nocache x2", "nocache_2_efficiency_ci_lo", "nocache_2_efficiency_ci_hi")},
    {SCALAR("createscale", "nocache_2_efficiency_ci_lo"), .unit = "ratio",
     .description = "Lower bound of the 95% CI of that efficiency, without the stack cache"},
    {SCALAR("createscale", "nocache_2_efficiency_ci_hi"), .unit = "ratio",
     .description = "Upper bound of the 95% CI of that efficiency, without the stack cache"},
    {SCALAR("createscale", "nocache_2_rate"), .unit = "per_s",
     .description = "Creates per second per creator, 2 creators at once, without glibc's "
                    "stack cache"},
    CREATORS("cached", "2", "with glibc's stack cache"),
    CREATORS("cached", "3", "with glibc's stack cache"),
    CREATORS("cached", "4", "with glibc's stack cache"),
    CREATORS("nocache", "3", "without glibc's stack cache"),
    CREATORS("nocache", "4", "without glibc's stack cache"),
    /* What an idle thread keeps resident, by stack kind (stackmem). */
    STACKMEM("glibc", "", "default", "stacks glibc maps (MAP_STACK), default size", 1,
             "Memory per idle thread", STACKMEM_HELP,
             RUN("per thread", "glibc_bytes_per_thread_ci_lo", "glibc_bytes_per_thread_ci_hi")),
    STACKMEM("map_stack", "", "default", "own stacks mapped with MAP_STACK, default size", 0, NULL,
             NULL),
    STACKMEM("plain", "", "default", "own stacks mapped without MAP_STACK, default size", 0, NULL,
             NULL),
    STACKMEM("huge", "", "default",
             "own stacks without MAP_STACK advised MADV_HUGEPAGE (as THP always gives them), "
             "default size",
             0, NULL, NULL),
    STACKMEM("glibc", "_2m", "2m", "stacks glibc maps, 2 MiB", 0, NULL, NULL),
    STACKMEM("map_stack", "_2m", "2m", "own stacks mapped with MAP_STACK, 2 MiB", 0, NULL, NULL),
    STACKMEM("plain", "_2m", "2m", "own stacks mapped without MAP_STACK, 2 MiB", 0, NULL, NULL),
    STACKMEM("huge", "_2m", "2m", "own stacks advised MADV_HUGEPAGE, 2 MiB", 0, NULL, NULL),
    {SCALAR("ctxsw", "equivalence_margin"), .unit = "ratio",
     .description = "Equivalence margin m: equivalent means within 1 +- m",
     PROM("threadwatch_ctxsw_equivalence_margin",
          "The equivalence margin m of the low/high ratio (equivalent: within 1 +- m).", NULL, 1)},
    {SCALAR("ctxsw", "equivalent"), .unit = "bool",
     .description = "1 when the low/high ratio's 90% CI lies inside [1 - m, 1 + m] (a TOST at "
                    "alpha 0.05), else 0",
     PROM("threadwatch_ctxsw_equivalent",
          "1 when the low/high ratio's 90% CI lies within the equivalence margin of 1 (TOST).",
          NULL, 1)},
    {SCALAR("map32", "window_lo"), .unit = "address",
     .description = "Start of the MAP_32BIT window"},
    {SCALAR("map32", "window_hi"), .unit = "address", .description = "End of the MAP_32BIT window"},
    {SCALAR("map32", "window_bytes"), .unit = "bytes",
     .description = "Size of the MAP_32BIT window",
     PROM("threadwatch_map32_window_bytes", "Size of the MAP_32BIT window.", NULL, 1),
     RUN("window", NULL, NULL)},
    {SCALAR("map32", "stack_bytes"), .unit = "bytes",
     .description = "Stack size used to fill the window"},
    {SCALAR("map32", "capacity_stacks"), .unit = "count", .key = 1,
     .description = "Thread stacks that fit in the MAP_32BIT window",
     PROM("threadwatch_map32_capacity_stacks",
          "Thread stacks of the default size that fit in the MAP_32BIT window.", NULL, 1)},
    {
        SCALAR("map32", "slope"),
        .unit = "slope",
        .key = 1,
        .abs_floor = SLOPE_FLOOR,
        .description = "Log-log slope of failing MAP_32BIT mmap time against VMA count",
        PROM("threadwatch_map32_slope",
             "Log-log slope of failing MAP_32BIT mmap time against VMA count (1: linear search).",
             NULL, 1),
    },
    {SCALAR("map32", "slope_ci_lo"), .unit = "slope",
     .description = "Lower bound of the 95% CI of the slope"},
    {SCALAR("map32", "slope_ci_hi"), .unit = "slope",
     .description = "Upper bound of the 95% CI of the slope"},
    {SCALAR("map32", "fail_ns_at_max"), .unit = "ns", .key = 1,
     .label = "Failing MAP_32BIT mmap at most VMAs",
     .description = "Failing MAP_32BIT mmap time at the largest VMA count",
     PROM("threadwatch_map32_fail_seconds",
          "Time of one failing MAP_32BIT mmap at the largest VMA count reached.", NULL, 1e9)},
    {SCALAR("map32", "max_vmas"), .unit = "vmas", .description = "Largest VMA count reached"},
    {SCALAR("map32", "start_vmas"), .unit = "vmas",
     .description = "VMA count when the measurement started"},
    /* The walks of the pre-3.8 kernels: a successful
     * MAP_32BIT call against the window VMAs below its hole, the failing
     * call against the VMAs inside the window, the retry against all. */
    LADDER("fill", "Successful MAP_32BIT mmap into the window's top hole", "inside the window"),
    {SCALAR("map32", "fill_ns_at_max"), .unit = "ns",
     .description = "Successful MAP_32BIT mmap into the window's top hole at the top rung of its "
                    "ladder"},
    {SCALAR("map32", "fill_ns_per_vma"), .unit = "ns_per_vma", .abs_floor = 1,
     .description = "Successful MAP_32BIT mmap per window VMA below its hole (b of a + b n)"},
    {SCALAR("map32", "fill_exponent"), .unit = "slope",
     .description = "Successful MAP_32BIT mmap: k of the best a + b n^k (1: linear)"},
    LADDER("fail", "Failing MAP_32BIT mmap", "inside the window"),
    LADDER("retry", "Plain retry after a failing MAP_32BIT mmap", "in the process"),
    {SCALAR("map32", "retry_ns_at_max"), .unit = "ns", .key = 1,
     .description = "Plain retry after a failing MAP_32BIT mmap at the top rung of its ladder",
     PROM("threadwatch_map32_retry_seconds",
          "Time of the plain retry right after a failing MAP_32BIT mmap, at the largest VMA "
          "count reached.",
          NULL, 1e9)},
    {SCALAR("map32", "fail_ns_per_vma"), .unit = "ns_per_vma", .key = 1, .abs_floor = 1,
     .description = "Failing MAP_32BIT mmap per VMA inside the window (b of a + b n)",
     PROM("threadwatch_map32_fail_seconds_per_vma",
          "Fitted cost of the failing MAP_32BIT mmap per VMA inside the window (b of a + b n).",
          NULL, 1e9)},
    {SCALAR("map32", "retry_ns_per_vma"), .unit = "ns_per_vma", .key = 1, .abs_floor = 1,
     .description = "Plain retry after a failing MAP_32BIT mmap per VMA in the process (b of a + "
                    "b n)",
     PROM("threadwatch_map32_retry_seconds_per_vma",
          "Fitted cost of the retry per VMA in the process (b of a + b n).", NULL, 1e9)},
    {SCALAR("map32", "fail_exponent"), .unit = "slope",
     .description = "Failing MAP_32BIT mmap: k of the best a + b n^k (1: linear)",
     PROM("threadwatch_map32_fail_exponent",
          "Exponent k of the best a + b n^k fit of the failing call (1: linear, near 0: a "
          "tree).",
          NULL, 1)},
    {SCALAR("map32", "retry_exponent"), .unit = "slope",
     .description = "Plain retry after a failing MAP_32BIT mmap: k of the best a + b n^k (1: "
                    "linear)",
     PROM("threadwatch_map32_retry_exponent",
          "Exponent k of the best a + b n^k fit of the retry (1: linear, near 0: a tree).", NULL,
          1)},
    {SCALAR("map32", "window_vmas"), .unit = "vmas",
     .description = "VMAs inside the MAP_32BIT window once full (2 per stack)",
     PROM("threadwatch_map32_window_vmas", "VMAs inside the MAP_32BIT window once full.", NULL, 1)},
    {SCALAR("map32", "window_vmas_at_stack_size"), .unit = "vmas",
     .description = "VMAs a window filled with stacks of this size alone would hold: 2 x 1 GiB / "
                    "(stack + guard)"},
    {SCALAR("map32", "plain_ns_at_max"), .unit = "ns",
     .description = "Plain mmap alone (the baseline) at the retry ladder's top"},
    {SCALAR("threads", "stack_bytes"), .unit = "bytes",
     .description = "Stack size of each created thread"},
    {SCALAR("threads", "default_stack_lo"), .unit = "address",
     .description = "Lowest address of a glibc-placed stack"},
    {SCALAR("threads", "default_stack_hi"), .unit = "address",
     .description = "Highest address of a glibc-placed stack"},
    POLICY("default", "glibc's own stacks", 1, "kept alive, default",
           "Creates/s, threads kept alive, default stacks, first bucket", NULL),
    POLICY("low", "low (MAP_32BIT) stacks", 0, "kept alive, low", NULL,
           "Creates/s, threads kept alive, low stacks, steady"),
    POLICY("high", "high (MAP_STACK) stacks", 0, NULL, NULL, NULL),
    {SCALAR("threads", "capacity_predicted"), .unit = "threads",
     .description = "Stacks the 1 GiB MAP_32BIT window holds at this stack size: where the knee "
                    "should be",
     PROM("threadwatch_threads_capacity_predicted",
          "Stacks the MAP_32BIT window holds at the probe's stack size: where the low knee "
          "should be.",
          NULL, 1)},
    {SCALAR("threads", "bucket_width"), .unit = "threads",
     .description = "Live threads per bucket of the create-cost series"},
    {SCALAR("threads", "low_window_stacks"), .unit = "threads",
     .description = "Low-policy stacks MAP_32BIT placed in the window"},
    {SCALAR("threads", "max_threads"), .unit = "threads",
     .description = "Live threads reached (after clamping to host limits)",
     PROM_RENAMED("threadwatch_threads_live_max", "threadwatch_threads_max",
                  "Live threads the last threads run reached (not kernel.threads-max)."),
     RUN("max", NULL, NULL)},
};
const size_t catalog_n_metrics = sizeof(catalog_metrics) / sizeof(catalog_metrics[0]);

const struct catalog_probe catalog_probes[] = {
    {"ctxsw", 20, "ratio", {NULL}, {"selector", "aa", NULL}, 0, "context-switch", 1},
    {"threads", 40, "low_steady_rate", {NULL}, {NULL}, 0, "thread-creation", 0},
    {"map32", 30, "fail_ns_at_max", {"fail_class", "retry_class"}, {NULL}, 0, "MAP_32BIT", 0},
    {"handoff", 20, "cross_ratio", {"cross_placement"}, {NULL}, 1, "hand-off", 1},
    {"stackmem", 20, "glibc_bytes_per_thread", {"thp_enabled"}, {NULL}, 0, "stack-memory", 0},
    {"createscale", 30, "nocache_2_efficiency", {NULL}, {NULL}, 1, "concurrent-create", 1},
};
const size_t catalog_n_probes = sizeof(catalog_probes) / sizeof(catalog_probes[0]);

int catalog_arm_known(const struct catalog_probe *p, const char *arm)
{
	for (size_t i = 0; p && i < sizeof(p->arms) / sizeof(p->arms[0]) && p->arms[i]; i++)
		if (!strcmp(p->arms[i], arm))
			return 1;
	return 0;
}

const struct catalog_metric *catalog_metric_find(const char *name)
{
	for (size_t i = 0; i < catalog_n_metrics; i++)
		if (!strcmp(catalog_metrics[i].name, name))
			return &catalog_metrics[i];
	return NULL;
}

const struct catalog_metric *catalog_metric_find_prom(const char *family)
{
	for (size_t i = 0; i < catalog_n_metrics; i++)
		if (catalog_metrics[i].prom.name && !strcmp(catalog_metrics[i].prom.name, family))
			return &catalog_metrics[i];
	return NULL;
}

const struct catalog_probe *catalog_probe_find(const char *name)
{
	for (size_t i = 0; i < catalog_n_probes; i++)
		if (!strcmp(catalog_probes[i].name, name))
			return &catalog_probes[i];
	return NULL;
}

const struct catalog_metric *catalog_scalar_find(const char *probe, const char *scalar)
{
	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];

		if (m->scalar && !strcmp(m->probe, probe) && !strcmp(m->scalar, scalar))
			return m;
	}
	return NULL;
}

static json_t *metric_json(const struct catalog_metric *m)
{
	json_t *prom = json_null();

	if (m->prom.name)
		prom = json_pack("{s:s,s:s,s:s?,s:s?}", "name", m->prom.name, "type", m->prom.type,
		                 "labels", m->prom.labels, "deprecated_name", m->prom.deprecated);
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:s?,s:o}", "name", m->name, "probe", m->probe,
	                 "unit", m->unit, "description", m->description, "key_figure", m->key,
	                 "label", m->label, "prometheus", prom);
}

json_t *catalog_json(void)
{
	json_t *metrics = json_array(), *probes = json_array();

	for (size_t i = 0; i < catalog_n_metrics; i++)
		json_array_append_new(metrics, metric_json(&catalog_metrics[i]));
	for (size_t i = 0; i < catalog_n_probes; i++) {
		const struct catalog_probe *p = &catalog_probes[i];
		char key[128];

		snprintf(key, sizeof(key), "%s.%s", p->name, p->key_scalar);
		json_array_append_new(probes, json_pack("{s:s,s:s,s:f,s:s}", "name", p->name,
		                                        "title", p->title, "timeout_s",
		                                        p->timeout_s, "key_figure", key));
	}
	return json_pack("{s:o,s:o,s:o}", "metrics", metrics, "probes", probes, "workload_metrics",
	                 catalog_workloads_json());
}
