//! Lazy generators, one per component, merged into one time-ordered stream. Nothing unbounded is
//! generated ahead of time: a Poisson component holds only its next arrival.

use super::spec::{ComponentSpec, IncastMode, Kind, WorkloadSpec};
use super::{FlowArrival, WorkloadEnv};
use crate::engine::rng::Rng;
use crate::engine::time::Time;
use crate::scenario::reader::SpecResult;
use std::collections::VecDeque;

enum Source {
    /// Open-loop Poisson: `next` is the next arrival time (f64 picoseconds, so rounding never
    /// accumulates), `gap` the mean inter-arrival time.
    Poisson { next: f64, gap: f64, stop: Time, cdf: super::cdf::Cdf, rule: super::cdf::Interpolation },
    /// Incast events at a rate; each releases `senders` flows at once.
    Overlay { next: f64, gap: f64, periodic: bool, stop: Time, senders: u32, size: u64 },
    /// Flows fixed in advance (permutation, one incast, a flow list), in start order.
    Fixed,
}

struct Component {
    source: Source,
    /// Arrivals already drawn and due in order.
    ready: VecDeque<FlowArrival>,
    rng: Rng,
    index: u16,
}

pub struct Workload {
    components: Vec<Component>,
    names: Vec<String>,
    excluded: Vec<bool>,
    hosts: u32,
    offered_bytes_per_sec: f64,
}

/// A uniformly random host other than `not`.
fn other_host(rng: &mut Rng, hosts: u32, not: u32) -> u32 {
    let d = rng.below(hosts as u64 - 1) as u32;
    if d >= not {
        d + 1
    } else {
        d
    }
}

/// `k` distinct random hosts, none equal to `not` (partial Fisher-Yates over the others).
fn distinct_hosts(rng: &mut Rng, hosts: u32, not: u32, k: u32) -> Vec<u32> {
    let mut pool: Vec<u32> = (0..hosts).filter(|&h| h != not).collect();
    for i in 0..k as usize {
        let j = i + rng.below((pool.len() - i) as u64) as usize;
        pool.swap(i, j);
    }
    pool.truncate(k as usize);
    pool
}

/// A uniformly random derangement (rejection sampling over shuffles; about e tries).
fn derangement(rng: &mut Rng, n: u32) -> Vec<u32> {
    loop {
        let mut p: Vec<u32> = (0..n).collect();
        rng.shuffle(&mut p);
        if p.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return p;
        }
    }
}

