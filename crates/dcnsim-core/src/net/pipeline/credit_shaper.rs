//! Credit shaping (ExpressPass, Cho, Jang and Han, SIGCOMM'17, section 3.1; the port as the
//! authors' ns-2 code builds it, `XPassDropTail`): every egress port, switch ports and host NICs
//! alike, keeps credits apart from data in a small drop-tail credit queue, served by a token
//! bucket that refills at the credit rate (`credit bytes / (credit bytes + max frame)` of the link,
//! ~5 %). At each transmission opportunity the head credit goes if the bucket holds its size;
//! otherwise data goes; with only credits waiting, the port wakes when the bucket will hold the
//! head credit. Excess credits are dropped at the credit queue: that loss is what ExpressPass's
//! receivers react to, and it bounces data off the bottleneck before the data is ever sent.
//!
//! Enabled for the whole network when a run has an ExpressPass transport (the transport's
//! `Needs::credit_shaping` carries its parameters). Credits waiting here are not counted in the
//! port's data occupancy (`Port::bytes`), so queue statistics are data queues, as the paper's
//! Table 3 reports; packet conservation counts them (`Network::resident_packets`).

use crate::engine::events::{Event, EventQueue};
use crate::net::network::Network;
use crate::net::packet::{Fate, PacketId};
use crate::net::pipeline::scheduler::Dequeued;
use crate::net::port::PortId;
use crate::record::trace::TraceEvent;
use crate::time::Time;
use serde_json::{json, Value};
use std::collections::VecDeque;

/// The shaping parameters, the same at every port (the rate scales with each port's link).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CreditShaping {
    /// Credit share of a link: average credit bytes / (average credit + largest data frame).
    pub rate_fraction: f64,
    /// Credit queue limit (drop-tail), bytes.
    pub queue_bytes: u64,
    /// Token bucket depth, bytes.
    pub bucket_bytes: u64,
}

/// Counters of one port's credit queue over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct CreditCounters {
    pub sent: u64,
    pub sent_bytes: u64,
    pub dropped: u64,
    /// First and last credit sent in the window (the rate check's interval).
    pub first_sent: Option<Time>,
    pub last_sent: Time,
    pub last_size: u32,
}

/// One port's credit queue and token bucket.
#[derive(Clone, Debug)]
pub struct CreditShaper {
    queue: VecDeque<(PacketId, u32)>,
    queued_bytes: u64,
    limit_bytes: u64,
    /// Tokens in bytes (fractional: the bucket refills continuously).
    tokens: f64,
    max_tokens: f64,
    /// Refill rate, bytes per picosecond.
    bytes_per_ps: f64,
    refreshed: Time,
    pub counters: CreditCounters,
}

impl CreditShaper {
    pub fn new(link_bps: u64, s: &CreditShaping) -> CreditShaper {
        let bytes_per_ps = link_bps as f64 * s.rate_fraction / 8e12;
        debug_assert!(bytes_per_ps > 0.0);
        CreditShaper {
            queue: VecDeque::new(),
            queued_bytes: 0,
            limit_bytes: s.queue_bytes,
            tokens: s.bucket_bytes as f64,
            max_tokens: s.bucket_bytes as f64,
            bytes_per_ps,
            refreshed: 0,
            counters: CreditCounters::default(),
        }
    }

    /// Credits waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The shaped rate in bytes per second.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        self.bytes_per_ps * 1e12
    }

    pub fn bucket_bytes(&self) -> f64 {
        self.max_tokens
    }

    fn refresh(&mut self, now: Time) {
        debug_assert!(now >= self.refreshed);
        self.tokens = (self.tokens + (now - self.refreshed) as f64 * self.bytes_per_ps).min(self.max_tokens);
        self.refreshed = now;
    }

    /// When the bucket will hold the head credit (now if it does).
    fn ready_at(&self, now: Time) -> Time {
        let Some(&(_, size)) = self.queue.front() else { return now };
        let missing = size as f64 - self.tokens;
        if missing <= 0.0 {
            now
        } else {
            now + (missing / self.bytes_per_ps).ceil() as Time
        }
    }

    /// Drop-tail: queues the credit if it fits in the credit queue, else counts a drop.
    fn offer(&mut self, pkt: PacketId, size: u32) -> bool {
        if self.queued_bytes + size as u64 > self.limit_bytes {
            self.counters.dropped += 1;
            return false;
        }
        self.queue.push_back((pkt, size));
        self.queued_bytes += size as u64;
        true
    }

    /// Takes the head credit if the bucket holds its size.
    fn take(&mut self, now: Time) -> Option<(PacketId, u32)> {
        self.refresh(now);
        let &(_, size) = self.queue.front()?;
        if (size as f64) > self.tokens {
            return None;
        }
        self.tokens -= size as f64;
        debug_assert!(self.tokens >= 0.0 && self.tokens <= self.max_tokens);
        self.queued_bytes -= size as u64;
        let c = &mut self.counters;
        c.sent += 1;
        c.sent_bytes += size as u64;
        c.first_sent.get_or_insert(now);
        (c.last_sent, c.last_size) = (now, size);
        self.queue.pop_front()
    }
}

