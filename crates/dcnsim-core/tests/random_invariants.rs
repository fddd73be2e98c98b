//! Randomized invariants: random small topologies (single switch, dumbbell, leaf-spine, k = 4
//! fat trees whole or with fewer pods, three-tier Clos, rings) with random link overrides (slower and faster
//! links, one-way or both) and random link loss, routing modes, every registered protocol with the
//! settings it needs, NIC pacing, switch latency, warm-up and sampling, and random workloads. Every
//! run must hold what `common::check_invariants` checks: each finished flow's FCT >= its ideal FCT,
//! no reported rate above a capacity (port utilization, host receive rates in the time series,
//! per-host window throughput), packet conservation.
//!
//! 40 cases per protocol by default (under a second); `DCNSIM_RANDOM_CASES=1000` runs that
//! many per protocol, and `DCNSIM_RANDOM_SEED` picks another sequence.
mod common;
use common::*;
use dcnsim_core::engine::rng::Rng;

fn pick<'a, T>(rng: &mut Rng, from: &'a [T]) -> &'a T {
    &from[rng.below(from.len() as u64) as usize]
}

/// A random topology table and the links it has, by the names of their ends.
fn topology(rng: &mut Rng, host_gbps: f64) -> (String, Vec<(String, String)>, u32) {
    let host_delay = *pick(rng, &[0.2, 1.0, 1.5]);
    let core_delay = *pick(rng, &[0.1, 0.5, 1.0]);
    let core_gbps = host_gbps * *pick(rng, &[1.0, 2.0, 4.0]);
    let rates = format!("host_rate_gbps = {host_gbps}\nhost_delay_us = {host_delay}\n");
    let core = format!("core_rate_gbps = {core_gbps}\ncore_delay_us = {core_delay}\n");
    let mut links = Vec::new();
    let (table, hosts) = match rng.below(7) {
        0 => {
            let n = 2 + rng.below(5) as u32;
            host_links(&mut links, n, |_| "switch0".into());
            (format!("kind = \"single_switch\"\nhosts = {n}\n"), n)
        }
        1 => {
            let n = 1 + rng.below(3) as u32;
            host_links(&mut links, 2 * n, |h| if h < n { "left".into() } else { "right".into() });
            links.push(("left".into(), "right".into()));
            let t = format!(
                "kind = \"dumbbell\"\nhosts_per_side = {n}\nbottleneck_rate_gbps = {core_gbps}\nbottleneck_delay_us = {core_delay}\n"
            );
            (t, 2 * n)
        }
        2 => {
            let (racks, per, spines) = (2 + rng.below(2) as u32, 1 + rng.below(3) as u32, 1 + rng.below(3) as u32);
            host_links(&mut links, racks * per, |h| format!("tor{}", h / per));
            for r in 0..racks {
                for s in 0..spines {
                    links.push((format!("tor{r}"), format!("spine{s}")));
                }
            }
            (
                format!("kind = \"leaf_spine\"\nracks = {racks}\nhosts_per_rack = {per}\nspines = {spines}\n{core}"),
                racks * per,
            )
        }
        3 | 4 => fat_tree(rng, &mut links, &core),
        5 => three_tier(rng, &mut links, &core),
        _ => {
            let (n, per) = (3 + rng.below(3) as u32, 1 + rng.below(2) as u32);
            host_links(&mut links, n * per, |h| format!("ring{}", h / per));
            links.extend((0..n).map(|i| (format!("ring{i}"), format!("ring{}", (i + 1) % n))));
            (format!("kind = \"ring\"\nswitches = {n}\nhosts_per_switch = {per}\n{core}"), n * per)
        }
    };
    (table + &rates, links, hosts)
}

fn host_links(links: &mut Vec<(String, String)>, hosts: u32, edge_of: impl Fn(u32) -> String) {
    links.extend((0..hosts).map(|h| (format!("host{h}"), edge_of(h))));
}

/// A k = 4 fat tree, whole or with 2 or 3 of its 4 pods (`pods`), 1:1 or 2:1 oversubscribed.
fn fat_tree(rng: &mut Rng, links: &mut Vec<(String, String)>, core: &str) -> (String, u32) {
    let over = 1 + rng.below(2) as u32;
    let pods = *pick(rng, &[2u32, 3, 4]);
    let per_tor = 2 * over;
    host_links(links, pods * 2 * per_tor, |h| format!("tor{}_{}", h / per_tor / 2, h / per_tor % 2));
    for p in 0..pods {
        for a in 0..2 {
            for t in 0..2 {
                links.push((format!("tor{p}_{t}"), format!("agg{p}_{a}")));
            }
            for c in 0..2 {
                links.push((format!("agg{p}_{a}"), format!("core{}", a * 2 + c)));
            }
        }
    }
    let t = format!("kind = \"fat_tree\"\nk = 4\npods = {pods}\noversubscription = {over}\n{core}");
    (t, pods * 2 * per_tor)
}