impl Workload {
    pub fn build(spec: &WorkloadSpec, env: &WorkloadEnv) -> SpecResult<Workload> {
        let host_bytes_per_sec = env.host_rate.bps() as f64 / 8.0;
        let capacity = env.hosts as f64 * host_bytes_per_sec;
        let mut components = Vec::new();
        let mut offered = 0.0;
        for (i, c) in spec.components.iter().enumerate() {
            let mut rng = Rng::for_component(env.seed, &format!("workload[{i}]"));
            let index = i as u16;
            let mut ready = VecDeque::new();
            let arrival = |start: Time, src: u32, dst: u32, size: u64| FlowArrival { start, src, dst, size_bytes: size, component: index };
            let source = match &c.kind {
                Kind::Poisson { load, cdf, rule, start, stop } => {
                    check_hosts(c, env.hosts, 2)?;
                    let rate = load * capacity / cdf.mean(*rule); // flows per second
                    offered += load * capacity;
                    let gap = 1e12 / rate;
                    let first = *start as f64 + rng.exponential(gap);
                    Source::Poisson { next: first, gap, stop: stop.unwrap_or(env.end).min(env.end), cdf: cdf.clone(), rule: *rule }
                }
                Kind::Permutation { size, start } => {
                    check_hosts(c, env.hosts, 2)?;
                    for (src, &dst) in derangement(&mut rng, env.hosts).iter().enumerate() {
                        ready.push_back(arrival(*start, src as u32, dst, *size));
                    }
                    Source::Fixed
                }
                Kind::Incast { senders, size, mode } => {
                    if *senders >= env.hosts {
                        return Err(c.err("senders", format!("must be less than the number of hosts ({}), got {senders}", env.hosts)));
                    }
                    match mode {
                        IncastMode::Once { at, receiver } => {
                            let r = match receiver {
                                Some(r) if *r >= env.hosts => {
                                    return Err(c.err("receiver", format!("host {r} does not exist ({} hosts)", env.hosts)))
                                }
                                Some(r) => *r,
                                None => rng.below(env.hosts as u64) as u32,
                            };
                            for s in distinct_hosts(&mut rng, env.hosts, r, *senders) {
                                ready.push_back(arrival(*at, s, r, *size));
                            }
                            Source::Fixed
                        }
                        IncastMode::Overlay { load, periodic, start, stop } => {
                            let events_per_sec = load * capacity / (*senders as f64 * *size as f64);
                            offered += load * capacity;
                            let gap = 1e12 / events_per_sec;
                            let first = *start as f64 + if *periodic { gap } else { rng.exponential(gap) };
                            Source::Overlay { next: first, gap, periodic: *periodic, stop: stop.unwrap_or(env.end).min(env.end), senders: *senders, size: *size }
                        }
                    }
                }
                Kind::FlowList { flows } => {
                    for &(s, d, size, t) in flows {
                        if s >= env.hosts || d >= env.hosts {
                            return Err(c.err("path", format!("flow {s} -> {d} names a host that does not exist ({} hosts)", env.hosts)));
                        }
                        ready.push_back(arrival(t, s, d, size));
                    }
                    Source::Fixed
                }
            };
            // Fixed flows at or after the end never start.
            ready.retain(|a| a.start < env.end);
            components.push(Component { source, ready, rng, index });
        }
        Ok(Workload {
            components,
            names: spec.components.iter().map(|c| c.name.clone()).collect(),
            excluded: spec.components.iter().map(|c| c.exclude_from_slowdown).collect(),
            hosts: env.hosts,
            offered_bytes_per_sec: offered,
        })
    }

    /// Draws the component's next batch into `ready` if it is empty.
    fn refill(c: &mut Component, hosts: u32) {
        if !c.ready.is_empty() {
            return;
        }
        match &mut c.source {
            Source::Poisson { next, gap, stop, cdf, rule } => {
                let t = next.round() as Time;
                if t >= *stop {
                    return;
                }
                let src = c.rng.below(hosts as u64) as u32;
                let dst = other_host(&mut c.rng, hosts, src);
                let size = cdf.sample(&mut c.rng, *rule);
                c.ready.push_back(FlowArrival { start: t, src, dst, size_bytes: size, component: c.index });
                *next += c.rng.exponential(*gap);
            }
            Source::Overlay { next, gap, periodic, stop, senders, size } => {
                let t = next.round() as Time;
                if t >= *stop {
                    return;
                }
                let r = c.rng.below(hosts as u64) as u32;
                for s in distinct_hosts(&mut c.rng, hosts, r, *senders) {
                    c.ready.push_back(FlowArrival { start: t, src: s, dst: r, size_bytes: *size, component: c.index });
                }
                *next += if *periodic { *gap } else { c.rng.exponential(*gap) };
            }
            Source::Fixed => {}
        }
    }

    /// The next arrival over all components: earliest start, ties to the lower component index.
    pub fn next(&mut self) -> Option<FlowArrival> {
        let hosts = self.hosts;
        let mut best: Option<usize> = None;
        for i in 0..self.components.len() {
            Self::refill(&mut self.components[i], hosts);
            if let Some(a) = self.components[i].ready.front() {
                if best.is_none_or(|b| a.start < self.components[b].ready[0].start) {
                    best = Some(i);
                }
            }
        }
        self.components[best?].ready.pop_front()
    }

    pub fn component_names(&self) -> Vec<String> {
        self.names.clone()
    }

    pub fn excluded_from_slowdown(&self, component: u16) -> bool {
        self.excluded[component as usize]
    }

    /// Offered load of the rate-based components (Poisson and incast overlays), in application
    /// bytes per second; fixed flows (permutation, one incast, flow lists) are not a rate.
    pub fn offered_load_bytes_per_sec(&self) -> f64 {
        self.offered_bytes_per_sec
    }
}

