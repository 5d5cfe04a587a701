/*
 * test_observe_parse: the observer's parsers of kernel text and messages
 * (lib/observe_proc.c, observe_stacks.c, observe_cn.c) and its process
 * table (observe_table.c): stat lines whose comm holds ") (", sched and
 * status counts as proc_sched_show_task() and task_context_switch_counts()
 * print them, maps layouts of glibc's and the JVM's stacks against those
 * that are not stacks, smaps' per-mapping figures, connector messages as
 * cn_netlink_send() frames them (and cut, wrong or foreign ones), taskstats
 * exits as taskstats_exit() sends them (an older struct without ac_tgid, a
 * cut one, another family's), the family id of a CTRL_CMD_NEWFAMILY, and a
 * reused PID in the table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "observep.h"

static void test_stat(void **state)
{
	struct obs_stat st;
	const char *hostile = "4242 (a) (b) x) S 1 4242 4242 0 -1 4194560 10 0 0 0 1 2 0 0 20 -5 "
	                      "37 0 123456 1000 100";

	(void)state;
	assert_int_equal(obs_stat_parse(hostile, &st), 0);
	assert_string_equal(st.comm, "a) (b) x");
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.threads, 37);
	assert_int_equal(st.starttime, 123456);
	assert_int_equal(st.kthread, 0);
	/* kthreadd's child: PF_KTHREAD (0x00200000) in the flags */
	assert_int_equal(
	    obs_stat_parse("12 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 20 0 "
	                   "1 0 50",
	                   &st),
	    0);
	assert_int_equal(st.kthread, 1);
	assert_int_equal(obs_stat_parse("12 (no close paren S 1", &st), -EINVAL);
	assert_int_equal(obs_stat_parse("12 (short) S 1 2 3", &st), -EINVAL);
	assert_int_equal(obs_stat_parse("12 (12345678901234567) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 "
	                                "20 0 1 0 50",
	                                &st),
	                 -EINVAL);
	assert_int_equal(obs_stat_parse("", &st), -EINVAL);
}

static void test_sched(void **state)
{
	static const char sched[] =
	    "twload (4242, #threads: 2)\n"
	    "-------------------------------------------------------------------\n"
	    "se.exec_start                                :        124589.447669\n"
	    "se.nr_migrations                             :                   17\n"
	    "nr_switches                                  :                 3005\n"
	    "nr_voluntary_switches                        :                 3000\n"
	    "nr_involuntary_switches                      :                    5\n"
	    "policy                                       :                    0\n";
	static const char status[] = "Name:\ttwload\nThreads:\t2\n"
	                             "voluntary_ctxt_switches:\t41\n"
	                             "nonvoluntary_ctxt_switches:\t3\n";
	struct obs_counts c;

	(void)state;
	assert_int_equal(obs_sched_parse(sched, &c), 0);
	assert_int_equal(c.vol, 3000);
	assert_int_equal(c.invol, 5);
	assert_int_equal(c.migr, 17);
	assert_int_equal(c.have_migr, 1);
	assert_int_equal(obs_sched_parse(status, &c), 0);
	assert_int_equal(c.vol, 41);
	assert_int_equal(c.invol, 3);
	assert_int_equal(c.have_migr, 0);
	assert_int_equal(obs_sched_parse("nr_voluntary_switches : 3\n", &c), -EINVAL);
	assert_int_equal(
	    obs_sched_parse("nr_voluntary_switches : x\nnr_involuntary_switches : 1\n", &c),
	    -EINVAL);
	assert_int_equal(obs_sched_parse("", &c), -EINVAL);
}

/* show_map_vma()'s layout: glibc's stacks (a 4 KiB guard under 8 MiB less
 * the guard), one of the JVM's (16 KiB of zones under 1 MiB less them),
 * the main thread's [stack], a malloc arena (read-write BELOW its reserve),
 * a file, a guard too large, a read-write mapping with no guard, and one a
 * page above a PROT_NONE mapping (not its guard). */