/// A three-tier Clos with small free counts per tier.
fn three_tier(rng: &mut Rng, links: &mut Vec<(String, String)>, core: &str) -> (String, u32) {
    let (pods, tors, aggs) = (1 + rng.below(3) as u32, 1 + rng.below(2) as u32, 1 + rng.below(2) as u32);
    let (cores, per) = (1 + rng.below(2) as u32, 1 + rng.below(3) as u32);
    let per = if pods * tors * per < 2 { 2 } else { per }; // two hosts at least
    host_links(links, pods * tors * per, |h| format!("tor{}_{}", h / per / tors, h / per % tors));
    for p in 0..pods {
        for a in 0..aggs {
            links.extend((0..tors).map(|t| (format!("tor{p}_{t}"), format!("agg{p}_{a}"))));
            links.extend((0..cores).map(|c| (format!("agg{p}_{a}"), format!("core{}", a * cores + c))));
        }
    }
    let t = format!(
        "kind = \"three_tier\"\npods = {pods}\ntors_per_pod = {tors}\naggs_per_pod = {aggs}\ncores_per_agg = {cores}\n\
         hosts_per_tor = {per}\n{core}"
    );
    (t, pods * tors * per)
}

fn overrides(rng: &mut Rng, links: &[(String, String)], host_gbps: f64) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(4) {
        let (a, b) = pick(rng, links);
        let (a, b) = if rng.bernoulli(0.5) { (a, b) } else { (b, a) };
        let rate = host_gbps * *pick(rng, &[0.1, 0.25, 0.5, 2.0, 4.0]);
        let one_way = rng.bernoulli(0.3);
        s += &format!(
            "[[topology.link_overrides]]\na = \"{a}\"\nb = \"{b}\"\nrate_gbps = {rate}\none_way = {one_way}\n"
        );
    }
    s
}

/// Queue, routing and transport tables a protocol needs to be run as its paper runs it.
fn protocol_tables(rng: &mut Rng, protocol: &str) -> String {
    let (queue, lbs): (String, &[&str]) = match protocol {
        "dctcp" => {
            let limit = 20 + rng.below(200);
            (
                format!("limit_packets = {limit}\necn = \"step\"\necn_k_packets = {}\n", limit / 3 + 1),
                &["ecmp", "spray"],
            )
        }
        "newreno" => (format!("limit_packets = {}\n", 10 + rng.below(200)), &["ecmp", "spray"]),
        "swift" | "dx" | "hull" => (format!("limit_packets = {}\n", 10 + rng.below(200)), &["ecmp", "spray"]),
        "ndp" => (
            "priorities = 2\nlimit_packets = 8\ntrim = true\nscheduling = \"wrr\"\nwrr_weights = [10, 1]\n".into(),
            &["source", "spray"],
        ),
        "phost" => (format!("priorities = 2\nlimit_packets = {}\n", 8 + rng.below(20)), &["source", "spray"]),
        "sird" => (
            "priorities = 2\nlimit_bytes = 500000\n[queue.fabric]\necn = \"step\"\necn_k_bytes = 60000\n".into(),
            &["spray", "ecmp"],
        ),
        "homa" => (format!("priorities = 8\nlimit_packets = {}\n", 20 + rng.below(300)), &["spray", "ecmp"]),
        "dcpim" => (format!("priorities = 3\nlimit_packets = {}\n", 8 + rng.below(200)), &["spray", "ecmp"]),
        "dcqcn" | "timely" | "dctcp_rate" | "hpcc" | "rcp" | "dart" => {
            let limit = 20 + rng.below(300);
            let ecn = match protocol {
                "dcqcn" => format!(
                    "ecn = \"red\"\necn_at = \"{}\"\nred_min_packets = {}\nred_max_packets = {}\nred_pmax = 0.2\n",
                    pick(rng, &["enqueue", "dequeue"]),
                    limit / 8 + 1,
                    limit / 2 + 2
                ),
                "dctcp_rate" | "dart" => format!("ecn = \"step\"\necn_k_packets = {}\n", limit / 3 + 1),
                _ => String::new(),
            };
            (format!("limit_packets = {limit}\n{ecn}"), &["ecmp", "spray"])
        }
        "expresspass" => (format!("limit_packets = {}\n", 10 + rng.below(250)), &["ecmp", "spray"]),
        "mptcp" => (format!("limit_packets = {}\n", 10 + rng.below(200)), &["source", "ecmp", "spray"]),
        // A protocol this test does not know yet: plain queues; a routing mode it rejects shows as
        // a spec error naming it (add its settings here).
        _ => ("limit_packets = 100\n".into(), &["ecmp", "spray", "source"]),
    };
    let lb = pick(rng, lbs);
    let extra = match protocol {
        "dcqcn" | "timely" | "dctcp_rate" | "hpcc" | "rcp" | "dart" => {
            let int = match protocol {
                "hpcc" => "[switch]\nint = true\n",
                "rcp" => "[switch]\nrcp = true\n",
                "dart" if rng.bernoulli(0.5) => "[switch]\niofd = true\niofd_threshold_bytes = 3000\n",
                _ => "",
            };
            format!("recovery = \"{}\"\n{int}", pick(rng, &["go_back_n", "irn"]))
        }
        // Half the ECN window protocols answer as ns-2 does: alpha from 0, windows under one packet.
        "dctcp" | "hull" => {
            let ns2 = if rng.bernoulli(0.5) { "initial_alpha = 0.0\nwindow_floor = \"none\"\n" } else { "" };
            let switch = if protocol == "hull" { "[switch]\nphantom_queue = true\n" } else { "" };
            format!("{ns2}{switch}")
        }
        "mptcp" => format!("subflows = {}\nrto_jitter = {}\n", 1 + rng.below(8), pick(rng, &["0.0", "0.5"])),
        _ => String::new(),
    };
    format!("[queue]\n{queue}[routing]\nload_balancing = \"{lb}\"\n[transport]\nprotocol = \"{protocol}\"\n{extra}")
}

