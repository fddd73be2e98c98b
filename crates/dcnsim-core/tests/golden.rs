//! Golden outputs: one small, busy spec per protocol whose flow, port and switch tables and
//! transport counters hash to a checked-in value. A refactor must keep every hash; a deliberate
//! change of results updates the hash in its own commit that says why.
//!
//! To print the current hashes: `DCNSIM_GOLDEN_PRINT=1 cargo test --test golden -- --nocapture`.
mod common;
use common::*;

/// FNV-1a, 64 bit: stable across platforms and Rust versions (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Mixed traffic: Poisson arrivals plus an incast overlay, so that queues build, drop, mark or trim.
fn workloads(cdf: &str, load: f64, incast_bytes: u64) -> String {
    format!(
        "[[workload]]\nkind = \"poisson\"\nload = {load}\ncdf = \"{cdf}\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 7\nsize_bytes = {incast_bytes}\nat_us = 200.0\nreceiver = 0\n"
    )
}

/// The rate-based CCs (each also golden with PB-FS on, as `<cc>+pbfs`).
const RATE: [&str; 6] = ["dcqcn", "timely", "dctcp_rate", "hpcc", "rcp", "dart"];

fn golden_spec(protocol: &str) -> String {
    let head = "seed = 7\nduration_us = 1500.0\n[measure]\nwarmup_us = 100.0\n";
    match protocol {
        "dctcp" | "newreno" | "swift" | "dx" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 10.0\n\
             core_rate_gbps = 10.0\n[queue]\nlimit_packets = 40\necn = \"step\"\necn_k_packets = 20\n\
             [transport]\nprotocol = \"{protocol}\"\n{}",
            workloads("fb_hadoop", 0.6, 200_000)
        ),
        // PB-FS over window CCs: postcards in a class above data, initial windows of about one BDP.
        "dctcp+pbfs" | "swift+pbfs" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 10.0\n\
             core_rate_gbps = 10.0\n[queue]\npriorities = 2\nlimit_packets = 40\necn = \"step\"\necn_k_packets = 20\n\
             [switch]\npostcards = true\n[transport]\nprotocol = \"{}\"\nfast_start = \"pbfs\"\n\
             initial_window_packets = 12\ndata_priority = 1\ncontrol_priority = 0\n{}",
            protocol.trim_end_matches("+pbfs"),
            workloads("fb_hadoop", 0.6, 200_000)
        ),
        "hull" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 10.0\n\
             core_rate_gbps = 10.0\n[queue]\nlimit_packets = 40\n[switch]\nphantom_queue = true\n\
             [transport]\nprotocol = \"hull\"\n{}",
            workloads("fb_hadoop", 0.6, 200_000)
        ),
        "ndp" => format!(
            "{head}[net]\nmtu_bytes = 9000\n[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
             [queue]\npriorities = 2\nlimit_packets = 8\ntrim = true\nscheduling = \"wrr\"\nwrr_weights = [10, 1]\n\
             [routing]\nload_balancing = \"source\"\n[transport]\nprotocol = \"ndp\"\n{}",
            workloads("fb_hadoop", 0.7, 300_000)
        ),
        // MPTCP as the NDP paper runs it: 9 KB packets, deep drop-tail queues, subflows on distinct
        // source routes.
        "mptcp" => format!(
            "{head}[net]\nmtu_bytes = 9000\n[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
             [queue]\nlimit_packets = 40\n[routing]\nload_balancing = \"source\"\n\
             [transport]\nprotocol = \"mptcp\"\nsubflows = 4\n{}",
            workloads("fb_hadoop", 0.7, 300_000)
        ),
        "phost" => format!(
            "{head}[net]\nmtu_bytes = 9000\n[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
             [queue]\npriorities = 2\nlimit_packets = 8\n[routing]\nload_balancing = \"spray\"\n\
             [transport]\nprotocol = \"phost\"\n{}",
            workloads("fb_hadoop", 0.7, 300_000)
        ),
        "sird" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 100.0\n\
             core_rate_gbps = 200.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5\n\
             [queue]\npriorities = 2\nlimit_bytes = 300000\n[queue.fabric]\necn = \"step\"\necn_k_bytes = 114000\n\
             [routing]\nload_balancing = \"spray\"\n[transport]\nprotocol = \"sird\"\n{}",
            workloads("fb_hadoop", 0.7, 500_000)
        ),
        "homa" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 100.0\n\
             core_rate_gbps = 200.0\nhost_delay_us = 1.25\ncore_delay_us = 0.5\n\
             [queue]\npriorities = 8\nlimit_bytes = 300000\n\
             [routing]\nload_balancing = \"spray\"\n[transport]\nprotocol = \"homa\"\n{}",
            workloads("fb_hadoop", 0.7, 500_000)
        ),
        "dcpim" => format!(
            "{head}[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\nspines = 2\nhost_rate_gbps = 100.0\n\
             core_rate_gbps = 200.0\nhost_delay_us = 0.65\ncore_delay_us = 0.65\n\
             [queue]\npriorities = 3\nlimit_bytes = 200000\n[routing]\nload_balancing = \"spray\"\n\
             [transport]\nprotocol = \"dcpim\"\n{}",
            workloads("fb_hadoop", 0.7, 500_000)
        ),
        p if RATE.contains(&p.trim_end_matches("+pbfs")) => {
            // `<cc>+pbfs`: the same run with PB-FS (postcards in a class above data).
            let cc = p.trim_end_matches("+pbfs");
            let pbfs = cc != p;
            let (queue, switch) = match cc {
                "dcqcn" => (
                    "ecn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 100000\nred_max_bytes = 400000\n\
                     red_pmax = 0.2\n",
                    "",
                ),
                "dctcp_rate" => ("ecn = \"step\"\necn_k_bytes = 75000\n", ""),
                "hpcc" => ("", "[switch]\nint = true\n"),
                "rcp" => ("", "[switch]\nrcp = true\n"),
                "dart" => ("ecn = \"step\"\necn_k_bytes = 22500\n", "[switch]\niofd = true\n"),
                _ => ("", ""),
            };
            let (pq, ps, pt) = match (pbfs, switch.is_empty()) {
                (false, _) => ("", "", ""),
                (true, empty) => (
                    "priorities = 2\n",
                    if empty { "[switch]\npostcards = true\n" } else { "postcards = true\n" },
                    "fast_start = \"pbfs\"\ndata_priority = 1\ncontrol_priority = 0\n",
                ),
            };
            format!(
                "{head}[net]\nmtu_bytes = 1064\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\n\
                 spines = 2\nhost_rate_gbps = 25.0\ncore_rate_gbps = 50.0\n[queue]\nlimit_bytes = 300000\n\
                 {pq}{queue}{switch}{ps}\
                 [transport]\nprotocol = \"{cc}\"\n{pt}{}",
                workloads("fb_hadoop", 0.6, 200_000)
            )
        }
        "expresspass" => format!(
            "{head}[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\ncore_rate_gbps = 10.0\n\
             [queue]\nlimit_packets = 250\n[transport]\nprotocol = \"expresspass\"\n{}",
            workloads("fb_webserver_xpass", 0.6, 200_000)
        ),
        other => panic!("no golden spec for {other}"),
    }
}

