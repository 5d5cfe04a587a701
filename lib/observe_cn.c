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
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "clock.h"
#include "errbuf.h"
#include "observep.h"

/* How long the kernel has to answer LISTEN and to report the canary. */
#define CN_ANSWER_S 1.0
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

/* Sends one multicast op (LISTEN or IGNORE) to the connector: a netlink
 * header, a connector header and the op, laid out as cn_rx_skb() reads
 * them. */
static int cn_send_op(struct obs_cn *cn, enum proc_cn_mcast_op op)
{
	unsigned char m[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(uint32_t)];
	struct nlmsghdr nh = {.nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_DONE};
	struct cn_msg cm = {.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC},
	                    .seq = ++cn->seq,
	                    .ack = cn->ack,
	                    .len = sizeof(uint32_t)};
	uint32_t v = (uint32_t)op;

	memset(m, 0, sizeof(m));
	memcpy(m, &nh, sizeof(nh));
	memcpy(m + NLMSG_HDRLEN, &cm, sizeof(cm));
	memcpy(m + NLMSG_HDRLEN + sizeof(cm), &v, sizeof(v));
	if (send(cn->fd, m, sizeof(m), 0) != (ssize_t)sizeof(m))
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
		while ((n = obs_cn_read(cn, evs, 4)) > 0)
			for (int i = 0; i < n; i++)
				if (pred(&evs[i], arg))
					return 1;
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
};

static void *canary_main(void *arg)
{
	((struct canary *)arg)->tid = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static int is_canary(const struct obs_ev *ev, void *arg)
{
	const struct canary *c = arg;

	return ev->what == OBS_EV_FORK && ev->pid == c->tid && ev->tgid == getpid();
}

/* A thread of ours must come back as a FORK event: 0 or -ETIMEDOUT. */
static int cn_canary(struct obs_cn *cn)
{
	struct canary c = {0};
	pthread_t t;
	int rc;

	if (pthread_create(&t, NULL, canary_main, &c) != 0)
		return -EAGAIN;
	pthread_join(t, NULL);
	rc = cn_wait(cn, CN_ANSWER_S, is_canary, &c);
	return rc < 0 ? rc : rc ? 0 : -ETIMEDOUT;
}

int obs_cn_open(struct obs_cn *cn, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	struct ack_match m = {.cn = cn};
	int size = CN_RCVBUF, rc;

	memset(cn, 0, sizeof(*cn));
	cn->ack = (uint32_t)getpid() ^ (uint32_t)clock_ns();
	cn->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (cn->fd < 0)
		return errbuf_set(
		    err, errlen, -errno,
		    "no proc connector here (socket(AF_NETLINK, NETLINK_CONNECTOR): %s)",
		    strerror(errno));
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; SO_RCVBUF is capped at rmem_max */
	if (setsockopt(cn->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(cn->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	{
		socklen_t sl = sizeof(cn->rcvbuf);

		(void)getsockopt(cn->fd, SOL_SOCKET, SO_RCVBUF, &cn->rcvbuf, &sl);
	}
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
	rc = cn_send_op(cn, PROC_CN_MCAST_LISTEN);
	if (rc < 0)
		goto fail_msg;
	rc = cn_wait(cn, CN_ANSWER_S, is_ack, &m);
	if (rc < 0)
		goto fail_msg;
	if (rc == 0) {
		obs_cn_close(cn);
		return errbuf_set(err, errlen, -ETIMEDOUT,
		                  "the proc connector did not answer: cn_proc ignores a listener "
		                  "outside the initial PID and user namespaces (a container)");
	}
	if (m.err) {
		/* the ack's errno: EPERM from cn_proc_mcast_ctl() before 6.6 */
		rc = -(int)m.err;
		obs_cn_close(cn);
		return errbuf_set(err, errlen, rc, "the proc connector refused to listen (%s)%s",
		                  strerror(-rc),
		                  rc == -EPERM ? ": before Linux 6.6 it needs CAP_NET_ADMIN" : "");
	}
	rc = cn_canary(cn);
	if (rc < 0) {
		obs_cn_close(cn);
		return errbuf_set(err, errlen, rc,
		                  "the proc connector answered but did not report a thread this "
		                  "process started (%s)",
		                  strerror(-rc));
	}
	return 0;

fail_msg:
	close(cn->fd);
	cn->fd = -1;
	return errbuf_set(err, errlen, rc, "the proc connector: %s", strerror(-rc));
}

void obs_cn_close(struct obs_cn *cn)
{
	if (!cn || cn->fd < 0)
		return;
	(void)cn_send_op(cn, PROC_CN_MCAST_IGNORE);
	close(cn->fd);
	cn->fd = -1;
}
