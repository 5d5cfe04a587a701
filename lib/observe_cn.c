/*
 * observe_cn: the proc connector (drivers/connector/cn_proc.c), which
 * multicasts an event for every fork, exec and exit on the host. The
 * observer counts thread creates and exits from it: a FORK whose child pid
 * differs from its child tgid is a new thread of the process child_tgid
 * (proc_fork_connector() fills child_pid/child_tgid from the new task, the
 * parent fields from its real parent, not the creating thread's process).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "clock.h"
#include "errbuf.h"
#include "observe.h"
#include "observep.h"

/* How long the kernel has to answer LISTEN and to report the canary, and
 * how long a filtered listener waits for the canary's EXIT not to come. */
#define CN_ANSWER_S 1.0
#define CN_QUIET_S 0.25
/* The receive buffer asked for: about 10,000 events in flight. */
#define CN_RCVBUF (8 << 20)
/* Datagrams one read takes, and the room for each (a message is 76 bytes
 * today; a larger struct proc_event of a later kernel still fits). */
#define CN_BATCH 128
#define CN_DGRAM 512

/* The fields an event type reads must lie within the payload. */
static const struct cn_need {
	uint32_t what;
	enum obs_ev_what ev;
	size_t need; /* bytes of struct proc_event the fields read end at */
} cn_needs[] = {
    {PROC_EVENT_NONE, OBS_EV_ACK,
     offsetof(struct proc_event, event_data.ack.err) + sizeof(uint32_t)},
    {PROC_EVENT_FORK, OBS_EV_FORK,
     offsetof(struct proc_event, event_data.fork.child_tgid) + sizeof(pid_t)},
    {PROC_EVENT_EXEC, OBS_EV_EXEC,
     offsetof(struct proc_event, event_data.exec.process_tgid) + sizeof(pid_t)},
    {PROC_EVENT_EXIT, OBS_EV_EXIT,
     offsetof(struct proc_event, event_data.exit.process_tgid) + sizeof(pid_t)},
};

static uint32_t rd32(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

#define EV_OFF(field) offsetof(struct proc_event, field)

/* One connector payload (a struct proc_event of `len` bytes) into ev. */
static int cn_event(const unsigned char *pe, size_t len, struct obs_ev *ev)
{
	uint32_t what;
	size_t i;

	if (len < EV_OFF(event_data))
		return -EINVAL;
	what = rd32(pe, EV_OFF(what));
	memset(ev, 0, sizeof(*ev));
	ev->what = OBS_EV_OTHER;
	for (i = 0; i < sizeof(cn_needs) / sizeof(cn_needs[0]); i++)
		if (cn_needs[i].what == what)
			break;
	if (i == sizeof(cn_needs) / sizeof(cn_needs[0]))
		return 0; /* an event the observer does not read */
	if (len < cn_needs[i].need)
		return -EINVAL;
	ev->what = cn_needs[i].ev;
	switch (ev->what) {
	case OBS_EV_ACK:
		ev->err = rd32(pe, EV_OFF(event_data.ack.err));
		break;
	case OBS_EV_FORK:
		ev->ppid = (pid_t)rd32(pe, EV_OFF(event_data.fork.parent_pid));
		ev->ptgid = (pid_t)rd32(pe, EV_OFF(event_data.fork.parent_tgid));
		ev->pid = (pid_t)rd32(pe, EV_OFF(event_data.fork.child_pid));
		ev->tgid = (pid_t)rd32(pe, EV_OFF(event_data.fork.child_tgid));
		break;
	case OBS_EV_EXEC:
		ev->pid = (pid_t)rd32(pe, EV_OFF(event_data.exec.process_pid));
		ev->tgid = (pid_t)rd32(pe, EV_OFF(event_data.exec.process_tgid));
		break;
	default:
		ev->pid = (pid_t)rd32(pe, EV_OFF(event_data.exit.process_pid));
		ev->tgid = (pid_t)rd32(pe, EV_OFF(event_data.exit.process_tgid));
		break;
	}
	return ev->what != OBS_EV_ACK && (ev->pid <= 0 || ev->tgid <= 0) ? -EINVAL : 0;
}

size_t obs_cn_parse(const void *buf, size_t len, struct obs_ev *evs, size_t max, size_t *bad)
{
	const unsigned char *p = buf;
	size_t n = 0;

	while (len >= NLMSG_HDRLEN && n < max) {
		struct nlmsghdr nh;
		struct cn_msg cm;
		size_t step;

		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len) {
			++*bad;
			break; /* the rest cannot be framed */
		}
		step = NLMSG_ALIGN(nh.nlmsg_len) < len ? NLMSG_ALIGN(nh.nlmsg_len) : len;
		if (nh.nlmsg_type != NLMSG_DONE || nh.nlmsg_len < NLMSG_HDRLEN + sizeof(cm)) {
			++*bad;
		} else {
			memcpy(&cm, p + NLMSG_HDRLEN, sizeof(cm));
			if (cm.id.idx != CN_IDX_PROC || cm.id.val != CN_VAL_PROC ||
			    cm.len > nh.nlmsg_len - NLMSG_HDRLEN - sizeof(cm) ||
			    cn_event(p + NLMSG_HDRLEN + sizeof(cm), cm.len, &evs[n]) < 0) {
				++*bad;
			} else {
				evs[n].seq = cm.seq;
				evs[n].ack = cm.ack;
				n++;
			}
		}
		p += step;
		len -= step;
	}
	return n;
}

