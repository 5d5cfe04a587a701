/*
 * observe_ts: what taskstats (kernel/taskstats.c) tells the observer.
 * A listener registered for every CPU (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK)
 * is sent each task's statistics as it exits (taskstats_exit(), before its
 * last switch away), nvcsw and nivcsw among them: the switches of threads
 * that end within a window, which /proc can no longer show. That costs one
 * message per exit, so the observer asks for it only when told. A query of
 * one thread group (TASKSTATS_CMD_ATTR_TGID) answers with the sums over its
 * live threads (fill_stats_for_tgid()): one message that tells whether any
 * of them ran since the last. Both need CAP_NET_ADMIN (the command is
 * GENL_ADMIN_PERM).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "errbuf.h"
#include "observep.h"
#include "file_read.h"

/* How long the kernel has to answer a request. */
#define TS_ANSWER_MS 1000
/* A request: the headers and one attribute of up to TS_ATTR_MAX bytes. */
#define TS_ATTR_MAX 256
/* ac_tgid, from version 12 of struct taskstats */
#define TS_TGID_VERSION 12

struct ts_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	unsigned char attr[NLA_HDRLEN + NLA_ALIGN(TS_ATTR_MAX)];
};

/* Sends one request with one attribute (with ack, NLM_F_ACK: the kernel
 * answers with an error message, 0 for success; without, it sends an error
 * alone). 0 or -errno. */
static int ts_send(struct obs_ts *ts, int ack, uint16_t type, uint8_t cmd, uint8_t version,
                   uint16_t attr, const void *val, size_t len)
{
	struct ts_req r;
	struct nlattr na = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = attr};

	if (len > TS_ATTR_MAX)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(na.nla_len));
	r.nh.nlmsg_type = type;
	r.nh.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | (ack ? NLM_F_ACK : 0));
	r.nh.nlmsg_seq = ++ts->seq;
	r.gh.cmd = cmd;
	r.gh.version = version;
	memcpy(r.attr, &na, sizeof(na));
	memcpy(r.attr + NLA_HDRLEN, val, len);
	return send(ts->fd, &r, r.nh.nlmsg_len, 0) < 0 ? -errno : 0;
}

/* Waits up to TS_ANSWER_MS for the next datagram: its length, or -errno
 * (-ETIMEDOUT). */
static ssize_t ts_recv(struct obs_ts *ts, void *buf, size_t len)
{
	for (;;) {
		struct pollfd p = {.fd = ts->fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, TS_ANSWER_MS) <= 0)
			return -ETIMEDOUT;
		n = recv(ts->fd, buf, len, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno != EINTR && errno != EAGAIN && errno != ENOBUFS)
			return -errno;
	}
}

/* Reads answers until the one to our last request: its error (0 or
 * -errno); the family id of a CTRL_CMD_NEWFAMILY on the way into *family. */
static int ts_answer(struct obs_ts *ts, uint16_t *family)
{
	unsigned char buf[8192] __attribute__((aligned(8)));

	for (;;) {
		ssize_t n = ts_recv(ts, buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != ts->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR &&
			    nh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr)))
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			if (family && nh->nlmsg_type == GENL_ID_CTRL)
				*family =
				    obs_ts_family_id(NLMSG_DATA(nh), nh->nlmsg_len - NLMSG_HDRLEN);
		}
	}
}

uint16_t obs_ts_family_id(const void *genl, size_t len)
{
	const unsigned char *p = (const unsigned char *)genl + GENL_HDRLEN;
	size_t left = len > GENL_HDRLEN ? len - GENL_HDRLEN : 0;

	while (left >= NLA_HDRLEN) {
		struct nlattr na;
		uint16_t id;

		memcpy(&na, p, sizeof(na));
		if (na.nla_len < NLA_HDRLEN || na.nla_len > left)
			break;
		if (na.nla_type == CTRL_ATTR_FAMILY_ID && na.nla_len >= NLA_HDRLEN + sizeof(id)) {
			memcpy(&id, p + NLA_HDRLEN, sizeof(id));
			return id;
		}
		if ((size_t)NLA_ALIGN(na.nla_len) >= left)
			break;
		left -= NLA_ALIGN(na.nla_len);
		p += NLA_ALIGN(na.nla_len);
	}
	return 0;
}

/* A generic netlink socket with the TASKSTATS family resolved: 0, or
 * -errno with the reason in err. */
