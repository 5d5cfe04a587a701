/*
 * test_detectsim: the simulated fleet's bookkeeping. A large step on quiet
 * hosts is found on every figure exactly when k_sustained runs show it
 * (delay k_sustained - 1) by the slow path, and with a fingerprint change
 * when k runs do (delay k - 1) by the fast path, each counted apart, with
 * no false event; the visible share of episodes marks their runs
 * contended; no step means no steps counted; the same seed gives
 * the same result and another seed another; host-days follow from the
 * cycle length; bad parameters are refused with a message.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "detect.h"
#include "detectsim.h"

static struct dsim_params small(void)
{
	struct dsim_params p;

	dsim_params_default(&p);
	p.hosts = 20;
	p.days = 40;
	return p;
}

static void test_large_step(void **state)
{
	struct detect_config c;
	struct dsim_params p = small();
	struct dsim_result r;

	(void)state;
	detect_config_default(&c);
	p.cv = 0.01;
	p.step = 0.5;
	p.step_day = 30;
	assert_int_equal(dsim_step_at(&p), 120);
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_int_equal(r.steps, 20 * dsim_n_figures());
	assert_int_equal(r.detected_steps, r.steps);
	assert_int_equal(r.detected_in_time, r.steps);
	assert_int_equal(r.false_events, 0);
	assert_float_equal(r.median_delay_cycles, c.k_sustained - 1, 0);
	assert_int_equal(r.max_delay_cycles, c.k_sustained - 1);
	assert_int_equal(r.kind[DETECT_PATH_SUSTAINED].steps, r.steps);
	assert_int_equal(r.kind[DETECT_PATH_SUSTAINED].by_path[DETECT_PATH_SUSTAINED], r.steps);
	assert_int_equal(r.kind[DETECT_PATH_CHANGE].steps, 0);
	assert_float_equal(r.host_days, 800, 1e-9);
	assert_int_equal(r.runs, 20 * 160 * dsim_n_figures());
	dsim_result_free(&r);

	/* a step down is found the same way; one below the minimum effect never */
	p.step = -0.3;
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_int_equal(r.detected_steps, r.steps);
	dsim_result_free(&r);
	p.step = 0.03;
	p.cv = 0.001;
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_int_equal(r.detected_steps, 0);
	assert_true(isnan(r.median_delay_cycles));
	dsim_result_free(&r);
}

/* Half the hosts' steps come with a kernel change: those are found on the
 * fast path k - 1 cycles after it, the others on the slow path, each kind
 * counted and timed apart. */
static void test_two_paths(void **state)
{
	struct detect_config c;
	struct dsim_params p = small();
	struct dsim_result r;
	const uint64_t half = 10 * dsim_n_figures();

	(void)state;
	detect_config_default(&c);
	p.cv = 0.01;
	p.step = 0.5;
	p.step_day = 30;
	p.fp_share = 0.5;
	assert_true(dsim_host_fp_change(&p, 9) && !dsim_host_fp_change(&p, 10));
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_int_equal(r.steps, 2 * half);
	for (int k = 0; k < 2; k++) {
		const struct dsim_steps *s = &r.kind[k];
		const unsigned delay = k == DETECT_PATH_CHANGE ? c.k - 1 : c.k_sustained - 1;

		assert_int_equal(s->steps, half);
		assert_int_equal(s->detected, half);
		assert_int_equal(s->in_time, half);
		assert_int_equal(s->by_path[k], half);
		assert_float_equal(s->median_delay_cycles, delay, 0);
		assert_int_equal(s->max_delay_cycles, delay);
	}
	assert_int_equal(r.false_events, 0);
	dsim_result_free(&r);
}

/* Episodes: none marked contended at --episode-visible 0, every episode's
 * runs at 1, about half at the default. */
static void test_episode_visible(void **state)
{
	struct detect_config c;
	struct dsim_params p = small();
	struct dsim_result r;
	uint64_t all;

	(void)state;
	detect_config_default(&c);
	p.noise = DSIM_EPISODIC;
	p.episode_visible = 0;
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_int_equal(r.contended_runs, 0);
	dsim_result_free(&r);
	p.episode_visible = 1;
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	all = r.contended_runs;
	/* 2% of cycles start an episode of 4: about 7.4% of the runs */
	assert_true(all > r.runs / 20 && all < r.runs / 8);
	dsim_result_free(&r);
	p.episode_visible = DSIM_EPISODE_VISIBLE_DEFAULT;
	assert_int_equal(dsim_run(&c, &p, &r), 0);
	assert_true(r.contended_runs > all / 4 && r.contended_runs < all * 3 / 4);
	dsim_result_free(&r);
}

static void test_seeds(void **state)
{
	struct detect_config c;
	struct dsim_params p = small();
	struct dsim_result a, b, d;

	(void)state;
	detect_config_default(&c);
	c.k = c.k_sustained = 3; /* with k = 3 the episodes give false events to count */
	p.episode_visible = 0;
	p.noise = DSIM_EPISODIC;
	p.cv = 0.05;
	p.phi = 0.5;
	p.episode_rate = 0.05;
	p.episode_size = 0.3;
	p.every_s = 3600 * 4; /* 6 cycles a day */
	assert_int_equal(dsim_run(&c, &p, &a), 0);
	assert_int_equal(dsim_run(&c, &p, &b), 0);
	p.seed = 2;
	assert_int_equal(dsim_run(&c, &p, &d), 0);
	assert_true(a.false_events > 0);
	assert_int_equal(a.false_events, b.false_events);
	assert_memory_equal(a.false_by_figure, b.false_by_figure,
	                    dsim_n_figures() * sizeof(*a.false_by_figure));
	assert_true(d.false_events != a.false_events);
	assert_int_equal(a.steps, 0);
	assert_float_equal(a.host_days, 800, 1e-9);
	assert_int_equal(a.runs, 20 * 240 * dsim_n_figures());
	dsim_result_free(&a);
	dsim_result_free(&b);
	dsim_result_free(&d);
}

static void test_bad_params(void **state)
{
	struct dsim_params p = small();
	struct detect_config c;
	struct dsim_result r;
	char err[256];

	(void)state;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), 0);
	p.hosts = 0;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--hosts"));
	p = small();
	p.cv = 0.5;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--cv"));
	p = small();
	p.phi = 1;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	p = small();
	p.step = 0.1;
	p.step_day = 40;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--step-day"));
	p = small();
	p.every_s = 0.5;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	p = small();
	p.episode_visible = 1.5;
	assert_int_equal(dsim_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--episode-visible"));
	p = small();
	detect_config_default(&c);
	c.k = 0;
	assert_int_equal(dsim_run(&c, &p, &r), -EINVAL);
	dsim_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_large_step),      cmocka_unit_test(test_two_paths),
	    cmocka_unit_test(test_episode_visible), cmocka_unit_test(test_seeds),
	    cmocka_unit_test(test_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