/* struct proc_input of include/uapi/linux/cn_proc.h since Linux 6.6: the
 * op and the events a listener wants (PROC_EVENT_* bits), which
 * cn_proc_mcast_ctl() keeps in the socket's sk_user_data for cn_filter().
 * The build's headers may predate it, so it is spelt here. */
struct cn_listen_filtered {
	uint32_t mcast_op;
	uint32_t event_type;
};

/* The events a filtered listener asks for: a thread's or process's start
 * and a new program; no EXIT (half of the messages under churn, derived
 * instead: obs_exits_derived()). */
#define CN_FILTER_EVENTS (PROC_EVENT_FORK | PROC_EVENT_EXEC)

/* Sends one multicast op (LISTEN or IGNORE) to the connector: a netlink
 * header, a connector header and the op, laid out as cn_rx_skb() reads
 * them. With `events`, the op is a struct proc_input of `len` bytes (8;
 * another length is ignored by every kernel: cn_proc_mcast_ctl() takes 4
 * bytes before 6.6, 4 or 8 since), else a bare 4-byte op. */
static int cn_send_op(struct obs_cn *cn, enum proc_cn_mcast_op op, uint32_t events, size_t len)
{
	unsigned char m[NLMSG_HDRLEN + sizeof(struct cn_msg) + 16];
	struct cn_listen_filtered in = {.mcast_op = (uint32_t)op, .event_type = events};
	size_t plen = events ? len : sizeof(uint32_t);
	struct nlmsghdr nh = {.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + sizeof(struct cn_msg) + plen),
	                      .nlmsg_type = NLMSG_DONE};
	struct cn_msg cm = {.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC},
	                    .seq = ++cn->seq,
	                    .ack = cn->ack,
	                    .len = (uint16_t)plen};

	if (plen > 16 || plen < sizeof(uint32_t))
		return -EINVAL;
	memset(m, 0, sizeof(m));
	memcpy(m, &nh, sizeof(nh));
	memcpy(m + NLMSG_HDRLEN, &cm, sizeof(cm));
	memcpy(m + NLMSG_HDRLEN + sizeof(cm), &in, sizeof(in) < plen ? sizeof(in) : plen);
	if (send(cn->fd, m, nh.nlmsg_len, 0) != (ssize_t)nh.nlmsg_len)
		return -errno;
	return 0;
}

int obs_cn_read(struct obs_cn *cn, struct obs_ev *evs, size_t max)
{
	/* a datagram holds one message as cn_netlink_send() builds it; one
	 * recvmmsg() takes up to CN_BATCH of them */
	static __thread unsigned char buf[CN_BATCH][CN_DGRAM] __attribute__((aligned(8)));
	struct mmsghdr mm[CN_BATCH];
	struct iovec iov[CN_BATCH];
	size_t n = 0, bad = 0;
	unsigned want = (unsigned)(max < CN_BATCH ? max : CN_BATCH);
	int r;

	memset(mm, 0, sizeof(mm));
	for (unsigned i = 0; i < want; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = CN_DGRAM;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		r = recvmmsg(cn->fd, mm, want, MSG_DONTWAIT, NULL);
		if (r >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ENOBUFS) {
			cn->overruns++; /* the kernel dropped events: counted, and read on */
			continue;
		}
		return errno == EAGAIN ? 0 : -errno;
	}
	for (int i = 0; i < r && n < max; i++)
		n += obs_cn_parse(buf[i], mm[i].msg_len, evs + n, max - n, &bad);
	cn->bad += bad;
	return (int)n;
}