impl Network {
    /// Gives every port (host NICs included) a credit queue and bucket.
    pub fn enable_credit_shaping(&mut self, s: &CreditShaping) {
        for p in &mut self.ports {
            p.shaper = Some(Box::new(CreditShaper::new(p.rate.bps(), s)));
        }
    }

    /// A credit offered to a shaped port: drop-tail on the credit queue, then a wake-up so the
    /// port serves it when the link and the bucket allow.
    pub(crate) fn enqueue_credit(&mut self, port: PortId, pkt: PacketId, now: Time, ev: &mut EventQueue) {
        let size = self.pool.get(pkt).size;
        let p = &mut self.ports[port as usize];
        let sh = p.shaper.as_deref_mut().expect("a shaped port");
        if !sh.offer(pkt, size) {
            if self.tracer.is_some() {
                self.trace(now, pkt, port, TraceEvent::Drop);
            }
            self.pool.release(pkt, Fate::Dropped);
            return;
        }
        if self.tracer.is_some() {
            self.trace(now, pkt, port, TraceEvent::Enqueue);
        }
        let p = &mut self.ports[port as usize];
        if !p.wake_pending {
            p.wake_pending = true;
            ev.schedule(p.busy_until.max(now), Event::PortFree(port));
        }
    }

    /// The next packet of a shaped port: the head credit if the bucket allows, else data by the
    /// port's scheduler; with nothing sendable but credits, a wake-up when the bucket fills.
    /// The flag says the packet came from the credit queue (not counted in the data occupancy).
    pub(crate) fn shaped_next(&mut self, port: PortId, now: Time, ev: &mut EventQueue) -> Option<(Dequeued, bool)> {
        let p = &mut self.ports[port as usize];
        let sh = p.shaper.as_deref_mut().expect("a shaped port");
        if let Some((pkt, size)) = sh.take(now) {
            return Some((Dequeued { pkt, size, is_data: false, class: 0 }, true));
        }
        let ready = sh.ready_at(now);
        let waiting = !sh.is_empty();
        if let Some(d) = p.pop_next(&self.cfgs[p.cfg as usize]) {
            return Some((d, false));
        }
        if waiting && !p.wake_pending {
            debug_assert!(ready > now);
            p.wake_pending = true;
            ev.schedule(ready, Event::PortFree(port));
        }
        None
    }

    /// After a shaped port started a packet: wake it for the next one, data or credit.
    pub(crate) fn shaped_rearm(&mut self, port: PortId, now: Time, ev: &mut EventQueue) {
        let p = &mut self.ports[port as usize];
        if p.wake_pending {
            return;
        }
        let sh = p.shaper.as_deref().expect("a shaped port");
        let at = if p.has_sendable() {
            p.busy_until
        } else if !sh.is_empty() {
            p.busy_until.max(sh.ready_at(now))
        } else {
            return;
        };
        p.wake_pending = true;
        ev.schedule(at, Event::PortFree(port));
    }

    /// Credits waiting in credit queues (for packet conservation).
    pub(crate) fn shaped_credits_waiting(&self) -> u64 {
        self.ports.iter().filter_map(|p| p.shaper.as_deref()).map(|s| s.len() as u64).sum()
    }