static int ts_socket(struct obs_ts *ts, int rcvbuf, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int rc;

	memset(ts, 0, sizeof(*ts));
	ts->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (ts->fd < 0)
		return errbuf_set(err, errlen, -errno, "no generic netlink: %s", strerror(errno));
	if (rcvbuf && setsockopt(ts->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		(void)setsockopt(ts->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(ts->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		obs_ts_close(ts);
		return errbuf_set(err, errlen, rc, "taskstats: %s", strerror(-rc));
	}
	rc = ts_send(ts, 1, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME,
	             TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	if (rc == 0)
		rc = ts_answer(ts, &ts->family);
	if (rc == 0 && !ts->family)
		rc = -ENOENT;
	if (rc < 0) {
		obs_ts_close(ts);
		return errbuf_set(err, errlen, rc, "no taskstats family (%s)%s", strerror(-rc),
		                  rc == -ENOENT
		                      ? ": a kernel without CONFIG_TASKSTATS, or a network "
		                        "namespace its family does not serve"
		                      : "");
	}
	return 0;
}

int obs_ts_open(struct obs_ts *ts, char *err, size_t errlen)
{
	char *cpus = NULL;
	int rc = ts_socket(ts, 8 << 20, err, errlen);

	if (rc < 0)
		return rc;
	/* every CPU the kernel may bring up: /sys's list, as "0-N" */
	rc = file_read_all("/sys/devices/system/cpu/possible", 256, &cpus, NULL);
	if (rc < 0) {
		obs_ts_close(ts);
		return errbuf_set(err, errlen, rc, "taskstats: %s", strerror(-rc));
	}
	cpus[strcspn(cpus, "\n")] = '\0';
	snprintf(ts->cpus, sizeof(ts->cpus), "%s", cpus);
	free(cpus);
	rc = ts_send(ts, 1, ts->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
	             TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, ts->cpus, strlen(ts->cpus) + 1);
	if (rc == 0)
		rc = ts_answer(ts, NULL);
	if (rc < 0) {
		obs_ts_close(ts);
		return errbuf_set(err, errlen, rc, "taskstats refused the listener (%s)%s",
		                  strerror(-rc), rc == -EPERM ? ": it needs CAP_NET_ADMIN" : "");
	}
	ts->registered = 1;
	return 0;
}

int obs_ts_query_open(struct obs_ts *ts, struct obs_tgsum *self, char *err, size_t errlen)
{
	int rc = ts_socket(ts, 0, err, errlen);

	if (rc < 0)
		return rc;
	/* proven on this process, which has run: the command is allowed and
	 * its answer parses */
	rc = obs_ts_tgid(ts, getpid(), self);
	if (rc == 0 && self->vol + self->invol + self->ran == 0)
		rc = -ENODATA;
	if (rc < 0) {
		obs_ts_close(ts);
		return errbuf_set(err, errlen, rc,
		                  "taskstats refused a thread group's query (%s)%s", strerror(-rc),
		                  rc == -EPERM ? ": it needs CAP_NET_ADMIN" : "");
	}
	return 0;
}

/* One AGGR_PID (or AGGR_TGID) attribute: the PID (TGID) and STATS inside;
 * *st gets the STATS, zero-filled past what the kernel sent. */
static int ts_aggr(const unsigned char *p, size_t len, uint16_t id_type, struct obs_ts_exit *e,
                   struct taskstats *st)
{
	int have_pid = 0, have_stats = 0;

	memset(e, 0, sizeof(*e));
	while (len >= NLA_HDRLEN) {
		struct nlattr na;
		size_t body;

		memcpy(&na, p, sizeof(na));
		if (na.nla_len < NLA_HDRLEN || na.nla_len > len)
			return -EINVAL;
		body = na.nla_len - NLA_HDRLEN;
		if (na.nla_type == id_type && body >= sizeof(uint32_t)) {
			uint32_t pid;

			memcpy(&pid, p + NLA_HDRLEN, sizeof(pid));
			e->tid = (pid_t)pid;
			have_pid = 1;
		} else if (na.nla_type == TASKSTATS_TYPE_STATS &&
		           body >= offsetof(struct taskstats, nivcsw) + sizeof(uint64_t)) {
			memset(st, 0, sizeof(*st));
			memcpy(st, p + NLA_HDRLEN, body < sizeof(*st) ? body : sizeof(*st));
			e->vol = st->nvcsw;
			e->invol = st->nivcsw;
			if (st->version >= TS_TGID_VERSION &&
			    body >= offsetof(struct taskstats, ac_tgid) + 4)
				e->tgid = (pid_t)st->ac_tgid;
			have_stats = 1;
		}
		if ((size_t)NLA_ALIGN(na.nla_len) >= len)
			break;
		len -= NLA_ALIGN(na.nla_len);
		p += NLA_ALIGN(na.nla_len);
	}
	return have_pid && have_stats && e->tid > 0 ? 0 : -EINVAL;
}

size_t obs_ts_parse(const void *buf, size_t len, uint16_t family, struct obs_ts_exit *out,
                    size_t max, size_t *bad)
{
	const unsigned char *p = buf;
	size_t n = 0;

	while (len >= NLMSG_HDRLEN && n < max) {
		struct nlmsghdr nh;
		size_t step, left;
		const unsigned char *a;

		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len) {
			++*bad;
			break;
		}
		step = NLMSG_ALIGN(nh.nlmsg_len) < len ? NLMSG_ALIGN(nh.nlmsg_len) : len;
		if (nh.nlmsg_type == family && nh.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN) {
			a = p + NLMSG_HDRLEN + GENL_HDRLEN;
			left = nh.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			while (left >= NLA_HDRLEN && n < max) {
				struct nlattr na;

				memcpy(&na, a, sizeof(na));
				if (na.nla_len < NLA_HDRLEN || na.nla_len > left) {
					++*bad;
					break;
				}
				if (na.nla_type == TASKSTATS_TYPE_AGGR_PID) {
					struct taskstats st;

					if (ts_aggr(a + NLA_HDRLEN, na.nla_len - NLA_HDRLEN,
					            TASKSTATS_TYPE_PID, &out[n], &st) == 0)
						n++;
					else
						++*bad;
				}
				if ((size_t)NLA_ALIGN(na.nla_len) >= left)
					break;
				left -= NLA_ALIGN(na.nla_len);
				a += NLA_ALIGN(na.nla_len);
			}
		}
		p += step;
		len -= step;
	}
	return n;
}

int obs_ts_parse_sum(const void *buf, size_t len, uint16_t family, uint32_t seq, pid_t tgid,
                     struct obs_tgsum *out)
{
	const unsigned char *p = buf;

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr nh;
		size_t step, left;
		const unsigned char *a;

		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len)
			return -EINVAL;
		step = NLMSG_ALIGN(nh.nlmsg_len) < len ? NLMSG_ALIGN(nh.nlmsg_len) : len;
		if (nh.nlmsg_seq == seq && nh.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (nh.nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EINVAL;
			memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
			if (e.error > 0 || e.error < -4095)
				return -EINVAL;
			if (e.error < 0)
				return e.error;
		} else if (nh.nlmsg_seq == seq && nh.nlmsg_type == family &&
		           nh.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN) {
			a = p + NLMSG_HDRLEN + GENL_HDRLEN;
			left = nh.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			while (left >= NLA_HDRLEN) {
				struct obs_ts_exit e;
				struct taskstats st;
				struct nlattr na;

				memcpy(&na, a, sizeof(na));
				if (na.nla_len < NLA_HDRLEN || na.nla_len > left)
					return -EINVAL;
				if (na.nla_type == TASKSTATS_TYPE_AGGR_TGID) {
					if (ts_aggr(a + NLA_HDRLEN, na.nla_len - NLA_HDRLEN,
					            TASKSTATS_TYPE_TGID, &e, &st) < 0 ||
					    e.tid != tgid)
						return -EINVAL;
					out->vol = st.nvcsw;
					out->invol = st.nivcsw;
					out->ran = st.cpu_count;
					out->run_ns = st.cpu_run_virtual_total;
					return 0;
				}
				if ((size_t)NLA_ALIGN(na.nla_len) >= left)
					break;
				left -= NLA_ALIGN(na.nla_len);
				a += NLA_ALIGN(na.nla_len);
			}
			return -EINVAL; /* our answer, without the group's sums */
		}
		p += step;
		len -= step;
	}
	return -ENOMSG;
}

int obs_ts_tgid(struct obs_ts *ts, pid_t tgid, struct obs_tgsum *out)
{
	unsigned char buf[8192] __attribute__((aligned(8))); /* struct taskstats grows */
	uint32_t id = (uint32_t)tgid;
	int rc = ts_send(ts, 0, ts->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
	                 TASKSTATS_CMD_ATTR_TGID, &id, sizeof(id));

	if (rc < 0)
		return rc;
	for (;;) {
		ssize_t n = ts_recv(ts, buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		rc = obs_ts_parse_sum(buf, (size_t)n, ts->family, ts->seq, tgid, out);
		if (rc != -ENOMSG)
			return rc; /* else an answer to an earlier request */
	}
}

int obs_ts_read(struct obs_ts *ts, struct obs_ts_exit *out, size_t max)
{
	unsigned char buf[16384] __attribute__((aligned(8)));
	size_t bad = 0;
	ssize_t r;

	for (;;) {
		r = recv(ts->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ENOBUFS) {
			ts->overruns++;
			continue;
		}
		return errno == EAGAIN ? 0 : -errno;
	}
	r = (ssize_t)obs_ts_parse(buf, (size_t)r, ts->family, out, max, &bad);
	ts->bad += bad;
	return (int)r;
}

void obs_ts_close(struct obs_ts *ts)
{
	if (!ts || ts->fd < 0)
		return;
	if (ts->registered)
		(void)ts_send(ts, 1, ts->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
		              TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, ts->cpus,
		              strlen(ts->cpus) + 1);
	close(ts->fd);
	ts->fd = -1;
	ts->registered = 0;
}
