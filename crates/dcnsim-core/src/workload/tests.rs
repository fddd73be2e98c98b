//! End-to-end workload tests: spec text -> `WorkloadSpec` -> `Workload` -> arrivals.

use super::dag::Milestone;
use super::{FlowArrival, Workload, WorkloadEnv, WorkloadSpec};
use crate::spec_reader::{Section, SpecResult};
use crate::time::{Rate, Time, SEC, US};
use std::path::PathBuf;

fn env(hosts: u32, gbps: f64, end: Time, seed: u64) -> WorkloadEnv {
    WorkloadEnv {
        hosts,
        host_rate: Rate::from_gbps(gbps),
        rack_of: vec![0; hosts as usize],
        seed,
        end,
        mss_bytes: 1436,
    }
}

fn build(toml_text: &str, hosts: u32, gbps: f64, end: Time, seed: u64) -> SpecResult<Workload> {
    let v: toml::Value = toml::from_str(toml_text).unwrap();
    let v = serde_json::to_value(v).unwrap();
    let mut top = Section::new("", v.as_object().unwrap());
    let spec = WorkloadSpec::read(&mut top)?;
    top.finish()?;
    Workload::build(&spec, &env(hosts, gbps, end, seed))
}

fn run(toml_text: &str, hosts: u32, gbps: f64, end: Time, seed: u64) -> Vec<FlowArrival> {
    build(toml_text, hosts, gbps, end, seed).unwrap().collect()
}

/// A scratch file unique to this process and name.
fn scratch(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dcnsim-workload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

/// Offered load of `flows` over `window` ps, as a fraction of `hosts` links of `gbps`.
fn load_of(flows: &[FlowArrival], hosts: u32, gbps: f64, window: Time) -> f64 {
    let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
    bytes as f64 / (hosts as f64 * gbps * 1e9 / 8.0 * window as f64 / 1e12)
}

/// Coefficient of variation of the gaps between consecutive times.
fn gap_cv(times: &[Time]) -> f64 {
    let gaps: Vec<f64> = times.windows(2).map(|p| (p[1] - p[0]) as f64).collect();
    let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64;
    var.sqrt() / m
}

#[test]
fn poisson_reaches_the_requested_load() {
    // 0.5 s of 144 x 100G at load 0.5 with websearch (mean 1.71 MB): ~263k flows, so the total's
    // relative standard error is ~0.45% and the 2% bound is over 4 sigma.
    let end = SEC / 2;
    let mut w =
        build("[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\n", 144, 100.0, end, 3).unwrap();
    let flows: Vec<FlowArrival> = w.by_ref().collect();
    assert!(flows.len() > 200_000, "{}", flows.len());
    let load = load_of(&flows, 144, 100.0, end);
    assert!((load / 0.5 - 1.0).abs() < 0.02, "offered load {load}");
    assert!((w.offered_load_bytes_per_sec() - 0.5 * 144.0 * 100e9 / 8.0).abs() < 1.0);
    assert!(flows.iter().all(|f| f.src != f.dst && f.src < 144 && f.dst < 144 && f.start < end));
    assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
    let times: Vec<Time> = flows.iter().map(|f| f.start).collect();
    let cv = gap_cv(&times);
    assert!((cv - 1.0).abs() < 0.02, "inter-arrival cv {cv}");
    // Sources and destinations uniform over hosts: each ~1826 flows, sd ~43.
    let per = flows.len() as f64 / 144.0;
    for pick in [|f: &FlowArrival| f.src, |f: &FlowArrival| f.dst] {
        let mut n = [0u32; 144];
        flows.iter().for_each(|f| n[pick(f) as usize] += 1);
        assert!(n.iter().all(|&c| (c as f64 / per - 1.0).abs() < 0.15), "{n:?}");
    }
}

#[test]
fn poisson_respects_start_stop_and_end() {
    let text =
        "[[workload]]\nkind = \"poisson\"\nload = 0.8\ncdf = \"google_rpc_w3\"\nstart_us = 100.0\nstop_us = 300.0\n";
    let f = run(text, 16, 100.0, 1000 * US, 1);
    assert!(f.len() > 1000, "{}", f.len());
    assert!(f.iter().all(|a| a.start >= 100 * US && a.start < 300 * US));
    // The same component without stop_us ends at the end of the run.
    let f = run("[[workload]]\nkind = \"poisson\"\nload = 0.8\ncdf = \"google_rpc_w3\"\n", 16, 100.0, 200 * US, 1);
    assert!(f.last().unwrap().start < 200 * US && f.last().unwrap().start > 190 * US);
}

#[test]
fn permutation_is_a_derangement() {
    for n in [2u32, 3, 50, 1000] {
        let f =
            run("[[workload]]\nkind = \"permutation\"\nsize_bytes = 1000\nstart_us = 5.0\n", n, 10.0, SEC, n as u64);
        assert_eq!(f.len(), n as usize);
        let (mut srcs, mut dsts): (Vec<u32>, Vec<u32>) = f.iter().map(|a| (a.src, a.dst)).unzip();
        srcs.sort();
        dsts.sort();
        assert_eq!(srcs, (0..n).collect::<Vec<_>>());
        assert_eq!(dsts, (0..n).collect::<Vec<_>>());
        assert!(f.iter().all(|a| a.src != a.dst && a.start == 5 * US && a.size_bytes == 1000));
    }
}

/// Splits incast arrivals into events, checks each (one time, one receiver, distinct senders other
/// than the receiver) and returns (time, receiver) per event.
fn incast_events(f: &[FlowArrival], senders: usize) -> Vec<(Time, u32)> {
    assert_eq!(f.len() % senders, 0);
    f.chunks(senders)
        .map(|ev| {
            assert!(ev.iter().all(|a| a.start == ev[0].start && a.dst == ev[0].dst && a.src != a.dst));
            let mut s: Vec<u32> = ev.iter().map(|a| a.src).collect();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), senders, "senders are distinct");
            (ev[0].start, ev[0].dst)
        })
        .collect()
}