/// Hash of everything a run reports that is a pure function of the spec (no wall times).
fn run_hash(protocol: &str) -> (u64, usize) {
    let out = run_checked(&spec(&golden_spec(protocol)));
    let mut text = out.flows.to_csv();
    text += &out.ports.to_csv();
    text += &out.switches.to_csv();
    text += &out.summary["transport"].to_string();
    text += &out.summary["packets"].to_string();
    if std::env::var_os("DCNSIM_GOLDEN_PRINT").is_some() {
        println!("{protocol}: {} {}", out.summary["transport"], out.summary["packets"]);
    }
    (fnv1a(text.as_bytes()), out.flows.rows())
}

/// (protocol, hash). Update only in a commit that explains why results changed.
const GOLDEN: &[(&str, u64)] = &[
    ("dctcp", 0x1a0f_d00f_53d5_681d),
    ("newreno", 0x8999_a65b_18d8_7205),
    ("ndp", 0xbcaa_18c7_4c79_eec8),
    ("phost", 0x9916_e3a7_175e_93f0),
    ("swift", 0x8759_2cb4_5d06_a1f6),
    ("sird", 0x6a94_7181_bd45_15b4),
    ("dcqcn", 0xf94f_1a4d_daa9_1f5f),
    ("timely", 0x05f1_5d11_8c84_5d05),
    ("dctcp_rate", 0xe536_c67c_c58d_c3da),
    ("hpcc", 0x52a8_16ed_5ea8_2f58),
    ("rcp", 0x04f6_971a_f939_33fe),
    ("dx", 0xb0e6_9a2f_8e01_abdd),
    ("hull", 0x4892_7dab_a464_0553),
    ("dcqcn+pbfs", 0x7407_6d42_0fb1_7936),
    ("timely+pbfs", 0x7fb2_6644_efe0_d590),
    ("dctcp_rate+pbfs", 0xd260_1963_cf5c_5137),
    ("hpcc+pbfs", 0x92cb_8cd0_8e26_a8b5),
    ("dctcp+pbfs", 0xc5ab_6918_2ca3_2a97),
    ("swift+pbfs", 0x1401_87a4_d23b_6329),
    ("dart", 0x1e63_1103_e62d_257e),
    ("expresspass", 0xf581_f950_e19f_e76b),
    ("homa", 0x33c6_f958_3e0f_6ec3),
    ("dcpim", 0xa22e_9b92_badf_afd7),
    ("mptcp", 0x614d_c0ea_ba3f_f1f6),
];

