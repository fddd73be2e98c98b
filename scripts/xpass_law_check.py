"""A stand-alone cross-check of ExpressPass's credit feedback at one receiver, independent of dcnsim's
network and transport code: N receivers' paced credits share the receiving host's NIC credit queue
(drop-tail, 672 B, a 168 B token bucket at 84/1622 of 10 Gb/s, as the authors' XPassDropTail with the
fat-tree script's settings); a credit that gets through comes back as data after the flow's base RTT;
each receiver runs the feedback law of the authors' ns-2 code (xpass.cc `credit_feedback_control`,
as docs/protocols/expresspass.md lists it). Data never queues (it is credit-limited), so nothing but
the credit queue and the law is modelled.

Prints, for 2, 4 and 10 senders, Jain's index of the flows' data rates over 200 us and 1 ms windows
(second half of the run) and the credit loss at the NIC, to compare with `dcnsim repro
xpass-convergence`. Usage: python scripts/xpass_law_check.py [duration_ms] [seed]."""

import heapq
import random
import sys

LINK_BPS = 10e9
AVG_CREDIT = 84.0
CREDIT_RATE = LINK_BPS / 8 * AVG_CREDIT / (AVG_CREDIT + 1538)  # bytes/s, the NIC's and each flow's max
QUEUE_BYTES, BUCKET_BYTES = 672, 168
ALPHA = W_INIT = 1 / 16
W_MIN, W_MAX, TARGET_SCALE, JITTER = 0.01, 0.5, 0.125, 0.1


class Flow:
    def __init__(self, rtt, now):
        self.base_rtt = rtt
        self.rate, self.w, self.increasing = ALPHA * CREDIT_RATE, W_INIT, False
        self.total = self.dropped = 0
        self.last_update, self.rtt = now, 0.0
        self.seq = self.echo_next = 0

    def feedback(self, now):
        """The code's law, run before each credit, at most once per RTT estimate."""
        if self.rtt <= 0 or now - self.last_update < self.rtt or self.total == 0:
            return
        loss = self.dropped / self.total
        target = (1 - self.rate / CREDIT_RATE) * TARGET_SCALE
        min_rate = AVG_CREDIT / self.rtt
        if loss > target:
            old = self.rate
            if loss >= 1:
                self.rate = min_rate
            else:
                self.rate = AVG_CREDIT * (self.total - self.dropped) / (now - self.last_update) * (1 + target)
            self.rate = min(self.rate, old)
            self.w, self.increasing = max(self.w / 2, W_MIN), False
        else:
            if self.increasing:
                self.w = min(self.w + 0.05, W_MAX)
            self.increasing = True
            if self.rate < CREDIT_RATE:
                self.rate = self.w * CREDIT_RATE + (1 - self.w) * self.rate
        self.rate = max(min(self.rate, CREDIT_RATE), min_rate)
        self.total = self.dropped = 0
        self.last_update = now


def simulate(n, duration, seed, rtts=None):
    rng = random.Random(seed)
    rtts = rtts or [50e-6] * n
    flows = [Flow(r, 0.0) for r in rtts]
    events = []  # (time, order, kind, flow, payload)
    order = 0

    def push(t, kind, f, data=None):
        nonlocal order
        order += 1
        heapq.heappush(events, (t, order, kind, f, data))

    for i in range(n):
        push(rtts[i] / 2, "credit", i)  # the request reaches the receiver half an RTT in
    queue, queued = [], 0  # the NIC's credit queue: (flow, seq, sent_at, size)
    tokens, refreshed, wake_at = 0.0, 0.0, None
    offered = dropped = 0
    arrivals = [[] for _ in range(n)]  # data arrival times per flow

    def serve(now):
        nonlocal tokens, refreshed, queued, wake_at
        tokens = min(BUCKET_BYTES, tokens + (now - refreshed) * CREDIT_RATE)
        refreshed = now
        while queue and tokens >= queue[0][3] - 1e-9:  # (float rounding of the refill)
            f, seq, sent, size = queue.pop(0)
            tokens -= size
            queued -= size
            push(now + flows[f].base_rtt, "data", f, (seq, sent))
        if queue and wake_at is None:
            wake_at = now + max(queue[0][3] - tokens, 1e-6) / CREDIT_RATE
            push(wake_at, "wake", -1)

    while events:
        now, _, kind, f, data = heapq.heappop(events)
        if now > duration:
            break
        if kind == "credit":
            fl = flows[f]
            fl.feedback(now)
            size = rng.randint(76, 92)
            offered += 1
            if queued + size > QUEUE_BYTES:
                dropped += 1
            else:
                queue.append((f, fl.seq, now, size))
                queued += size
            fl.seq += 1
            serve(now)
            push(now + AVG_CREDIT / fl.rate * (1 + JITTER * (2 * rng.random() - 1)), "credit", f)
        elif kind == "wake":
            wake_at = None
            serve(now)
        else:
            fl = flows[f]
            seq, sent = data
            sample = now - sent
            fl.rtt = sample if fl.rtt == 0 else 0.8 * fl.rtt + 0.2 * sample
            skipped = seq - fl.echo_next
            fl.total += skipped + 1
            fl.dropped += skipped
            fl.echo_next = seq + 1
            arrivals[f].append(now)
    return arrivals, dropped / max(1, offered)


def jain(xs):
    s = sum(xs)
    return s * s / (len(xs) * sum(x * x for x in xs)) if s > 0 else 0.0


def window_jain(arrivals, duration, window):
    """Mean Jain index over consecutive windows of the second half of the run."""
    start, out = duration / 2, []
    while start + window <= duration:
        out.append(jain([sum(1 for t in a if start <= t < start + window) for a in arrivals]))
        start += window
    return sum(out) / len(out)


def main():
    duration = float(sys.argv[1]) * 1e-3 if len(sys.argv) > 1 else 10e-3
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for n in (2, 4, 10):
        arrivals, loss = simulate(n, duration, seed)
        j200, j1000 = (window_jain(arrivals, duration, w) for w in (200e-6, 1e-3))
        print(f"{n:2d} senders: Jain {j200:.3f} over 200 us windows, {j1000:.3f} over 1 ms; NIC credit loss {loss:.0%}")


if __name__ == "__main__":
    main()