fn check_hosts(c: &ComponentSpec, hosts: u32, min: u32) -> SpecResult<()> {
    if hosts < min {
        return Err(c.err("kind", format!("needs at least {min} hosts, the topology has {hosts}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{Rate, SEC};
    use crate::scenario::reader::Section;

    fn build(toml_text: &str, hosts: u32, gbps: f64, end: Time, seed: u64) -> SpecResult<Workload> {
        let v: toml::Value = toml::from_str(toml_text).unwrap();
        let v = serde_json::to_value(v).unwrap();
        let mut top = Section::new("", v.as_object().unwrap());
        let spec = WorkloadSpec::read(&mut top)?;
        top.finish()?;
        let env = WorkloadEnv { hosts, host_rate: Rate::from_gbps(gbps), rack_of: vec![0; hosts as usize], seed, end, mss_bytes: 1436 };
        Workload::build(&spec, &env)
    }

    fn all(w: &mut Workload) -> Vec<FlowArrival> {
        std::iter::from_fn(|| w.next()).collect()
    }

    #[test]
    fn poisson_reaches_the_requested_load() {
        let end = SEC / 2; // 0.5 s of 144 x 100G at 50% load: ~260k websearch flows
        let mut w = build("[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\n", 144, 100.0, end, 3).unwrap();
        let flows = all(&mut w);
        assert!(flows.len() > 200_000, "{}", flows.len());
        let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
        let load = bytes as f64 / (144.0 * 100e9 / 8.0 * end as f64 / 1e12);
        assert!((load - 0.5).abs() < 0.01, "offered load {load}");
        assert!(flows.iter().all(|f| f.src != f.dst && f.src < 144 && f.dst < 144));
        assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
        // Exponential inter-arrivals: coefficient of variation about 1.
        let gaps: Vec<f64> = flows.windows(2).map(|p| (p[1].start - p[0].start) as f64).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / m - 1.0).abs() < 0.02, "cv {}", sd / m);
        assert!((w.offered_load_bytes_per_sec() - 0.5 * 144.0 * 100e9 / 8.0).abs() < 1.0);
    }

    #[test]
    fn permutation_is_a_derangement() {
        let mut w = build("[[workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n", 50, 10.0, SEC, 1).unwrap();
        let f = all(&mut w);
        assert_eq!(f.len(), 50);
        let mut srcs: Vec<u32> = f.iter().map(|a| a.src).collect();
        let mut dsts: Vec<u32> = f.iter().map(|a| a.dst).collect();
        srcs.sort();
        dsts.sort();
        assert_eq!(srcs, (0..50).collect::<Vec<_>>());
        assert_eq!(dsts, (0..50).collect::<Vec<_>>());
        assert!(f.iter().all(|a| a.src != a.dst));
    }

    #[test]
    fn incast_overlay_load_and_shape() {
        let end = SEC / 10;
        let text = "[[workload]]\nkind = \"incast\"\nsenders = 30\nsize_bytes = 500000\nload = 0.07\n";
        let mut w = build(text, 144, 100.0, end, 5).unwrap();
        let f = all(&mut w);
        let bytes: u64 = f.iter().map(|a| a.size_bytes).sum();
        let load = bytes as f64 / (144.0 * 100e9 / 8.0 * end as f64 / 1e12);
        assert!((load - 0.07).abs() < 0.07 * 0.05, "incast load {load}");
        for ev in f.chunks(30) {
            assert!(ev.iter().all(|a| a.start == ev[0].start && a.dst == ev[0].dst && a.src != a.dst));
            let mut s: Vec<u32> = ev.iter().map(|a| a.src).collect();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 30, "senders are distinct");
        }
    }

    #[test]
    fn components_merge_in_time_order_and_are_reproducible() {
        let text = "[[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"google_rpc_w3\"\n\
                    [[workload]]\nkind = \"incast\"\nsenders = 4\nsize_bytes = 10000\nat_us = 100.0\nreceiver = 2\nname = \"burst\"\n";
        let a = all(&mut build(text, 16, 10.0, SEC / 1000, 9).unwrap());
        let b = all(&mut build(text, 16, 10.0, SEC / 1000, 9).unwrap());
        let c = all(&mut build(text, 16, 10.0, SEC / 1000, 10).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.windows(2).all(|p| p[0].start <= p[1].start));
        let burst: Vec<&FlowArrival> = a.iter().filter(|f| f.component == 1).collect();
        assert_eq!(burst.len(), 4);
        assert!(burst.iter().all(|f| f.dst == 2 && f.start == 100_000_000));
    }

    #[test]
    fn bad_components_name_the_field() {
        let cases: &[(&str, &str, &str)] = &[
            ("kind = \"poisson\"\nload = -0.5\ncdf = \"websearch\"", "workload[0].load", "must be in (0, 1]"),
            ("kind = \"poisson\"\nload = 0.5\ncdf = \"websurch\"", "workload[0].cdf", "unknown CDF"),
            ("kind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\ninterpolation = \"cubic\"", "workload[0].interpolation", "unknown rule"),
            ("kind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\ninterpolation = \"log_linear\"", "workload[0].interpolation", "size of 0"),
            ("kind = \"poisson\"\nload = 0.5", "workload[0].cdf", "missing"),
            ("kind = \"incast\"\nsenders = 3\nsize_bytes = 10", "workload[0].load", "at_us"),
            ("kind = \"incast\"\nsenders = 3\nsize_bytes = 10\nat_us = 1.0\nload = 0.1", "workload[0].at_us", "not both"),
            ("kind = \"incast\"\nsenders = 16\nsize_bytes = 10\nat_us = 1.0", "workload[0].senders", "less than"),
            ("kind = \"incast\"\nsenders = 2\nsize_bytes = 10\nat_us = 1.0\nreceiver = 99", "workload[0].receiver", "does not exist"),
            ("kind = \"permutation\"\nsize_bytes = 0", "workload[0].size_bytes", "must be in"),
            ("kind = \"flow_list\"\npath = \"/nonexistent/flows.csv\"", "workload[0].path", "cannot read"),
            ("kind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\nstart_us = 10.0\nstop_us = 5.0", "workload[0].stop_us", "after"),
            ("kind = \"bursty\"", "workload[0].kind", "expected one of"),
            ("kind = \"permutation\"\nsize_bytes = 10\nlaod = 1", "workload[0].laod", "unknown key"),
        ];
        for (body, field, msg) in cases {
            let e = build(&format!("[[workload]]\n{body}\n"), 16, 10.0, SEC, 1).err().unwrap_or_else(|| panic!("accepted: {body}"));
            assert_eq!(e.field, *field, "{body}: {e}");
            assert!(e.message.contains(msg), "{body}: {e}");
        }
    }

    #[test]
    fn flow_list_is_validated_and_sorted() {
        let dir = std::env::temp_dir().join(format!("dcnsim-wl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.csv");
        std::fs::write(&ok, "start_us,src,dst,size_bytes\n5,0,1,100\n1,2,3,200\n1,3,2,300\n").unwrap();
        let f = all(&mut build(&format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", ok.display()), 4, 10.0, SEC, 1).unwrap());
        assert_eq!(f.iter().map(|a| a.size_bytes).collect::<Vec<_>>(), vec![200, 300, 100]);
        for (text, msg) in [
            ("src,dst,size_bytes,start_us\n0,0,10,0\n", "same host"),
            ("src,dst,size_bytes,start_us\n0,1,x,0\n", "line 2: size_bytes"),
            ("src,dst,start_us\n0,1,0\n", "missing size_bytes"),
            ("src,dst,size_bytes,start_us\n0,9,10,0\n", "does not exist"),
        ] {
            let p = dir.join("bad.csv");
            std::fs::write(&p, text).unwrap();
            let e = build(&format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", p.display()), 4, 10.0, SEC, 1).err().unwrap();
            assert_eq!(e.field, "workload[0].path");
            assert!(e.message.contains(msg), "{e}");
        }
    }
}
