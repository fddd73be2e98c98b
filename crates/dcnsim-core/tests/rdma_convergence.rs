//! How fast the RDMA congestion controls converge, as the HPCC paper compares them (SIGCOMM'19,
//! section 2.3 and 5: HPCC converges within a few RTTs, DCQCN and TIMELY take far longer), and HPCC's
//! fairness among eight flows. One 100 Gb/s switch, 1 us links (a base RTT of about 4 us), the HPCC
//! authors' ns-3 settings (1000 B payloads, their marking for DCQCN). Rates come from the flow state
//! series (`[trace] state_interval_us`).
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};

/// The reference's DCQCN marking at 100 Gb/s (Kmin 400 KB, Kmax 1600 KB, Pmax 0.2, at dequeue).
const RED_100G: &str =
    "ecn = \"red\"\necn_at = \"dequeue\"\nred_min_bytes = 400000\nred_max_bytes = 1600000\nred_pmax = 0.2";
const LINE_GBPS: f64 = 100.0;
/// Sampling period of the rate series (us).
const SAMPLE_US: f64 = 2.0;

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

/// (time in us, rate in Gb/s) of one flow.
fn rates(out: &RunOutput, flow: u64) -> Vec<(f64, f64)> {
    let t = &out.flow_state;
    let (time, fl, var, value) = (u64s(t, "time_ps"), u64s(t, "flow_id"), cats(t, "variable"), f64s(t, "value"));
    (0..t.rows())
        .filter(|&i| fl[i] == flow && var[i] == "rate_gbps")
        .map(|i| (time[i] as f64 / 1e6, value[i]))
        .collect()
}

/// The protocol's switch and transport tables: HPCC needs INT; DCQCN the reference's marking.
fn tables(protocol: &str) -> (&'static str, &'static str) {
    match protocol {
        "hpcc" => ("", "[switch]\nint = true"),
        "dcqcn" => (RED_100G, ""),
        _ => ("", ""),
    }
}

/// Long flows from hosts 1.. into host 0 on one 100 Gb/s switch, flow i starting at `starts[i]` us.
fn run(protocol: &str, starts: &[f64], duration_us: f64, warmup_us: f64) -> RunOutput {
    let flows: Vec<_> = starts.iter().enumerate().map(|(i, &s)| (i as u32 + 1, 0, 1_000_000_000_000, s)).collect();
    let f = flow_file(&format!("conv-{protocol}-{}", starts.len()), &flows);
    let traced: Vec<String> = (0..flows.len()).map(|i| i.to_string()).collect();
    let (queue, switch) = tables(protocol);
    run_checked(&spec(&format!(
        "seed = 3\nduration_us = {duration_us}\n[measure]\nwarmup_us = {warmup_us}\n\
         [net]\nmtu_bytes = 1064\nheader_bytes = 64\n\
         [topology]\nkind = \"single_switch\"\nhosts = {}\nhost_rate_gbps = {LINE_GBPS}\nhost_delay_us = 1.0\n\
         [queue]\n{queue}\n{switch}\n[transport]\nprotocol = \"{protocol}\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n[trace]\nflows = [{}]\nstate_interval_us = {SAMPLE_US}\n",
        flows.len() + 1,
        f.display(),
        traced.join(", ")
    )))
}

/// Time after `join` (us) from which, at every common sample time, the two rates are within `tol`
/// of their mean (|a - b| <= tol (a + b)); None if the last common sample is still outside.
fn split_settled(a: &[(f64, f64)], b: &[(f64, f64)], join: f64, tol: f64) -> Option<f64> {
    let pairs: Vec<(f64, f64, f64)> = a
        .iter()
        .filter(|(t, _)| *t >= join)
        .filter_map(|&(t, x)| b.iter().find(|(u, _)| *u == t).map(|&(_, y)| (t, x, y)))
        .collect();
    let last = pairs.last().expect("common samples after the join").0;
    match pairs.iter().rev().find(|(_, x, y)| (x - y).abs() > tol * (x + y)) {
        None => Some(0.0),
        Some(&(t, _, _)) if t >= last => None,
        Some(&(t, _, _)) => Some(t + SAMPLE_US - join),
    }
}

