//! ExpressPass's receiver feedback (the authors' ns-2 law) sharing one receiver among n senders
//! (docs/protocols/expresspass.md, "Convergence with many senders"). Two senders settle at the fair
//! share; as n grows, the n flows' increases add n x w x the NIC's credit rate per update, the
//! offered credits overshoot the receiver NIC's credit rate, cuts go deep and each flow is cut to
//! its own measured rate, so the flows spread: ten share the receiver, unevenly within a few RTTs
//! and evenly only over many. Rates are each sender's data packets per 1 ms window, from the flow
//! state trace, on one 10 Gb/s switch (base RTT 10.6 us).
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};

const WINDOW_US: f64 = 1000.0;
const SAMPLE_US: f64 = 2.0;
/// Payload data rate of a 10 Gb/s receiver under ExpressPass: 1460 B of every 1538 B frame, and
/// credits take 84 / (84 + 1538) of the reverse link, so data 1538 / 1622 of this one.
const DATA_GBPS: f64 = 10.0 * 1460.0 / 1622.0;

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

/// n long flows from hosts 1..=n into host 0, all starting together.
fn run(n: u32, duration_us: f64) -> RunOutput {
    let flows: Vec<_> = (1..=n).map(|s| (s, 0, 1_000_000_000_000u64, 0.0)).collect();
    let f = flow_file(&format!("xpass_fan_in_{n}"), &flows);
    let traced: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    run_checked(&spec(&format!(
        "seed = 3\nduration_us = {duration_us}\n[net]\nmtu_bytes = 1538\nheader_bytes = 78\ncontrol_bytes = 84\n\
         [topology]\nkind = \"single_switch\"\nhosts = {}\nhost_rate_gbps = 10.0\nhost_delay_us = 2.0\n\
         [queue]\nlimit_packets = 250\n[transport]\nprotocol = \"expresspass\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n[trace]\nflows = [{}]\nstate_interval_us = {SAMPLE_US}\n",
        n + 1,
        f.display(),
        traced.join(", ")
    )))
}

/// Each flow's payload rate (Gb/s) over consecutive windows of `WINDOW_US` from `from_us` on:
/// rates[window][flow].
fn window_rates(out: &RunOutput, n: u32, from_us: f64, to_us: f64) -> Vec<Vec<f64>> {
    let t = &out.flow_state;
    let (time, flow, var, value) = (u64s(t, "time_ps"), u64s(t, "flow_id"), cats(t, "variable"), f64s(t, "value"));
    let windows = ((to_us - from_us) / WINDOW_US).floor() as usize;
    // Packets sent by each flow at each window edge (the last sample at or before it).
    let mut at_edge = vec![vec![0.0f64; n as usize]; windows + 1];
    for i in (0..t.rows()).filter(|&i| var[i] == "sent_packets") {
        let us = time[i] as f64 / 1e6;
        for (k, edge) in at_edge.iter_mut().enumerate() {
            if us <= from_us + k as f64 * WINDOW_US {
                edge[flow[i] as usize] = value[i];
            }
        }
    }
    (0..windows)
        .map(|k| {
            (0..n as usize).map(|f| (at_edge[k + 1][f] - at_edge[k][f]) * 1460.0 * 8.0 / (WINDOW_US * 1e3)).collect()
        })
        .collect()
}

/// (mean Jain index over the windows, lowest flow's share of the fair share, total Gb/s).
fn sharing(n: u32) -> (f64, f64, f64) {
    let out = run(n, 6000.0);
    let w = window_rates(&out, n, 1000.0, 6000.0);
    let mean_jain = w.iter().map(|r| jain(r)).sum::<f64>() / w.len() as f64;
    let total = w.iter().map(|r| r.iter().sum::<f64>()).sum::<f64>() / w.len() as f64;
    let lowest = w.iter().flatten().cloned().fold(f64::MAX, f64::min) / (total / n as f64);
    eprintln!("{n} senders: Jain over 1 ms windows {mean_jain:.3}, lowest flow {lowest:.2} of the fair share, total {total:.2} Gb/s");
    (mean_jain, lowest, total)
}

/// Measured with this seed (Jain over 1 ms windows, the lowest flow in any window as a fraction of
/// the fair share): two senders 0.993 and 0.82, four 0.945 and 0.48, ten 0.936 and 0.44. The bounds
/// hold that with a margin: a change that makes the sharing fairer passes, one that makes it worse
/// fails; nobody starves, and together the flows fill the receiver (95 % of the data rate).
#[test]
fn senders_into_one_receiver_share_it_evenly_at_two_and_unevenly_at_ten() {
    let cases = [(2u32, 0.98, 0.75), (4, 0.92, 0.35), (10, 0.9, 0.3)];
    let measured: Vec<_> = cases.iter().map(|c| sharing(c.0)).collect();
    for (&(n, min_jain, min_lowest), &(j, lowest, total)) in cases.iter().zip(&measured) {
        assert!(j >= min_jain, "{n} senders: Jain {j:.3} over 1 ms windows, expected >= {min_jain}");
        assert!(lowest >= min_lowest, "{n} senders: a flow fell to {lowest:.2} of its fair share in a 1 ms window");
        assert!(total >= 0.95 * DATA_GBPS, "{n} senders: {total:.2} Gb/s of {DATA_GBPS:.2}");
    }
}
