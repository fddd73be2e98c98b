//! RCP's defining behaviour (Dukkipati and McKeown, CCR 2006): with N long flows on one
//! bottleneck, the rate the routers advertise converges to capacity / N (processor sharing), the
//! link stays busy and the queue stays small; a flow starts at the advertised rate one RTT after
//! its first packet. The advertised rate is read where the senders use it: the flow-state series
//! (`rate_gbps`, the latest echo).
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};

const SETTLE_US: f64 = 3000.0;
/// RCP's d0 on this dumbbell: the base RTT with full packets both ways, 6 x (1.2 + 1) us.
const D0_US: f64 = 13.2;

/// `n` long flows from the left of a 10 Gb/s dumbbell to the right, staggered starts.
fn dumbbell(n: u32, extra: &str) -> RunOutput {
    let flows: Vec<(u32, u32, u64, f64)> = (0..n).map(|i| (i, n + i, 1_000_000_000, 1.0 + 50.0 * i as f64)).collect();
    let f = flow_file(&format!("rcp-dumbbell-{n}-{}", extra.len()), &flows);
    run_checked(&spec(&format!(
        "seed = 5\nduration_us = 8000.0\n[measure]\nwarmup_us = {SETTLE_US}\n[topology]\nkind = \"dumbbell\"\n\
         hosts_per_side = {n}\nhost_rate_gbps = 10.0\nbottleneck_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
         bottleneck_delay_us = 1.0\n[queue]\nlimit_packets = 400\n[switch]\nrcp = true\n{extra}\n[transport]\n\
         protocol = \"rcp\"\n[trace]\nflows = [{}]\nstate_interval_us = 5.0\n[[workload]]\nkind = \"flow_list\"\n\
         path = \"{}\"\n",
        (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
        f.display()
    )))
}

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        _ => panic!("column {name} is not categorical"),
    }
}