    /// The summary's `credit_shaping` entry: credits sent and dropped by switch ports and NICs.
    pub fn credit_summary(&self) -> Option<Value> {
        let mut sent = [0u64; 2];
        let mut dropped = [0u64; 2];
        for p in &self.ports {
            let sh = p.shaper.as_deref()?;
            let i = usize::from(p.owner >= self.hosts);
            sent[i] += sh.counters.sent;
            dropped[i] += sh.counters.dropped;
        }
        Some(json!({
            "switch_credits_sent": sent[1],
            "switch_credits_dropped": dropped[1],
            "nic_credits_sent": sent[0],
            "nic_credits_dropped": dropped[0],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full bucket lets two credits go back to back; the third waits exactly until the bucket
    /// has refilled its size at the credit rate, and not a picosecond less.
    #[test]
    fn the_bucket_releases_a_burst_then_paces_at_the_credit_rate() {
        let s = CreditShaping { rate_fraction: 84.0 / (84.0 + 1538.0), queue_bytes: 672, bucket_bytes: 168 };
        let mut sh = CreditShaper::new(10_000_000_000, &s);
        for id in 0..3 {
            sh.queue.push_back((id, 84));
            sh.queued_bytes += 84;
        }
        assert_eq!(sh.take(0).map(|c| c.0), Some(0));
        assert_eq!(sh.take(0).map(|c| c.0), Some(1));
        assert!(sh.take(0).is_none());
        let ready = sh.ready_at(0);
        // 84 B at 10 Gb/s x 84/1622 take 1297.6 ns.
        assert!((ready as f64 - 84.0 * 8.0 / (1e10 * 84.0 / 1622.0) * 1e12).abs() <= 1.0, "{ready}");
        assert!(sh.take(ready - 1).is_none());
        assert_eq!(sh.take(ready).map(|c| c.0), Some(2));
        assert_eq!((sh.counters.sent, sh.counters.sent_bytes, sh.queued_bytes), (3, 252, 0));
    }

    /// Drop-tail at a full credit queue is not fair between paced flows: a slot frees at each
    /// departure and goes to the first credit after it, and a flow's next credit is U[0, gap]
    /// away, so a flow with a shorter gap is first more often. Two flows offering 0.4x and 1.6x
    /// the shaped rate (gaps jittered by 10 %, 76-92 B credits, as ExpressPass receivers send
    /// them): the slow one is first after a departure with probability 0.4 / (2 x 1.6) = 1/8, so
    /// it loses 1 - 0.125 / 0.4 = 69 % of its credits and the fast one 1 - 0.875 / 1.6 = 45 %,
    /// not 50 % each. (ExpressPass's decrease follows each flow's own loss: the faster flow sees
    /// less and stays faster, one reason many flows into one receiver converge slowly.)
    #[test]
    fn a_full_credit_queue_favours_the_faster_of_two_paced_flows() {
        let s = CreditShaping { rate_fraction: 84.0 / (84.0 + 1538.0), queue_bytes: 672, bucket_bytes: 168 };
        let mut sh = CreditShaper::new(10_000_000_000, &s);
        let mut rng = crate::engine::rng::Rng::seed_from(7);
        let service_ps = 84.0 / sh.bytes_per_ps;
        let gaps = [service_ps / 0.4, service_ps / 1.6];
        let (mut next, mut offered, mut dropped) = ([0 as Time, 1000], [0u64; 2], [0u64; 2]);
        let mut now = 0;
        while now < 100_000_000_000 {
            let src = usize::from(next[1] < next[0]);
            let serve_at = if sh.is_empty() {
                Time::MAX
            } else {
                sh.refresh(now);
                sh.ready_at(now)
            };
            if serve_at <= next[src] {
                now = serve_at;
                assert!(sh.take(now).is_some());
                continue;
            }
            now = next[src];
            offered[src] += 1;
            dropped[src] += u64::from(!sh.offer(offered[src] as PacketId, 76 + rng.below(17) as u32));
            next[src] = now + (gaps[src] * (1.0 + 0.1 * (2.0 * rng.uniform() - 1.0))) as Time;
        }
        let loss = [0, 1].map(|i| dropped[i] as f64 / offered[i] as f64);
        assert!(offered[0] > 10_000, "{offered:?}");
        let busy = sh.counters.sent_bytes as f64 / sh.bytes_per_ps / now as f64;
        assert!((busy - 1.0).abs() < 0.01, "the queue was not kept busy: {busy}");
        assert!((loss[0] - 0.69).abs() < 0.08 && (loss[1] - 0.45).abs() < 0.03, "losses {loss:?}");
        assert!(loss[0] > loss[1] + 0.1, "the slow flow loses {}, the fast {}", loss[0], loss[1]);
    }
}