/// Two flows, the second joining at `join` us: the time (us) until both rates stay within 10% of
/// their mean, and the lone flow's mean rate over the 100 us before the join.
fn two_flow_convergence(protocol: &str, join: f64, end: f64) -> (Option<f64>, f64) {
    let out = run(protocol, &[1.0, join], end, 0.0);
    let (first, second) = (rates(&out, 0), rates(&out, 1));
    let alone: Vec<f64> = first.iter().filter(|(t, _)| *t > join - 100.0 && *t < join).map(|p| p.1).collect();
    let alone = alone.iter().sum::<f64>() / alone.len() as f64;
    let t = split_settled(&first, &second, join, 0.1);
    eprintln!("{protocol}: alone {alone:.2} Gb/s; both within 10% of their mean after {t:?} us");
    (t, alone)
}

#[test]
fn hpcc_converges_within_a_few_rtts_where_dcqcn_and_timely_take_far_longer() {
    // Base RTT: 4 x 1 us of propagation plus serialization, about 4.3 us at 100 Gb/s.
    let (hpcc, alone) = two_flow_convergence("hpcc", 201.0, 600.0);
    assert!((alone - 95.0).abs() < 1.0, "a lone HPCC flow at {alone} Gb/s (eta x line = 95)");
    let hpcc = hpcc.expect("HPCC converges");
    // Measured: 19 us, between 4 and 5 RTTs.
    assert!(hpcc < 8.0 * 4.3, "HPCC took {hpcc} us (more than 8 RTTs)");
    for p in ["dcqcn", "timely"] {
        let (t, _) = two_flow_convergence(p, 201.0, 2000.0);
        // Measured over a 2 ms run: DCQCN 1539 us, TIMELY 1345 us (70-80x HPCC; their rates keep
        // making excursions later, see the rdma-convergence reproduction). Not at all counts as slower.
        let t = t.unwrap_or(f64::INFINITY);
        assert!(t > 20.0 * hpcc, "{p} converged in {t} us, HPCC in {hpcc} us");
    }
}

/// Jain index of the flows' mean rates over [from, to] us.
fn jain_of_rates(out: &RunOutput, flows: u64, from: f64, to: f64) -> (f64, Vec<f64>) {
    let means: Vec<f64> = (0..flows)
        .map(|f| {
            let v: Vec<f64> = rates(out, f).into_iter().filter(|(t, _)| *t >= from && *t <= to).map(|p| p.1).collect();
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect();
    (jain(&means), means)
}

#[test]
fn hpcc_shares_among_eight_flows_with_the_documented_unevenness() {
    // Eight flows into one port, all at once, and eight joining one every 100 us; rates over 1-3 ms.
    // The rates add up to eta x line, but the split is uneven (docs/protocols/hpcc.md: each flow's
    // queue term samples the queue at its own packets' departures, which paced flows hit at fixed
    // phases; one 1064 B packet is 2% of U here). Measured: Jain 0.857 together, 0.611 staggered
    // (the last to join holds 35 Gb/s); over 8-10 ms of a 10 ms run 0.815 and 0.574: it does not
    // even out. The bounds hold today's behaviour: a change that makes it fairer passes, one that
    // makes it worse fails. (Perfect unfairness among 8 is 0.125.)
    for (label, starts, min_jain) in [
        ("together", vec![1.0; 8], 0.8),
        ("staggered", (0..8).map(|i| 1.0 + 100.0 * i as f64).collect::<Vec<_>>(), 0.55),
    ] {
        let out = run("hpcc", &starts, 3000.0, 1000.0);
        let (j, means) = jain_of_rates(&out, 8, 1000.0, 3000.0);
        let sum: f64 = means.iter().sum();
        eprintln!("hpcc 8 flows {label}: Jain of mean rates {j:.3}, sum {sum:.2} Gb/s, {means:.1?}");
        assert!((sum - 95.0).abs() < 2.0, "{label}: rates sum to {sum} Gb/s (eta x line = 95)");
        assert!(j > min_jain, "{label}: Jain {j:.3} of {means:?}");
        assert!(means.iter().all(|&r| r > 3.0), "{label}: a flow starved: {means:?}");
    }
}
