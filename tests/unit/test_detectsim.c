/*
 * test_detectsim: the simulated fleet's bookkeeping. A large step on quiet
 * hosts is found on every figure exactly when k runs show it (delay k - 1),
 * with no false event; no step means no steps counted; the same seed gives
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
	assert_float_equal(r.median_delay_cycles, c.k - 1, 0);
	assert_int_equal(r.max_delay_cycles, c.k - 1);
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

static void test_seeds(void **state)
{
	struct detect_config c;
	struct dsim_params p = small();
	struct dsim_result a, b, d;

	(void)state;
	detect_config_default(&c);
	c.k = 3; /* with k = 3 the episodes give false events to count */
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
	detect_config_default(&c);
	c.k = 0;
	assert_int_equal(dsim_run(&c, &p, &r), -EINVAL);
	dsim_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_large_step),
	    cmocka_unit_test(test_seeds),
	    cmocka_unit_test(test_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