static const char maps[] =
    "55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 1234 /usr/bin/twload\n"
    "7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
    "7f0000001000-7f0000800000 rw-p 00000000 00:00 0 \n"
    "7f0000800000-7f0000801000 ---p 00000000 00:00 0 \n"
    "7f0000801000-7f0001000000 rw-p 00000000 00:00 0 \n"
    "7f1000000000-7f1000004000 ---p 00000000 00:00 0 \n"
    "7f1000004000-7f1000100000 rw-p 00000000 00:00 0                          [anon:java]\n"
    "7f2000000000-7f2000021000 rw-p 00000000 00:00 0 \n"
    "7f2000021000-7f2004000000 ---p 00000000 00:00 0 \n"
    "7f3000000000-7f3000200000 ---p 00000000 00:00 0 \n"
    "7f3000200000-7f3000400000 rw-p 00000000 00:00 0 \n"
    "7f4000000000-7f4000001000 ---p 00000000 fd:01 99 /usr/lib/libx.so\n"
    "7f4000001000-7f4000100000 rw-p 00000000 00:00 0 \n"
    "7f5000000000-7f5000100000 rw-p 00000000 00:00 0 \n"
    "7f6000000000-7f6000001000 ---p 00000000 00:00 0 \n"
    "7f6000002000-7f6000100000 rw-p 00000000 00:00 0 \n"
    "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
    "not a maps line\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static void test_stacks(void **state)
{
	struct obs_vma *v;
	size_t n = obs_stacks_find(maps, &v);

	(void)state;
	assert_int_equal(n, 3);
	assert_int_equal(v[0].start, 0x7f0000001000ULL);
	assert_int_equal(v[0].end, 0x7f0000800000ULL);
	assert_int_equal(v[1].start, 0x7f0000801000ULL);
	assert_int_equal(v[2].start, 0x7f1000004000ULL);
	assert_int_equal(v[2].end, 0x7f1000100000ULL);
	free(v);
	assert_int_equal(obs_stacks_find("", &v), 0);
	assert_null(v);
}

static void test_smaps(void **state)
{
	static const char smaps[] = "7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
	                            "Size:                  4 kB\nRss:                   0 "
	                            "kB\nAnonHugePages:         0 kB\n"
	                            "7f0000001000-7f0000800000 rw-p 00000000 00:00 0 \n"
	                            "Size:               8188 kB\nRss:                  12 "
	                            "kB\nAnonHugePages:         0 kB\n"
	                            "7f3000200000-7f3000400000 rw-p 00000000 00:00 0 \n"
	                            "Size:               2048 kB\nRss:                2048 "
	                            "kB\nAnonHugePages:      2048 kB\n"
	                            "VmFlags: rd wr mr mw me ac hg\n";
	const struct obs_vma v[] = {{0x7f0000001000ULL, 0x7f0000800000ULL},
	                            {0x7f3000200000ULL, 0x7f3000400000ULL},
	                            {0x7f9000000000ULL, 0x7f9000100000ULL}};
	struct obs_stack_use use[3];

	(void)state;
	assert_int_equal(obs_smaps_stacks(smaps, v, 3, use), 0);
	assert_int_equal(use[0].resident, 12 * 1024);
	assert_int_equal(use[0].thp, 0);
	assert_int_equal(use[1].resident, 2048 * 1024);
	assert_int_equal(use[1].huge, 2048 * 1024);
	assert_int_equal(use[1].thp, 1);
	assert_int_equal(use[2].resident, 0); /* not in the text: nothing */
}