/* Waits until `pred` holds for an event read, or `secs` pass: 1, or 0 on
 * time out, or -errno. */
static int cn_wait(struct obs_cn *cn, double secs, int (*pred)(const struct obs_ev *, void *),
                   void *arg)
{
	double end = clock_mono_s() + secs;
	struct obs_ev evs[4];

	for (;;) {
		double left = end - clock_mono_s();
		struct pollfd pfd = {.fd = cn->fd, .events = POLLIN};
		int n;

		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return -errno;
		while ((n = obs_cn_read(cn, evs, 4)) > 0) {
			int hit = 0;

			/* the whole batch: a predicate with state sees each event */
			for (int i = 0; i < n; i++)
				hit |= pred(&evs[i], arg);
			if (hit)
				return 1;
		}
		if (n < 0)
			return n;
	}
}

struct ack_match {
	struct obs_cn *cn;
	uint32_t err;
};

static int is_ack(const struct obs_ev *ev, void *arg)
{
	struct ack_match *m = arg;

	/* cn_proc_ack() answers with our ack plus one; its seq is not ours,
	 * since send_msg() numbers every message from a per-CPU counter */
	if (ev->what != OBS_EV_ACK || ev->ack != m->cn->ack + 1)
		return 0;
	m->err = ev->err;
	return 1;
}

struct canary {
	volatile pid_t tid;
	int forked, exited; /* its FORK and EXIT heard */
};

static void *canary_main(void *arg)
{
	((struct canary *)arg)->tid = (pid_t)syscall(SYS_gettid);
	return NULL;
}

/* Notes the canary's events; true once its FORK (or its EXIT) came. */
static int canary_heard(const struct obs_ev *ev, void *arg)
{
	struct canary *c = arg;

	if (ev->pid != c->tid || ev->tgid != getpid())
		return 0;
	c->forked |= ev->what == OBS_EV_FORK;
	c->exited |= ev->what == OBS_EV_EXIT;
	return c->forked || c->exited;
}

static int canary_exited(const struct obs_ev *ev, void *arg)
{
	return canary_heard(ev, arg) && ((struct canary *)arg)->exited;
}

/* A thread of ours must come back as a FORK event: 0 or -ETIMEDOUT. With
 * `filtered`, its EXIT must not (within CN_QUIET_S of the FORK; do_exit()
 * sends it right after exit_notify(), microseconds after the join):
 * -EPROTO when it comes, as where the kernel ignored the filter and
 * delivers every event (cn_filter() passes all to a socket without
 * sk_user_data, and since 6.8 events flow to any socket in the group). */
static int cn_canary(struct obs_cn *cn, int filtered)
{
	struct canary c = {0};
	pthread_t t;
	int rc;

	if (pthread_create(&t, NULL, canary_main, &c) != 0)
		return -EAGAIN;
	pthread_join(t, NULL);
	rc = cn_wait(cn, CN_ANSWER_S, canary_heard, &c);
	if (rc < 0)
		return rc;
	if (!c.forked && !c.exited)
		return -ETIMEDOUT;
	if (!filtered)
		return c.forked ? 0 : -ETIMEDOUT;
	if (!c.exited && (rc = cn_wait(cn, CN_QUIET_S, canary_exited, &c)) < 0)
		return rc;
	return c.exited || !c.forked ? -EPROTO : 0;
}