/// The list above is kept by hand: a protocol registered without a golden entry fails here.
#[test]
fn every_registered_protocol_has_a_golden_entry() {
    let missing: Vec<&str> = dcnsim_core::transport::protocols()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !GOLDEN.iter().any(|(g, _)| g == name))
        .collect();
    assert!(missing.is_empty(), "registered protocols without a golden spec and hash: {missing:?}");
}

#[test]
fn every_protocol_reproduces_its_golden_output() {
    let print = std::env::var_os("DCNSIM_GOLDEN_PRINT").is_some();
    let mut wrong = Vec::new();
    for &(protocol, want) in GOLDEN {
        let (got, flows) = run_hash(protocol);
        assert!(flows >= 20, "{protocol}: the golden spec should start many flows, got {flows}");
        if print {
            println!("    (\"{protocol}\", {got:#018x}),");
        }
        if got != want {
            wrong.push(format!("{protocol}: got {got:#018x}, want {want:#018x}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "golden outputs changed (explain why in the commit that updates them):\n{}",
        wrong.join("\n")
    );
}

/// Tracing only watches: each golden spec with a `[trace]` of many of its flows gives the same
/// tables and the same summary (but for wall time, the event count, which includes the state
/// samples, and the spec itself) as without it.
#[test]
fn tracing_does_not_change_results() {
    let flows: Vec<String> = (0..60).step_by(3).map(|f| f.to_string()).collect();
    let trace = format!("[trace]\nflows = [{}]\nstate_interval_us = 1.0\n", flows.join(", "));
    let strip = |mut s: serde_json::Value| {
        for key in [
            "wall_time_s",
            "setup_time_s",
            "events_per_sec",
            "cpu_time_s",
            "events_per_cpu_sec",
            "events",
            "spec",
            "trace",
        ] {
            s.as_object_mut().unwrap().remove(key);
        }
        s
    };
    for &(protocol, _) in GOLDEN {
        let plain = golden_spec(protocol);
        let a = run_checked(&spec(&plain));
        let b = run_checked(&spec(&format!("{plain}{trace}")));
        assert_eq!(a.flows.to_csv(), b.flows.to_csv(), "{protocol}: flows");
        assert_eq!(a.ports.to_csv(), b.ports.to_csv(), "{protocol}: ports");
        assert_eq!(a.switches.to_csv(), b.switches.to_csv(), "{protocol}: switches");
        assert!(b.trace.rows() > 1000 && b.flow_state.rows() > 100, "{protocol}: the trace has rows");
        assert_eq!(b.summary["trace"]["truncated"], false);
        assert_eq!(strip(a.summary), strip(b.summary), "{protocol}: summary");
    }
}