/* A connector datagram as cn_netlink_send() frames one event. */
static size_t frame(unsigned char *buf, uint32_t what, const uint32_t *fields, size_t nfields,
                    uint16_t type, uint32_t idx)
{
	size_t evlen = sizeof(struct proc_event);
	struct nlmsghdr nh = {.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + sizeof(struct cn_msg) + evlen),
	                      .nlmsg_type = type};
	struct cn_msg cm = {
	    .id = {.idx = idx, .val = CN_VAL_PROC}, .seq = 7, .ack = 9, .len = (uint16_t)evlen};
	unsigned char *pe = buf + NLMSG_HDRLEN + sizeof(cm);

	memset(buf, 0, NLMSG_ALIGN(nh.nlmsg_len));
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + NLMSG_HDRLEN, &cm, sizeof(cm));
	memcpy(pe + offsetof(struct proc_event, what), &what, sizeof(what));
	memcpy(pe + offsetof(struct proc_event, event_data), fields, nfields * sizeof(*fields));
	return NLMSG_ALIGN(nh.nlmsg_len);
}

static void test_cn(void **state)
{
	unsigned char buf[1024];
	struct obs_ev ev[4];
	size_t bad = 0, len;
	/* fork: parent_pid, parent_tgid, child_pid, child_tgid */
	const uint32_t thread[] = {100, 100, 105, 100}, proc[] = {1, 1, 200, 200};
	const uint32_t exit_[] = {105, 100, 0, 17, 1, 1}, ack[] = {1}; /* EPERM */

	(void)state;
	len = frame(buf, PROC_EVENT_FORK, thread, 4, NLMSG_DONE, CN_IDX_PROC);
	len += frame(buf + len, PROC_EVENT_FORK, proc, 4, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 2);
	assert_int_equal(bad, 0);
	assert_int_equal(ev[0].what, OBS_EV_FORK);
	assert_int_equal(ev[0].pid, 105);
	assert_int_equal(ev[0].tgid, 100);
	assert_int_equal(ev[1].pid, ev[1].tgid);
	assert_int_equal(ev[0].seq, 7);
	assert_int_equal(ev[0].ack, 9);

	len = frame(buf, PROC_EVENT_EXIT, exit_, 6, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 1);
	assert_int_equal(ev[0].what, OBS_EV_EXIT);
	assert_int_equal(ev[0].pid, 105);
	assert_int_equal(ev[0].tgid, 100);

	len = frame(buf, PROC_EVENT_NONE, ack, 1, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 1);
	assert_int_equal(ev[0].what, OBS_EV_ACK);
	assert_int_equal(ev[0].err, 1);

	/* an event the observer does not read */
	len = frame(buf, PROC_EVENT_UID, thread, 4, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 1);
	assert_int_equal(ev[0].what, OBS_EV_OTHER);

	/* refused: another connector, another type, a cut payload, a length
	 * past the datagram, a zero pid */
	len = frame(buf, PROC_EVENT_FORK, thread, 4, NLMSG_DONE, CN_IDX_PROC + 1);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 0);
	assert_int_equal(bad, 1);
	len = frame(buf, PROC_EVENT_FORK, thread, 4, NLMSG_ERROR, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 0);
	assert_int_equal(bad, 2);
	len = frame(buf, PROC_EVENT_FORK, thread, 4, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, NLMSG_HDRLEN + sizeof(struct cn_msg) + 20, ev, 4, &bad),
	                 0);
	assert_int_equal(bad, 3);
	{
		struct cn_msg cm;

		memcpy(&cm, buf + NLMSG_HDRLEN, sizeof(cm));
		cm.len = 8; /* shorter than the fork fields */
		memcpy(buf + NLMSG_HDRLEN, &cm, sizeof(cm));
		assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 0);
		assert_int_equal(bad, 4);
	}
	{
		const uint32_t zero[] = {1, 1, 0, 0};

		len = frame(buf, PROC_EVENT_FORK, zero, 4, NLMSG_DONE, CN_IDX_PROC);
		assert_int_equal(obs_cn_parse(buf, len, ev, 4, &bad), 0);
		assert_int_equal(bad, 5);
	}
	assert_int_equal(obs_cn_parse(buf, 3, ev, 4, &bad), 0);
	assert_int_equal(obs_cn_parse(buf, 0, ev, 4, &bad), 0);
	/* max bounds what it writes */
	len = frame(buf, PROC_EVENT_FORK, thread, 4, NLMSG_DONE, CN_IDX_PROC);
	len += frame(buf + len, PROC_EVENT_FORK, proc, 4, NLMSG_DONE, CN_IDX_PROC);
	assert_int_equal(obs_cn_parse(buf, len, ev, 1, &bad), 1);
}