#[test]
fn incast_overlay_load_and_shape() {
    // 0.1 s at load 0.1 of 144 x 100G, 10 x 100 kB events: ~18k events (relative sd 0.75%).
    let end = SEC / 10;
    let text = "[[workload]]\nkind = \"incast\"\nsenders = 10\nsize_bytes = 100000\nload = 0.1\n";
    let f = run(text, 144, 100.0, end, 5);
    let load = load_of(&f, 144, 100.0, end);
    assert!((load / 0.1 - 1.0).abs() < 0.05, "incast load {load}");
    let events = incast_events(&f, 10);
    let times: Vec<Time> = events.iter().map(|e| e.0).collect();
    let cv = gap_cv(&times);
    assert!((cv - 1.0).abs() < 0.05, "event gaps are exponential: cv {cv}");
    // Receivers uniform: ~125 events each, sd ~11.
    let mut per = [0u32; 144];
    events.iter().for_each(|e| per[e.1 as usize] += 1);
    let mean = events.len() as f64 / 144.0;
    assert!(per.iter().all(|&c| (c as f64 / mean - 1.0).abs() < 0.5), "{per:?}");

    // Periodic: constant gaps (to the rounding picosecond), the same load.
    let f = run(&format!("{text}arrival = \"periodic\"\n"), 144, 100.0, end, 5);
    let times: Vec<Time> = incast_events(&f, 10).iter().map(|e| e.0).collect();
    let gap = 10.0 * 100_000.0 / (0.1 * 144.0 * 100e9 / 8.0) * 1e12;
    assert!(times.windows(2).all(|p| ((p[1] - p[0]) as f64 - gap).abs() <= 1.0));
    assert!((load_of(&f, 144, 100.0, end) / 0.1 - 1.0).abs() < 0.001);
}