/// Per traced flow, the mean of `rate_gbps` after the settling time.
fn settled_rates(out: &RunOutput, n: u32) -> Vec<f64> {
    let t = &out.flow_state;
    let (time, value, flow) = (u64s(t, "time_ps"), f64s(t, "value"), u64s(t, "flow_id"));
    let var = cats(t, "variable");
    (0..n as u64)
        .map(|f| {
            let v: Vec<f64> = (0..t.rows())
                .filter(|&i| flow[i] == f && var[i] == "rate_gbps" && time[i] as f64 >= SETTLE_US * 1e6)
                .map(|i| value[i])
                .collect();
            assert!(v.len() > 100, "flow {f}: too few rate samples: {}", v.len());
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect()
}

#[test]
fn advertised_rate_converges_to_capacity_over_n() {
    for n in [2u32, 4, 8] {
        let out = dumbbell(n, "");
        let rates = settled_rates(&out, n);
        let (queue, util, drops) = bottleneck(&out);
        let share = 10.0 / n as f64;
        eprintln!("{n} flows: rates {rates:?} Gb/s (C/N = {share:.3}), queue {queue:.0} B, utilization {util:.4}");
        // Equilibrium of R (1 + (T/d0)(alpha (C - y) - beta q / d0) / C): alpha (C - y) = beta q / d0,
        // so N R falls short of C by (beta / alpha) q / d0, q the (randomly sampled) mean queue.
        let shortfall = (1.0 / 0.1) * queue * 8.0 / (D0_US * 1e3);
        let total: f64 = rates.iter().sum();
        assert!(
            (total + shortfall - 10.0).abs() < 0.2,
            "{n} flows: N R = {total} Gb/s, queue term {shortfall} Gb/s, C = 10 Gb/s"
        );
        for (f, r) in rates.iter().enumerate() {
            assert!(n > 4 || (r - share).abs() < 0.1 * share, "{n} flows: flow {f} settles at {r} Gb/s, C/N = {share}");
            assert!((r - total / n as f64).abs() < 0.01 * share, "{n} flows: flow {f} at {r} Gb/s: not one rate");
        }
        assert!((util - total / 10.0).abs() < 0.02, "{n} flows: utilization {util}, N R / C = {}", total / 10.0);
        assert_eq!(drops, 0, "{n} flows: the queue term drains what the starts pile up");
        assert!(queue < 15_000.0, "{n} flows: mean queue {queue} B (the queue term keeps it near empty)");
    }
}

#[test]
fn without_the_queue_term_the_rate_is_capacity_over_n_and_a_queue_stands() {
    for n in [2u32, 8] {
        let out = dumbbell(n, "rcp_beta = 0.0");
        let rates = settled_rates(&out, n);
        let (queue, util, _) = bottleneck(&out);
        let share = 10.0 / n as f64;
        eprintln!("beta 0, {n} flows: rates {rates:?} Gb/s, queue {queue:.0} B, utilization {util:.4}");
        // ...but nothing drains the queue the starts built (each new flow starts at R): it stands.
        assert!(queue > 50_000.0, "{n} flows: mean queue {queue} B");
        for (f, r) in rates.iter().enumerate() {
            assert!((r - share).abs() < 0.02 * share, "{n} flows: flow {f} settles at {r} Gb/s, C/N = {share}");
        }
    }
}

#[test]
fn rcp_needs_rcp_switches_and_runs_alone() {
    let base = "duration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
                host_delay_us = 1.0\n[[workload]]\nkind = \"flow_list\"\nflows = [[0, 1, 1000, 0.0]]\n";
    let case = |what: &str, extra: &str, field: &str, fragment: &str| {
        (what.to_string(), spec(&format!("{base}{extra}")), field.to_string(), fragment.to_string())
    };
    let failures = spec_error_mismatches([
        case("no rcp switches", "[transport]\nprotocol = \"rcp\"\n", "transport.protocol", "[switch] rcp = true"),
        case("rcp switches, dctcp", "[switch]\nrcp = true\n[transport]\nprotocol = \"dctcp\"\n", "switch.rcp", "dctcp"),
        case(
            "rcp key without rcp",
            "[switch]\nrcp_alpha = 0.2\n[transport]\nprotocol = \"dctcp\"\n",
            "switch.rcp_alpha",
            "only used with rcp = true",
        ),
        case(
            "bad alpha",
            "[switch]\nrcp = true\nrcp_alpha = 0.0\n[transport]\nprotocol = \"rcp\"\n",
            "switch.rcp_alpha",
            "(0, 10]",
        ),
    ]);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn r_recovers_across_an_idle_spell() {
    // An 8-sender burst into host 0 drives R far down; then the fabric idles (the update timer
    // stops) until a lone flow starts at 3 ms: its very first packet learns the full link, as the
    // missed idle intervals are applied when traffic returns, before that packet is stamped.
    let mut flows: Vec<(u32, u32, u64, f64)> = (1..=8).map(|h| (h, 0, 200_000, 0.0)).collect();
    flows.push((1, 0, 2_000_000, 3000.0));
    let f = flow_file("rcp-idle", &flows);
    let out = run_checked(&spec(&format!(
        "seed = 3\nduration_us = 6000.0\n[topology]\nkind = \"single_switch\"\nhosts = 9\nhost_rate_gbps = 10.0\n\
         host_delay_us = 1.0\n[queue]\nlimit_packets = 400\n[switch]\nrcp = true\n[transport]\nprotocol = \"rcp\"\n\
         [trace]\nflows = [0, 8]\nstate_interval_us = 1.0\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )));
    let t = &out.flow_state;
    let (time, value) = (u64s(t, "time_ps"), f64s(t, "value"));
    let var = cats(t, "variable");
    let flow = u64s(t, "flow_id");
    let burst_min = (0..t.rows())
        .filter(|&i| var[i] == "rate_gbps" && flow[i] == 0)
        .map(|i| value[i])
        .fold(f64::INFINITY, f64::min);
    assert!(burst_min < 2.0, "the burst drove R down to {burst_min} Gb/s");
    // The rate its first packet brought back (its ACK returns at ~3006.5 us; the second packet,
    // sent at that rate, is not answered before 3012 us even at line rate).
    let learned: Vec<f64> = (0..t.rows())
        .filter(|&i| var[i] == "rate_gbps" && flow[i] == 8)
        .filter(|&i| (3007.5e6..3012e6).contains(&(time[i] as f64)))
        .map(|i| value[i])
        .collect();
    assert!(!learned.is_empty() && learned.iter().all(|&r| r > 9.9), "the late flow's first learned rate: {learned:?}");
    let finished = &out.summary["flows"]["finished"];
    assert_eq!(finished.as_u64(), Some(9), "{finished}");
}
