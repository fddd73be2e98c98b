//! The stage conformance suite: every registered switch stage (`net::pipeline::stages::stages()`),
//! switched on by its own `Stage::CONFORMANCE` fragment, runs with every registered protocol that
//! accepts it (the spec reader takes the protocol's conformance declaration with the stage on; a
//! protocol it refuses is listed), and must pass every case: packet conservation and every flow
//! delivered exactly once (the run invariants of `common::check_invariants`), no loss on a
//! lossless fabric (PFC on every class), its counters in the summary (`stages.NAME`), and
//! determinism (two runs of one seed give the same tables). A new stage is picked up by
//! registering it; nothing here names a stage or a protocol.
mod common;
use common::*;
use dcnsim_core::api::{read_spec, RunOptions, RunOutput};
use dcnsim_core::net::pipeline::stages::{stages, StageInfo};
use dcnsim_core::transport::{conformance, protocols};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Two racks of three hosts under two spines, core links 4x the host links.
const LEAF_SPINE: &str = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 3\nspines = 2\nhost_rate_gbps = 10.0\n\
                          core_rate_gbps = 40.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0";
/// Flows the suite's workload starts.
const FLOWS: usize = 6;
/// PFC on every class, with a shared buffer that makes room for its headroom.
const LOSSLESS: &str = "[switch]\nbuffer_bytes = 4000000\npfc = true\n";

/// Removes every queue-size limit (a shared buffer admits packets at switch ports instead).
fn drop_limits(t: &mut toml::Table) {
    t.remove("limit_bytes");
    t.remove("limit_packets");
    for (_, v) in t.iter_mut() {
        if let toml::Value::Table(sub) = v {
            drop_limits(sub);
        }
    }
}

/// A 4-to-1 incast of long flows plus short cross traffic between the racks, with `protocol`'s
/// conformance fragment and the stage's merged over it (and PFC when `lossless`).
fn stage_spec(stage: &StageInfo, protocol: &str, lossless: bool) -> toml::Table {
    let flows: Vec<_> =
        (2..=5).map(|s| (s, 0, 150_000, 1.0)).chain([(0, 4, 20_000, 5.0), (1, 5, 3_000, 8.0)]).collect();
    let f = flow_file(&format!("stage-conformance-{}-{protocol}-{lossless}", stage.name), &flows);
    let text = format!(
        "seed = 5\nduration_us = 2000000.0\n[topology]\n{LEAF_SPINE}\n[queue]\nlimit_packets = 64\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n[transport]\nprotocol = \"{protocol}\"\n",
        f.display()
    );
    let mut t: toml::Table = toml::from_str(&text).unwrap();
    let declared = conformance(protocol).expect("every registered protocol declares its conformance");
    merge_spec(&mut t, &toml::from_str(declared.spec).expect("a protocol's conformance spec is TOML"));
    merge_spec(&mut t, &toml::from_str(stage.conformance).expect("a stage's conformance spec is TOML"));
    if lossless {
        if let Some(toml::Value::Table(q)) = t.get_mut("queue") {
            drop_limits(q);
        }
        merge_spec(&mut t, &toml::from_str(LOSSLESS).unwrap());
    }
    t
}

fn json(t: &toml::Table) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

/// Every flow finished with exactly its bytes delivered.
fn all_delivered(out: &RunOutput) -> Vec<String> {
    let (ends, sizes, got) =
        (opt_u64s(&out.flows, "end_ps"), u64s(&out.flows, "size_bytes"), u64s(&out.flows, "window_bytes"));
    (0..ends.len())
        .filter(|&i| ends[i].is_none() || got[i] != sizes[i])
        .map(|i| format!("flow {i}: {} of {} bytes delivered, finished: {}", got[i], sizes[i], ends[i].is_some()))
        .collect()
}