#[test]
fn incast_once() {
    let text = "[[workload]]\nkind = \"incast\"\nsenders = 31\nsize_bytes = 5000\nat_us = 7.5\nreceiver = 3\n";
    let f = run(text, 32, 10.0, SEC, 1);
    assert_eq!(f.len(), 31);
    assert!(f.iter().all(|a| a.dst == 3 && a.start == 7_500_000 && a.size_bytes == 5000));
    incast_events(&f, 31); // distinct senders, none the receiver
                           // A random receiver varies with the seed.
    let text = "[[workload]]\nkind = \"incast\"\nsenders = 4\nsize_bytes = 5000\nat_us = 1.0\n";
    let receivers: std::collections::BTreeSet<u32> =
        (0..20).map(|seed| run(text, 32, 10.0, SEC, seed)[0].dst).collect();
    assert!(receivers.len() > 5, "{receivers:?}");
}

#[test]
fn merge_order_and_ties() {
    // Both fixed components start at 0: all of component 0 first, each in generation order.
    let text = "[[workload]]\nkind = \"permutation\"\nsize_bytes = 10\n\
                [[workload]]\nkind = \"incast\"\nsenders = 3\nsize_bytes = 20\nat_us = 0.0\n\
                [[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fb_keyvalue_w1\"\n";
    let f = run(text, 8, 10.0, 100 * US, 2);
    assert!(f.windows(2).all(|p| p[0].start <= p[1].start));
    let head: Vec<(u16, u32)> = f[..11].iter().map(|a| (a.component, a.src)).collect();
    assert_eq!(&head[..8], &(0..8).map(|s| (0, s)).collect::<Vec<_>>()[..]);
    assert!(head[8..].iter().all(|&(c, _)| c == 1));
    assert!(f[11..].iter().all(|a| a.component == 2) && f.len() > 1000);
}

#[test]
fn determinism_and_independent_streams() {
    let base = "[[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"fb_hadoop\"\n";
    let a = run(base, 16, 10.0, SEC / 1000, 9);
    assert_eq!(a, run(base, 16, 10.0, SEC / 1000, 9));
    assert_ne!(a, run(base, 16, 10.0, SEC / 1000, 10));
    // Adding a component does not change what the first one draws.
    let more = format!("{base}[[workload]]\nkind = \"incast\"\nsenders = 4\nsize_bytes = 1000\nload = 0.1\n");
    let b: Vec<FlowArrival> = run(&more, 16, 10.0, SEC / 1000, 9).into_iter().filter(|f| f.component == 0).collect();
    assert_eq!(a, b);
}

#[test]
fn names_exclusion_and_offered_load() {
    let text = "[[workload]]\nkind = \"poisson\"\nload = 0.4\ncdf = \"websearch\"\n\
                [[workload]]\nkind = \"incast\"\nname = \"overlay\"\nsenders = 4\nsize_bytes = 1000\nload = 0.1\nexclude_from_slowdown = true\n";
    let w = build(text, 16, 100.0, SEC, 1).unwrap();
    assert_eq!(w.component_names(), vec!["poisson".to_string(), "overlay".to_string()]);
    assert!(!w.excluded_from_slowdown(0) && w.excluded_from_slowdown(1));
    assert!((w.offered_load_bytes_per_sec() / (0.5 * 16.0 * 100e9 / 8.0) - 1.0).abs() < 1e-12);
}