/* A taskstats exit as taskstats_exit() sends it: a generic netlink
 * message of the family, an AGGR_PID holding PID and STATS. */
static size_t ts_frame(unsigned char *buf, uint16_t family, uint32_t tid, uint32_t tgid,
                       uint16_t version, uint64_t vol, uint64_t invol, size_t stats_len)
{
	struct taskstats st;
	struct nlattr aggr = {.nla_type = TASKSTATS_TYPE_AGGR_PID},
	              pid = {.nla_len = NLA_HDRLEN + 4, .nla_type = TASKSTATS_TYPE_PID},
	              sta = {.nla_len = (uint16_t)(NLA_HDRLEN + stats_len),
	                     .nla_type = TASKSTATS_TYPE_STATS};
	struct genlmsghdr gh = {.cmd = TASKSTATS_CMD_NEW, .version = 1};
	struct nlmsghdr nh = {.nlmsg_type = family};
	size_t at = NLMSG_HDRLEN + GENL_HDRLEN;

	memset(&st, 0, sizeof(st));
	st.version = version;
	st.nvcsw = vol;
	st.nivcsw = invol;
	st.ac_tgid = tgid;
	aggr.nla_len = (uint16_t)(NLA_HDRLEN + NLA_ALIGN(pid.nla_len) + NLA_ALIGN(sta.nla_len));
	nh.nlmsg_len = (uint32_t)(at + aggr.nla_len);
	memset(buf, 0, NLMSG_ALIGN(nh.nlmsg_len));
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + NLMSG_HDRLEN, &gh, sizeof(gh));
	memcpy(buf + at, &aggr, sizeof(aggr));
	at += NLA_HDRLEN;
	memcpy(buf + at, &pid, sizeof(pid));
	memcpy(buf + at + NLA_HDRLEN, &tid, 4);
	at += NLA_ALIGN(pid.nla_len);
	memcpy(buf + at, &sta, sizeof(sta));
	memcpy(buf + at + NLA_HDRLEN, &st, stats_len);
	return NLMSG_ALIGN(nh.nlmsg_len);
}

static void test_ts(void **state)
{
	static unsigned char buf[4096] __attribute__((aligned(8)));
	struct obs_ts_exit ex[4];
	size_t bad = 0, len;
	const size_t full = sizeof(struct taskstats);
	const size_t v1 = offsetof(struct taskstats, nivcsw) + 8; /* no ac_tgid yet */

	(void)state;
	len = ts_frame(buf, 27, 105, 100, 13, 40, 3, full);
	len += ts_frame(buf + len, 27, 106, 100, 13, 7, 0, full);
	assert_int_equal(obs_ts_parse(buf, len, 27, ex, 4, &bad), 2);
	assert_int_equal(bad, 0);
	assert_int_equal(ex[0].tid, 105);
	assert_int_equal(ex[0].tgid, 100);
	assert_int_equal(ex[0].vol, 40);
	assert_int_equal(ex[0].invol, 3);
	assert_int_equal(ex[1].tid, 106);
	/* an older struct: counts, but no tgid to tell the process by */
	len = ts_frame(buf, 27, 105, 100, 8, 40, 3, v1);
	assert_int_equal(obs_ts_parse(buf, len, 27, ex, 4, &bad), 1);
	assert_int_equal(ex[0].tgid, 0);
	assert_int_equal(ex[0].vol, 40);
	/* another family's message is not ours */
	len = ts_frame(buf, 28, 105, 100, 13, 40, 3, full);
	assert_int_equal(obs_ts_parse(buf, len, 27, ex, 4, &bad), 0);
	assert_int_equal(bad, 0);
	/* a STATS too short for the counts, a length past the datagram */
	len = ts_frame(buf, 27, 105, 100, 13, 40, 3, 16);
	assert_int_equal(obs_ts_parse(buf, len, 27, ex, 4, &bad), 0);
	assert_int_equal(bad, 1);
	len = ts_frame(buf, 27, 105, 100, 13, 40, 3, full);
	assert_int_equal(obs_ts_parse(buf, len - 8, 27, ex, 4, &bad), 0);
	assert_int_equal(bad, 2);
	assert_int_equal(obs_ts_parse(buf, 3, 27, ex, 4, &bad), 0);
}

