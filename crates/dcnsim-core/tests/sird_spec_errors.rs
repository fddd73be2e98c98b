//! Bad SIRD parameters give spec errors that name the field; the defaults are documented.
mod common;
use common::spec_error_mismatches;
use dcnsim_core::api::{describe, run, RunOptions};

const BASE: &str = r#"
seed = 1
duration_us = 100.0
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 2
host_rate_gbps = 100.0
core_rate_gbps = 400.0
[queue]
priorities = 2
[queue.fabric]
ecn = "step"
ecn_k_bytes = 114000
[routing]
load_balancing = "spray"
[transport]
protocol = "sird"
[[workload]]
kind = "poisson"
load = 0.5
cdf = "fb_hadoop_w4"
"#;

/// The base spec with `key = value` set in `[section]`.
fn with(section: &str, key: &str, value: toml::Value) -> serde_json::Value {
    let mut t: toml::Table = toml::from_str(BASE).unwrap();
    t.get_mut(section).unwrap().as_table_mut().unwrap().insert(key.into(), value);
    serde_json::to_value(t).unwrap()
}

#[test]
fn bad_sird_parameters_name_the_field() {
    use toml::Value as V;
    let s = |x: &str| V::String(x.into());
    let cases: Vec<(&str, &str, V, &str, &str)> = vec![
        ("routing", "load_balancing", s("source"), "transport.protocol", "spray"),
        ("transport", "budget_bdp", V::Float(0.0), "transport.budget_bdp", "(0, 1000]"),
        ("transport", "budget_bdp", s("1.5"), "transport.budget_bdp", "expected a number"),
        ("transport", "sb_max_bdp", V::Float(2.0), "transport.sb_max_bdp", "budget_bdp"),
        ("transport", "sb_max_bdp", V::Float(-1.0), "transport.sb_max_bdp", "(0,"),
        ("transport", "unsch_thr_bdp", V::Float(-0.5), "transport.unsch_thr_bdp", "[0, 1e6]"),
        ("transport", "sthr_bdp", V::Float(-1.0), "transport.sthr_bdp", ">= 0"),
        ("transport", "ce_gain", V::Float(0.0), "transport.ce_gain", "(0, 1]"),
        ("transport", "ce_gain", V::Float(1.5), "transport.ce_gain", "(0, 1]"),
        ("transport", "sender_floor", V::Float(1.5), "transport.sender_floor", "(0, 1]"),
        ("transport", "network_floor", V::Float(0.0), "transport.network_floor", "(0, 1]"),
        ("transport", "additive_increase_mtu", V::Float(0.0), "transport.additive_increase_mtu", "(0, 1000]"),
        ("transport", "receiver_policy", s("fifo"), "transport.receiver_policy", "expected one of: srpt, round_robin"),
        ("transport", "receiver_policy", s("sprt"), "transport.receiver_policy", "did you mean \"srpt\""),
        ("transport", "sender_srpt_share", V::Float(1.5), "transport.sender_srpt_share", "[0, 1]"),
        ("transport", "use_priorities", s("yes"), "transport.use_priorities", "true or false"),
        ("transport", "pace_credits", V::Integer(1), "transport.pace_credits", "true or false"),
        ("transport", "timeout_us", V::Float(0.0), "transport.timeout_us", "(0, 1e7]"),
        ("transport", "timeout_us", V::Float(1e8), "transport.timeout_us", "(0, 1e7]"),
        // Old names point to the new ones.
        ("transport", "priorities", V::Boolean(false), "transport.priorities", "was renamed to `use_priorities`"),
        ("transport", "rto_us", V::Float(100.0), "transport.rto_us", "was renamed to `timeout_us`"),
        ("transport", "bdp_bytes", V::Integer(0), "transport.bdp_bytes", "[1, 2^40]"),
        ("transport", "bdp_bytes", V::Float(1e5), "transport.bdp_bytes", "float"),
        ("transport", "budget_bpd", V::Float(2.0), "transport.budget_bpd", "did you mean `budget_bdp`"),
        ("transport", "init_cwnd_packets", V::Integer(10), "transport.init_cwnd_packets", "unknown key"),
    ];
    let failures = spec_error_mismatches(cases.into_iter().map(|(section, key, value, field, fragment)| {
        (format!("{section}.{key} = {value}"), with(section, key, value), field.to_string(), fragment.to_string())
    }));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_base_spec_and_the_paper_values_are_valid() {
    run(&serde_json::to_value(toml::from_str::<toml::Table>(BASE).unwrap()).unwrap(), &RunOptions::default()).unwrap();
    // ECMP is accepted too, and SThr = inf is written as a huge number.
    run(&with("routing", "load_balancing", toml::Value::String("ecmp".into())), &RunOptions::default()).unwrap();
    let out = run(&with("transport", "sthr_bdp", toml::Value::Float(1e9)), &RunOptions::default()).unwrap();
    assert_eq!(out.summary["protocol"], "sird");
    let t = &out.summary["spec"]["transport"];
    for (k, v) in [
        ("budget_bdp", 1.5),
        ("sb_max_bdp", 1.0),
        ("unsch_thr_bdp", 1.0),
        ("ce_gain", 0.08),
        ("sender_floor", 0.1),
        ("network_floor", 0.03),
        ("sender_srpt_share", 0.5),
    ] {
        assert_eq!(t[k].as_f64(), Some(v), "resolved default of {k}: {t}");
    }
    assert_eq!(t["receiver_policy"], "srpt");
    assert_eq!(t["use_priorities"], true);
    assert_eq!(t["pace_credits"], true);
    assert_eq!(t["timeout_us"].as_f64(), Some(100.0));
}

#[test]
fn every_sird_parameter_is_documented_with_a_default() {
    let d = describe();
    assert!(d.protocols.iter().any(|(name, _)| name == "sird"));
    for key in [
        "bdp_bytes",
        "budget_bdp",
        "sb_max_bdp",
        "unsch_thr_bdp",
        "sthr_bdp",
        "ce_gain",
        "sender_floor",
        "network_floor",
        "additive_increase_mtu",
        "receiver_policy",
        "sender_srpt_share",
        "use_priorities",
        "pace_credits",
        "timeout_us",
    ] {
        let p = d
            .params
            .iter()
            .find(|p| p.path == format!("transport.{key}"))
            .unwrap_or_else(|| panic!("{key} undocumented"));
        assert!(p.doc.starts_with("[sird]"), "{key}: {}", p.doc);
        assert!(p.default.is_some(), "{key} has a default");
    }
    for old in ["priorities", "rto_us"] {
        assert!(!d.params.iter().any(|p| p.path == format!("transport.{old}")), "{old} is still documented");
    }
}