#[test]
fn flow_list_arrivals_and_end_cutoff() {
    let p = scratch("ok.csv", "start_us,src,dst,size_bytes\n5,0,1,100\n1,2,3,200\n1,3,2,300\n10,1,0,400\n");
    let f = run(&format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", p.display()), 4, 10.0, 10 * US, 1);
    // Sorted by start, file order among equals; the flow at the end of the run never starts.
    assert_eq!(f.iter().map(|a| a.size_bytes).collect::<Vec<_>>(), vec![200, 300, 100]);
    assert_eq!((f[2].src, f[2].dst, f[2].start), (0, 1, 5 * US));
}

#[test]
fn bad_components_name_the_field() {
    let no_rule = scratch("norule.cdf", "# no header\n100 0.5\n200 1\n");
    let bad_cdf = scratch("bad.cdf", "# sampling=step\n100 0.5\n50 1\n");
    let tiny = scratch("tiny.cdf", "# sampling=linear\n0 0.5\n1 1\n");
    let far = scratch("hosts.csv", "src,dst,size_bytes,start_us\n0,1,10,0\n0,16,10,0\n");
    let poisson = "kind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"";
    let cases: Vec<(String, &str, &str)> = vec![
        (String::from("kind = \"poisson\"\nload = -0.5\ncdf = \"websearch\""), "workload[0].load", "must be in (0, 1]"),
        (String::from("kind = \"poisson\"\nload = 0.0\ncdf = \"websearch\""), "workload[0].load", "must be in (0, 1]"),
        (String::from("kind = \"poisson\"\nload = 1.5\ncdf = \"websearch\""), "workload[0].load", "must be in (0, 1]"),
        (
            String::from("kind = \"poisson\"\nload = \"half\"\ncdf = \"websearch\""),
            "workload[0].load",
            "expected a number",
        ),
        (
            String::from("kind = \"poisson\"\nload = 0.5\ncdf = \"websurch\""),
            "workload[0].cdf",
            "shipped: alistorage, ",
        ),
        (String::from("kind = \"poisson\"\nload = 0.5"), "workload[0].cdf", "missing"),
        (
            format!("kind = \"poisson\"\nload = 0.5\ncdf = \"{}\"", bad_cdf.display()),
            "workload[0].cdf",
            "bad.cdf line 3: sizes must not decrease",
        ),
        (String::from("kind = \"poisson\"\nload = 0.5\ncdf = \"/nonexistent.cdf\""), "workload[0].cdf", "cannot read"),
        (
            format!("kind = \"poisson\"\nload = 0.5\ncdf = \"{}\"", no_rule.display()),
            "workload[0].interpolation",
            "declares no sampling rule",
        ),
        (format!("kind = \"poisson\"\nload = 0.5\ncdf = \"{}\"", tiny.display()), "workload[0].cdf", "must be >= 1"),
        (format!("{poisson}\ninterpolation = \"cubic\""), "workload[0].interpolation", "unknown rule"),
        (format!("{poisson}\ninterpolation = \"log_linear\""), "workload[0].interpolation", "size of 0"),
        (format!("{poisson}\nstart_us = -1.0"), "workload[0].start_us", ">= 0"),
        (format!("{poisson}\nstart_us = 10.0\nstop_us = 5.0"), "workload[0].stop_us", "after start_us"),
        (String::from("kind = \"incast\"\nsenders = 3\nsize_bytes = 10"), "workload[0].load", "at_us"),
        (
            String::from("kind = \"incast\"\nsenders = 3\nsize_bytes = 10\nat_us = 1.0\nload = 0.1"),
            "workload[0].at_us",
            "not both",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 16\nsize_bytes = 10\nat_us = 1.0"),
            "workload[0].senders",
            "less than the number of hosts (16)",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 0\nsize_bytes = 10\nat_us = 1.0"),
            "workload[0].senders",
            "at least 1",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 2\nsize_bytes = 10\nat_us = 1.0\nreceiver = 99"),
            "workload[0].receiver",
            "does not exist",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 2\nsize_bytes = 10\nload = 0.1\nreceiver = 1"),
            "workload[0].receiver",
            "applies only",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 2\nsize_bytes = 10\nat_us = 1.0\narrival = \"periodic\""),
            "workload[0].arrival",
            "applies only",
        ),
        (
            String::from("kind = \"incast\"\nsenders = 2\nsize_bytes = 10\nload = 0.1\narrival = \"bursty\""),
            "workload[0].arrival",
            "expected one of",
        ),
        (String::from("kind = \"permutation\"\nsize_bytes = 0"), "workload[0].size_bytes", "must be in"),
        (String::from("kind = \"permutation\"\nsize_bytes = -5"), "workload[0].size_bytes", "non-negative"),
        (String::from("kind = \"flow_list\"\npath = \"/nonexistent/flows.csv\""), "workload[0].path", "cannot read"),
        (
            format!("kind = \"flow_list\"\npath = \"{}\"", far.display()),
            "workload[0].path",
            "hosts.csv line 3: flow 0 -> 16",
        ),
        (String::from("kind = \"bursty\""), "workload[0].kind", "expected one of"),
        (String::from("kind = \"permutation\"\nsize_bytes = 10\nlaod = 1"), "workload[0].laod", "unknown key"),
        (
            String::from("kind = \"permutation\"\nsize_bytes = 10\nexclude_from_slowdown = 1"),
            "workload[0].exclude_from_slowdown",
            "true or false",
        ),
        // A later component's error carries its own index.
        (
            format!("{poisson}\n[[workload]]\nkind = \"incast\"\nsenders = 20\nsize_bytes = 10\nload = 0.1"),
            "workload[1].senders",
            "less than",
        ),
    ];
    for (body, field, msg) in &cases {
        let e = build(&format!("[[workload]]\n{body}\n"), 16, 10.0, SEC, 1)
            .err()
            .unwrap_or_else(|| panic!("accepted: {body}"));
        assert_eq!(e.field, *field, "{body}: {e}");
        assert!(e.message.contains(msg), "{body}: {e}");
    }
    let e = build("[[workload]]\nkind = \"permutation\"\nsize_bytes = 10\n", 1, 10.0, SEC, 1).err().unwrap();
    assert_eq!(e.field, "workload[0].kind");
}