/// The stage's counters are in the summary, each a number.
fn counters_present(stage: &StageInfo, out: &RunOutput) -> Vec<String> {
    match out.summary["stages"][stage.name].as_object() {
        Some(c) if !c.is_empty() && c.values().all(|v| v.is_u64()) => Vec::new(),
        _ => vec![format!(
            "summary stages.{} is missing or not a table of counters: {}",
            stage.name, out.summary["stages"]
        )],
    }
}

/// What two runs of one spec must share.
fn fingerprint(out: &RunOutput) -> String {
    format!("{}{}{}{}", out.flows.to_csv(), out.ports.to_csv(), out.summary["stages"], out.summary["packets"])
}

/// Runs the cases for one (stage, protocol) pair on one fabric; the failures.
fn check(stage: &StageInfo, protocol: &str, lossless: bool) -> Vec<String> {
    let spec = json(&stage_spec(stage, protocol, lossless));
    let run = || dcnsim_core::api::run(&spec, &RunOptions::default()).map_err(|e| format!("run failed: {e}"));
    let (first, second) = match (run(), run()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return vec![e],
    };
    check_invariants(&first);
    let mut failures = all_delivered(&first);
    if first.flows.rows() != FLOWS {
        failures.push(format!("{} flows in the table, {FLOWS} started", first.flows.rows()));
    }
    failures.extend(counters_present(stage, &first));
    if fingerprint(&first) != fingerprint(&second) {
        failures.push("two runs of one seed differ".into());
    }
    // Queue drops and PFC headroom overflows (a shaper's credit drops are ExpressPass's design).
    let count = |v: &serde_json::Value| v.as_u64().unwrap_or(u64::MAX);
    let dropped =
        count(&first.summary["queues"]["drops"]).saturating_add(count(&first.summary["pfc"]["lossless_drops"]));
    if lossless && dropped != 0 {
        failures.push(format!("{dropped} packets lost with PFC on every class: {}", first.summary["pfc"]));
    }
    failures
}

/// Runs `check` for every stage with every protocol it accepts (lossy, or lossless with PFC);
/// fails with every failure at once, and when a stage is accepted by no protocol.
fn for_each_stage_and_protocol(lossless: bool) {
    let mut report = Vec::new();
    for stage in stages() {
        let mut accepted = 0;
        for (protocol, _) in protocols() {
            if let Err(e) = read_spec(&json(&stage_spec(&stage, protocol, lossless))) {
                eprintln!("stage conformance: {} does not run with {protocol} (lossless: {lossless}): {e}", stage.name);
                continue;
            }
            accepted += 1;
            let failures = catch_unwind(AssertUnwindSafe(|| check(&stage, protocol, lossless))).unwrap_or_else(|e| {
                let why = e.downcast_ref::<String>().cloned().or(e.downcast_ref::<&str>().map(|s| s.to_string()));
                vec![format!("panicked: {}", why.unwrap_or_default())]
            });
            report.extend(failures.into_iter().map(|f| format!("{} with {protocol}: {f}", stage.name)));
        }
        eprintln!("stage conformance: {} ran with {accepted} protocols (lossless: {lossless})", stage.name);
        if accepted == 0 {
            report.push(format!("{}: no registered protocol runs with it (lossless: {lossless})", stage.name));
        }
    }
    assert!(report.is_empty(), "stage conformance fails:\n{}", report.join("\n"));
}

#[test]
fn every_stage_conserves_packets_delivers_reports_and_repeats_with_every_protocol() {
    for_each_stage_and_protocol(false);
}

#[test]
fn every_stage_loses_nothing_on_a_lossless_fabric() {
    for_each_stage_and_protocol(true);
}

#[test]
fn every_stage_has_a_conformance_fragment_and_a_docs_page() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/stages");
    for stage in stages() {
        let t: toml::Table = toml::from_str(stage.conformance).expect("TOML");
        assert!(t.contains_key("switch"), "{}: the fragment sets no [switch] key", stage.name);
        let page = docs.join(format!("{}.md", stage.name));
        assert!(page.is_file(), "{}: no docs page {}", stage.name, page.display());
    }
}
