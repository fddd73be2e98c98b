//! Homa's signature effect (Montazeri et al., SIGCOMM'18, sections 3.2-3.4): a short message
//! reaching a receiver whose downlink is queued up with the granted data of long messages
//! bypasses that queue through its higher priority, finishing near the ideal; without priority
//! classes it waits behind the queue that overcommitment builds.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

/// Four 2 MB messages from hosts 1-4 to host 0 from t = 0 (all granted at once: overcommitment 7),
/// and a 3 KB message from host 5 to host 0 at 300 us, while the long ones are in flight.
fn run_with(priorities: u32) -> RunOutput {
    let mut flows: Vec<(u32, u32, u64, f64)> = (1..=4).map(|s| (s, 0, 2_000_000, 0.0)).collect();
    flows.push((5, 0, 3_000, 300.0));
    let f = flow_file(&format!("homa-preempt-{priorities}"), &flows);
    run_checked(&spec(&format!(
        "seed = 1\nduration_us = 20000.0\n[topology]\nkind = \"single_switch\"\nhosts = 6\nhost_rate_gbps = 10.0\n\
         host_delay_us = 2.0\n[queue]\npriorities = {priorities}\n[transport]\nprotocol = \"homa\"\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

#[test]
fn a_short_message_preempts_long_ones_at_the_receiver_through_priorities() {
    // One full packet at 10 Gb/s: 1500 B in 1.2 us.
    let packet_ps = 1_200_000;
    let mut short = Vec::new();
    for priorities in [8, 1] {
        let out = run_with(priorities);
        let (fct, ideal) = (opt_u64s(&out.flows, "fct_ps"), u64s(&out.flows, "ideal_fct_ps"));
        assert!(fct.iter().all(|f| f.is_some()), "every message finishes");
        let long_end = (0..4).map(|i| fct[i].unwrap()).min().unwrap();
        assert!(long_end > 300_000_000 + fct[4].unwrap(), "the long messages are still in flight");
        short.push((fct[4].unwrap(), ideal[4]));
    }
    let ((with, ideal), (without, _)) = (short[0], short[1]);
    eprintln!("short message FCT: ideal {ideal} ps, 8 classes {with} ps, 1 class {without} ps");
    // With priorities the short message waits at most for the packet in service at each hop.
    assert!(with <= ideal + 2 * packet_ps, "with priorities: FCT {with} ps vs ideal {ideal} ps");
    // Without them it waits behind the long messages' granted data queued at the downlink
    // (3 overcommitted messages' RTTbytes beyond the one the link drains).
    assert!(without >= ideal + 4 * packet_ps, "one class: FCT {without} ps vs ideal {ideal} ps");
}

const BASE: &str = "seed = 1\nduration_us = 100.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\n\
    spines = 2\nhost_rate_gbps = 100.0\ncore_rate_gbps = 400.0\n[queue]\npriorities = 8\n[routing]\n\
    load_balancing = \"spray\"\n[transport]\nprotocol = \"homa\"\n\
    [[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fb_hadoop_w4\"\n";

#[test]
fn bad_homa_parameters_name_the_field() {
    use toml::Value as V;
    let with = |section: &str, key: &str, value: V| {
        let mut t: toml::Table = toml::from_str(BASE).unwrap();
        t.get_mut(section).unwrap().as_table_mut().unwrap().insert(key.into(), value);
        serde_json::to_value(t).unwrap()
    };
    let list = |v: &[i64]| V::Array(v.iter().map(|&x| V::Integer(x)).collect());
    let cases: Vec<(&str, &str, V, &str, &str)> = vec![
        ("routing", "load_balancing", V::String("source".into()), "transport.protocol", "spray"),
        ("transport", "priority_levels", V::Integer(9), "transport.priority_levels", "[2, 8]"),
        ("transport", "overcommitment", V::Integer(0), "transport.overcommitment", "[1, 1024]"),
        ("transport", "scheduled_levels", V::Integer(8), "transport.scheduled_levels", "[1, priority_levels - 1 = 7]"),
        ("transport", "rtt_bytes", V::Integer(0), "transport.rtt_bytes", "[1, 2^40]"),
        ("transport", "timeout_us", V::Float(0.0), "transport.timeout_us", "(0, 1e7]"),
        ("transport", "pace_grants", V::Integer(1), "transport.pace_grants", "true or false"),
        // Explicit cut-offs need an explicit split.
        (
            "transport",
            "unscheduled_cutoffs_bytes",
            list(&[1000]),
            "transport.unscheduled_cutoffs_bytes",
            "needs scheduled_levels",
        ),
    ];
    let failures = spec_error_mismatches(cases.into_iter().map(|(section, key, value, field, fragment)| {
        (format!("{section}.{key} = {value}"), with(section, key, value), field.to_string(), fragment.to_string())
    }));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Cut-offs against an explicit split: descending, or too many for one unscheduled level.
    let split = |sched: i64, cutoffs: &[i64]| {
        let mut t: toml::Table = toml::from_str(BASE).unwrap();
        let tr = t.get_mut("transport").unwrap().as_table_mut().unwrap();
        tr.insert("scheduled_levels".into(), V::Integer(sched));
        tr.insert("unscheduled_cutoffs_bytes".into(), list(cutoffs));
        serde_json::to_value(&t).unwrap()
    };
    let field = "transport.unscheduled_cutoffs_bytes".to_string();
    let bad = spec_error_mismatches([
        ("descending cut-offs".to_string(), split(4, &[5000, 1000, 20000]), field.clone(), "ascending".to_string()),
        ("one unscheduled level".to_string(), split(7, &[1000]), field, "needs 0 sizes".to_string()),
    ]);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