#[test]
fn closed_loops_to_random_hosts_with_drawn_sizes_and_exponential_waits() {
    // 20 sources x 3 connections, each message completing at once: each loop is then a renewal
    // process of exponential waits (mean 100 us), so 1 s brings ~60 x 10,000 messages, in start
    // order, each to a host other than its source, sizes averaging the CDF's mean.
    let text = "[[workload]]\nkind = \"closed_loop\"\nsources = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, \
                14, 15, 16, 17, 18, 19]\ncdf = \"fb_webserver\"\nthink_us = 100.0\nthink_distribution = \
                \"exponential\"\nconnections = 3\n";
    let mut w = build(text, 32, 10.0, SEC, 5).unwrap();
    let (mut got, mut last) = (Vec::new(), 0);
    while let Some(a) = w.next() {
        assert!(a.start >= last, "arrivals in start order");
        last = a.start;
        assert!(a.src < 20 && a.dst != a.src && a.dst < 32);
        w.on_milestone(&a, Milestone::Received, a.start);
        got.push(a);
    }
    let n = got.len() as f64;
    assert!((n / 600_000.0 - 1.0).abs() < 0.01, "{n} messages");
    let mean = got.iter().map(|a| a.size_bytes as f64).sum::<f64>() / n;
    assert!((mean / 62_874.3 - 1.0).abs() < 0.05, "mean size {mean}");
    let receivers: std::collections::HashSet<u32> = got.iter().map(|a| a.dst).collect();
    assert_eq!(receivers.len(), 32, "every host receives");
    // Each source keeps three loops: its messages arrive three times as often as one loop's.
    let from0 = got.iter().filter(|a| a.src == 0).count() as f64;
    assert!((from0 / 30_000.0 - 1.0).abs() < 0.05, "{from0} from host 0");
}

#[test]
fn a_closed_loop_takes_a_size_or_a_cdf_and_fixed_or_exponential_waits() {
    let base = "[[workload]]\nkind = \"closed_loop\"\nsources = [1]\n";
    for (extra, field) in [
        ("size_bytes = 1000\ncdf = \"fb_webserver\"\n", "workload[0].size_bytes"),
        ("size_bytes = 1000\ninterpolation = \"step\"\n", "workload[0].interpolation"),
        ("size_bytes = 1000\nthink_distribution = \"pareto\"\n", "workload[0].think_distribution"),
        ("size_bytes = 1000\nconnections = 0\n", "workload[0].connections"),
        ("cdf = \"no_such_cdf\"\n", "workload[0].cdf"),
    ] {
        let e = build(&format!("{base}{extra}"), 4, 10.0, SEC, 1).err().expect("refused").to_string();
        assert!(e.contains(field), "{extra}: {e}");
    }
    // A fixed receiver and size with fixed waits: one message outstanding, as before.
    let w = build(&format!("{base}receiver = 0\nsize_bytes = 1000\nthink_us = 5.0\n"), 4, 10.0, SEC, 1).unwrap();
    let first: Vec<FlowArrival> = w.collect();
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].src, first[0].dst, first[0].size_bytes, first[0].start), (1, 0, 1000, 0));
}