/* The socket, joined to the connector's group: 0 or -errno (err says). */
static int cn_socket(struct obs_cn *cn, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	socklen_t sl = sizeof(cn->rcvbuf);
	int size = CN_RCVBUF, rc;

	cn->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (cn->fd < 0)
		return errbuf_set(
		    err, errlen, -errno,
		    "no proc connector here (socket(AF_NETLINK, NETLINK_CONNECTOR): %s)",
		    strerror(errno));
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; SO_RCVBUF is capped at rmem_max */
	if (setsockopt(cn->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(cn->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	(void)getsockopt(cn->fd, SOL_SOCKET, SO_RCVBUF, &cn->rcvbuf, &sl);
	if (bind(cn->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(cn->fd);
		cn->fd = -1;
		/* netlink_bind(): a multicast group needs CAP_NET_ADMIN unless the
		 * family lets others receive (NL_CFG_F_NONROOT_RECV), which the
		 * connector does not, before 6.6 or since */
		return errbuf_set(err, errlen, rc, "cannot join the proc connector's group (%s)%s",
		                  strerror(-rc), rc == -EPERM ? ": it needs CAP_NET_ADMIN" : "");
	}
	return 0;
}

/* Asks for FORK and EXEC alone (Linux 6.6). cn_filter() drops the answer
 * too (its PROC_EVENT_NONE matches no bit asked for), so the canary is the
 * proof: its FORK comes and its EXIT does not. 0; -EPROTO where the
 * kernel ignored the request (before 6.6, cn_proc_mcast_ctl() returns at
 * once on a message that is not the bare 4-byte op, and every event still
 * comes where another listener keeps them flowing); -ETIMEDOUT where none
 * comes (no listener before 6.6, or another namespace). */
static int cn_listen_filtered(struct obs_cn *cn, size_t len)
{
	int rc = cn_send_op(cn, PROC_CN_MCAST_LISTEN, CN_FILTER_EVENTS, len);

	return rc < 0 ? rc : cn_canary(cn, 1);
}

/* The bare LISTEN every kernel takes, its answer, then the canary. */
static int cn_listen_all(struct obs_cn *cn, char *err, size_t errlen)
{
	struct ack_match m = {.cn = cn};
	int rc = cn_send_op(cn, PROC_CN_MCAST_LISTEN, 0, 0);

	if (rc == 0)
		rc = cn_wait(cn, CN_ANSWER_S, is_ack, &m);
	if (rc < 0)
		return errbuf_set(err, errlen, rc, "the proc connector: %s", strerror(-rc));
	if (rc == 0)
		return errbuf_set(err, errlen, -ETIMEDOUT,
		                  "the proc connector did not answer: cn_proc ignores a listener "
		                  "outside the initial PID and user namespaces (a container)");
	if (m.err) {
		/* the ack's errno: EPERM from cn_proc_mcast_ctl() before 6.6 */
		rc = -(int)m.err;
		return errbuf_set(err, errlen, rc, "the proc connector refused to listen (%s)%s",
		                  strerror(-rc),
		                  rc == -EPERM ? ": before Linux 6.6 it needs CAP_NET_ADMIN" : "");
	}
	rc = cn_canary(cn, 0);
	if (rc < 0)
		return errbuf_set(err, errlen, rc,
		                  "the proc connector answered but did not report a thread this "
		                  "process started (%s)",
		                  strerror(-rc));
	return 0;
}

/* Whether the running kernel is 6.6 or later, where cn_proc_mcast_ctl()
 * takes a struct proc_input (2aa1f7a1f47c). The canary proves the filter
 * there; before, a kernel that ignores it may still deliver the canary's
 * FORK through another listener, and only a late EXIT would tell, so the
 * filter is not asked of it at all. */
static int cn_kernel_filters(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 6);
}

int obs_cn_open(struct obs_cn *cn, size_t filter_len, char *err, size_t errlen)
{
	int rc;

	memset(cn, 0, sizeof(*cn));
	cn->fd = -1;
	cn->ack = (uint32_t)getpid() ^ (uint32_t)clock_ns();
	rc = cn_socket(cn, err, errlen);
	if (rc < 0)
		return rc;
	if (!filter_len) {
		snprintf(cn->filter_why, sizeof(cn->filter_why), "not asked for");
	} else if (!cn_kernel_filters()) {
		snprintf(cn->filter_why, sizeof(cn->filter_why),
		         "Linux before 6.6 has no event filter");
	} else if (cn_listen_filtered(cn, filter_len) == 0) {
		cn->filtered = 1;
		return 0;
	} else {
		snprintf(cn->filter_why, sizeof(cn->filter_why),
		         "the kernel did not take the filter (Linux before 6.6 ignores it)");
	}
	rc = cn_listen_all(cn, err, errlen);
	if (rc < 0)
		obs_cn_close(cn);
	return rc;
}

size_t obs_cn_filter_len(void)
{
	const char *v = getenv("THREADWATCH_TEST_CN_FILTER_LEN");
	char *end;
	unsigned long n;

	if (!v)
		return OBS_CN_FILTER_LEN;
	n = strtoul(v, &end, 10);
	/* the seam: a length no kernel takes (neither the op nor proc_input) */
	return *v && !*end && n > OBS_CN_FILTER_LEN && n <= 16 ? (size_t)n : OBS_CN_FILTER_LEN;
}

void obs_cn_close(struct obs_cn *cn)
{
	if (!cn || cn->fd < 0)
		return;
	(void)cn_send_op(cn, PROC_CN_MCAST_IGNORE, 0, 0);
	close(cn->fd);
	cn->fd = -1;
}