fn workload(rng: &mut Rng, hosts: u32, duration_us: f64, case: &str) -> String {
    let mut w = String::new();
    if rng.bernoulli(0.6) {
        let cdf = pick(rng, &["websearch", "fb_hadoop", "datamining"]);
        let load = 0.1 + 0.6 * rng.uniform();
        w += &format!("[[workload]]\nkind = \"poisson\"\nload = {load:.2}\ncdf = \"{cdf}\"\n");
    }
    if w.is_empty() || rng.bernoulli(0.5) {
        let flows: Vec<(u32, u32, u64, f64)> = (0..1 + rng.below(20))
            .map(|_| {
                let src = rng.below(hosts as u64) as u32;
                let dst = (src + 1 + rng.below(hosts as u64 - 1) as u32) % hosts;
                let size = *pick(rng, &[1u64, 100, 1436, 1437, 9000, 30_000, 200_000, 1_000_000]);
                (src, dst, size, (rng.uniform() * duration_us * 0.5 * 100.0).round() / 100.0)
            })
            .collect();
        w += &format!("[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n", flow_file(case, &flows).display());
    }
    if hosts > 2 && rng.bernoulli(0.3) {
        let senders = 1 + rng.below(hosts as u64 - 2);
        w += &format!("[[workload]]\nkind = \"incast\"\nsenders = {senders}\nsize_bytes = 50000\nat_us = 10.0\n");
    }
    w
}

fn random_spec(rng: &mut Rng, protocol: &str, case: &str) -> String {
    let host_gbps = *pick(rng, &[10.0, 25.0, 40.0, 100.0]);
    let (topo, links, hosts) = topology(rng, host_gbps);
    let duration_us = *pick(rng, &[300.0, 800.0, 1500.0]);
    let warmup_us = if rng.bernoulli(0.5) { 0.0 } else { (duration_us * 0.2 * rng.uniform()).round() };
    let mtu = *pick(rng, &[1500, 4000, 9000]);
    let mut net = format!("mtu_bytes = {mtu}\n");
    if rng.bernoulli(0.3) {
        net += &format!("nic_pacing_gbps = {}\n", host_gbps * *pick(rng, &[0.3, 0.5, 0.9]));
    }
    if rng.bernoulli(0.3) {
        net += "switch_latency_us = 0.25\n";
    }
    let sample = *pick(rng, &[1.0, 7.5, 10.0, 50.0]);
    let loss = *pick(rng, &[0.0, 0.0, 0.0, 0.001, 0.01]);
    format!(
        "seed = {}\nduration_us = {duration_us}\n[measure]\nwarmup_us = {warmup_us}\n[net]\n{net}\
         [metrics]\nsample_interval_us = {sample}\n[topology]\n{topo}loss_probability = {loss}\n{}{}{}",
        rng.below(1000),
        overrides(rng, &links, host_gbps),
        protocol_tables(rng, protocol),
        workload(rng, hosts, duration_us, case),
    )
}

#[test]
fn random_runs_hold_every_invariant() {
    let cases: u64 = std::env::var("DCNSIM_RANDOM_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let seed: u64 = std::env::var("DCNSIM_RANDOM_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    for (protocol, _) in
        dcnsim_core::transport::protocols().into_iter().filter(|p| std::env::var("ONLY").map_or(true, |o| o == p.0))
    {
        let mut rng = Rng::for_component(seed, protocol);
        for i in 0..cases {
            let case = format!("random-{protocol}-{seed}-{i}");
            let text = random_spec(&mut rng, protocol, &case);
            let out = match dcnsim_core::api::run(&spec(&text), &Default::default()) {
                Ok(out) => out,
                Err(e) => panic!("{case} failed: {e}\n{text}"),
            };
            if std::env::var_os("DCNSIM_RANDOM_VERBOSE").is_some() {
                println!(
                    "{case}: {} flows, {} finished, {} events",
                    out.flows.rows(),
                    out.summary["flows"]["finished"],
                    out.summary["events"]
                );
            }
            let checked = std::panic::catch_unwind(|| check_invariants(&out));
            if checked.is_err() {
                panic!("{case} broke an invariant (see above)\n{text}");
            }
        }
    }
}