/* A TGID query's answer, as cmd_attr_tgid() builds it: AGGR_TGID holding
 * TGID and STATS, sent with the request's seq. */
static size_t ts_sum_frame(unsigned char *buf, uint16_t family, uint32_t seq, uint32_t tgid,
                           uint64_t vol, uint64_t invol, uint64_t ran, size_t stats_len)
{
	size_t len = ts_frame(buf, family, tgid, tgid, 16, vol, invol, stats_len);
	struct nlmsghdr nh;
	struct nlattr na;
	struct taskstats st;
	size_t at = NLMSG_HDRLEN + GENL_HDRLEN;

	memcpy(&nh, buf, sizeof(nh));
	nh.nlmsg_seq = seq;
	memcpy(buf, &nh, sizeof(nh));
	memcpy(&na, buf + at, sizeof(na));
	na.nla_type = TASKSTATS_TYPE_AGGR_TGID;
	memcpy(buf + at, &na, sizeof(na));
	memcpy(&na, buf + at + NLA_HDRLEN, sizeof(na));
	na.nla_type = TASKSTATS_TYPE_TGID;
	memcpy(buf + at + NLA_HDRLEN, &na, sizeof(na));
	/* cpu_count and the run time, where the STATS reach them */
	at += 2 * NLA_HDRLEN + NLA_ALIGN(NLA_HDRLEN + 4);
	if (stats_len >= offsetof(struct taskstats, cpu_count) + sizeof(st.cpu_count))
		memcpy(buf + at + offsetof(struct taskstats, cpu_count), &ran, sizeof(ran));
	ran *= 1000;
	if (stats_len >= offsetof(struct taskstats, cpu_run_virtual_total) + sizeof(ran))
		memcpy(buf + at + offsetof(struct taskstats, cpu_run_virtual_total), &ran,
		       sizeof(ran));
	return len;
}

static size_t ts_err_frame(unsigned char *buf, uint32_t seq, int error)
{
	struct nlmsghdr nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr)),
	                      .nlmsg_type = NLMSG_ERROR,
	                      .nlmsg_seq = seq};
	struct nlmsgerr e = {.error = error};

	memset(buf, 0, NLMSG_ALIGN(nh.nlmsg_len));
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + NLMSG_HDRLEN, &e, sizeof(e));
	return NLMSG_ALIGN(nh.nlmsg_len);
}

static void test_ts_sum(void **state)
{
	static unsigned char buf[4096] __attribute__((aligned(8)));
	const size_t full = sizeof(struct taskstats);
	struct obs_tgsum s;
	size_t len;

	(void)state;
	len = ts_sum_frame(buf, 27, 9, 100, 400, 12, 415, full);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), 0);
	assert_int_equal(s.vol, 400);
	assert_int_equal(s.invol, 12);
	assert_int_equal(s.ran, 415);
	assert_int_equal(s.run_ns, 415000);
	/* an answer to an earlier request is passed over, the later one found */
	len = ts_err_frame(buf, 8, 0);
	len += ts_sum_frame(buf + len, 27, 9, 100, 5, 6, 7, full);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), 0);
	assert_int_equal(s.vol, 5);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 10, 100, &s), -ENOMSG);
	/* the kernel's refusal, and no such process */
	len = ts_err_frame(buf, 9, -EPERM);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), -EPERM);
	len = ts_err_frame(buf, 9, -ESRCH);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), -ESRCH);
	/* an error code no kernel sends */
	len = ts_err_frame(buf, 9, 5);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), -EINVAL);
	/* another group's sums, STATS too short, a length past the datagram */
	len = ts_sum_frame(buf, 27, 9, 101, 1, 1, 1, full);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), -EINVAL);
	len = ts_sum_frame(buf, 27, 9, 100, 1, 1, 1, 16);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 9, 100, &s), -EINVAL);
	len = ts_sum_frame(buf, 27, 9, 100, 1, 1, 1, full);
	assert_int_equal(obs_ts_parse_sum(buf, len - 8, 27, 9, 100, &s), -EINVAL);
	/* an exit's AGGR_PID is not a group's answer */
	len = ts_frame(buf, 27, 100, 100, 16, 1, 1, full);
	assert_int_equal(obs_ts_parse_sum(buf, len, 27, 0, 100, &s), -EINVAL);
	assert_int_equal(obs_ts_parse_sum(buf, 3, 27, 9, 100, &s), -ENOMSG);
}

static void test_ts_family(void **state)
{
	unsigned char b[64];
	struct genlmsghdr gh = {.cmd = CTRL_CMD_NEWFAMILY};
	struct nlattr name = {.nla_len = NLA_HDRLEN + 10, .nla_type = CTRL_ATTR_FAMILY_NAME},
	              id = {.nla_len = NLA_HDRLEN + 2, .nla_type = CTRL_ATTR_FAMILY_ID};
	uint16_t v = 27;
	size_t at = GENL_HDRLEN;

	(void)state;
	memset(b, 0, sizeof(b));
	memcpy(b, &gh, sizeof(gh));
	memcpy(b + at, &name, sizeof(name));
	memcpy(b + at + NLA_HDRLEN, "TASKSTATS", 10);
	at += NLA_ALIGN(name.nla_len);
	memcpy(b + at, &id, sizeof(id));
	memcpy(b + at + NLA_HDRLEN, &v, 2);
	at += NLA_ALIGN(id.nla_len);
	assert_int_equal(obs_ts_family_id(b, at), 27);
	assert_int_equal(obs_ts_family_id(b, at - NLA_ALIGN(id.nla_len)), 0);
	assert_int_equal(obs_ts_family_id(b, 2), 0);
}

static void test_table(void **state)
{
	struct obs_run r = {.procfd = -1};
	size_t a, b;

	(void)state;
	assert_int_equal(obs_table_find(&r, 42), -1);
	a = obs_table_add(&r, 42);
	r.procs[a].creates = 5;
	/* a reused PID: a new entry, the old one keeps its counts */
	b = obs_table_add(&r, 42);
	assert_int_not_equal(a, b);
	assert_int_equal(obs_table_find(&r, 42), (long)b);
	assert_int_equal(r.procs[a].creates, 5);
	assert_int_equal(r.procs[b].creates, 0);
	/* past the first growth of the slots, every tgid still found */
	for (pid_t p = 1000; p < 4000; p++)
		obs_table_add(&r, p);
	for (pid_t p = 1000; p < 4000; p++)
		assert_int_equal(r.procs[obs_table_find(&r, p)].tgid, p);
	assert_int_equal(obs_table_find(&r, 42), (long)b);
	assert_int_equal(obs_table_find(&r, 5000), -1);
	obs_table_free(&r);
	obs_table_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat),   cmocka_unit_test(test_sched),
	    cmocka_unit_test(test_stacks), cmocka_unit_test(test_smaps),
	    cmocka_unit_test(test_cn),     cmocka_unit_test(test_ts),
	    cmocka_unit_test(test_ts_sum), cmocka_unit_test(test_ts_family),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
