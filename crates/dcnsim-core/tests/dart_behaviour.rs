//! Dart's in-order flow deflection in whole runs: short messages deflected around a congested
//! uplink arrive in order (the go-back-N receiver NACKs any gap: none), every one completes at its
//! own receiver (a packet deflected to a host would never complete its flow), misroutes stay
//! within the token budget (one token: one misrouting switch per message), zero tokens stop
//! deflection and a one-entry table fills.
mod common;
use common::*;
use dcnsim_core::metrics::table::Column;
use dcnsim_core::scenario::RunOutput;

/// Rack 0's four hosts send long flows to rack 1 over four spines (ECMP piles some on one uplink)
/// while 8 KB messages go from rack 0 to rack 1 and back, one every 0.25 us.
fn run_iofd(switch: &str, transport: &str) -> RunOutput {
    let mut flows: Vec<(u32, u32, u64, f64)> = (0..4).map(|s| (s, 4 + s, 1_000_000_000, 0.0)).collect();
    for k in 0..40 {
        let t = 5.0 + 0.25 * k as f64;
        flows.push((k % 4, 4 + (k + 1) % 4, 8_000, t));
        flows.push((4 + k % 4, k % 4, 8_000, t + 1.0));
    }
    let f = flow_file(&format!("dart-iofd-{}-{}", switch.len(), transport.len()), &flows);
    run_checked(&spec(&format!(
        "seed = 11\nduration_us = 400.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\n\
         spines = 4\nhost_rate_gbps = 100.0\ncore_rate_gbps = 100.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0\n\
         [queue]\nlimit_bytes = 4000000\necn = \"step\"\necn_k_bytes = 22500\n[switch]\n{switch}\n\
         [transport]\nprotocol = \"dart\"\n{transport}\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

fn transport(out: &RunOutput, name: &str) -> u64 {
    out.summary["transport"][name].as_u64().unwrap_or_else(|| panic!("{name}: {}", out.summary["transport"]))
}

fn iofd(out: &RunOutput, name: &str) -> u64 {
    out.summary["iofd"][name].as_u64().unwrap_or_else(|| panic!("{name}: {}", out.summary["iofd"]))
}

fn short_flows_done(out: &RunOutput) -> usize {
    let size = u64s(&out.flows, "size_bytes");
    let Some(Column::OptU64(fct)) = out.flows.get("fct_ps") else { panic!("fct_ps column") };
    (0..size.len()).filter(|&i| size[i] == 8_000 && fct[i].is_some()).count()
}

#[test]
fn deflected_messages_arrive_in_order_at_their_own_receivers() {
    let out = run_iofd("iofd = true", "dasr = false");
    let deflections = iofd(&out, "deflections");
    eprintln!("iofd: {}", out.summary["iofd"]);
    assert!(deflections > 0, "the congested uplink made the switches deflect");
    assert_eq!(transport(&out, "nacks_sent"), 0, "no packet arrived out of order");
    assert_eq!(transport(&out, "retransmitted_packets"), 0);
    assert_eq!(short_flows_done(&out), 80, "every short message reached its receiver");
    // Every misroute spent a token: at most 4 per packet of the 80 eight-packet messages.
    let packets_per_message = 8_000u64.div_ceil(1436);
    assert!(iofd(&out, "misrouted_packets") <= 4 * 80 * packets_per_message);
    // The whole message follows its start packet: misrouted packets come in whole messages.
    assert!(iofd(&out, "misrouted_packets") >= deflections * packets_per_message);
}

#[test]
fn a_one_entry_table_fills_and_tokens_bound_deflection() {
    let full = run_iofd("iofd = true\niofd_table_entries = 1", "dasr = false");
    let wide = run_iofd("iofd = true", "dasr = false");
    eprintln!("1 entry: {}; 8 entries: {}", full.summary["iofd"], wide.summary["iofd"]);
    assert!(iofd(&full, "dft_full") > 0, "one entry: start packets found the table full");
    assert!(iofd(&full, "dft_full") > iofd(&wide, "dft_full"));
    let none = run_iofd("iofd = true", "dasr = false\ndeflection_tokens = 0");
    assert_eq!(iofd(&none, "deflections"), 0, "no tokens, no deflection");
    // One token: a message is misrouted at one switch at most, with all its packets.
    let one = run_iofd("iofd = true", "dasr = false\ndeflection_tokens = 1");
    let packets_per_message = 8_000u64.div_ceil(1436);
    assert!(iofd(&one, "deflections") > 0);
    assert_eq!(iofd(&one, "misrouted_packets"), iofd(&one, "deflections") * packets_per_message);
}

#[test]
fn iofd_keys_need_iofd_on() {
    let Err(err) = dcnsim_core::scenario::run(
        &spec(
            "seed = 1\nduration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n[switch]\n\
             iofd_threshold_bytes = 5000\n[transport]\nprotocol = \"dart\"\n[[workload]]\nkind = \"incast\"\n\
             senders = 1\nsize_bytes = 1000\nat_us = 0.0\n",
        ),
        &Default::default(),
    ) else {
        panic!("iofd_threshold_bytes without iofd ran")
    };
    let err = err.to_string();
    assert!(err.contains("switch.iofd_threshold_bytes") && err.contains("iofd = true"), "{err}");
}

/// Dart's fractions of line rate follow the key naming convention (`<what>_rate_fraction`): the
/// old names fail with the new one, and out-of-range values name their key.
#[test]
fn dart_rate_fraction_keys_are_checked_and_old_names_fail() {
    let base = "duration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 100.0\n\
                [queue]\necn = \"step\"\necn_k_bytes = 22500\n[[workload]]\nkind = \"flow_list\"\n\
                flows = [[0, 1, 1000, 0.0]]\n[transport]\nprotocol = \"dart\"\n";
    let cases = [
        ("throughput_fraction = 0.9", "transport.throughput_fraction", "renamed to `throughput_rate_fraction`"),
        ("apportion_fraction = 1.0", "transport.apportion_fraction", "renamed to `apportion_rate_fraction`"),
        ("throughput_rate_fraction = 0.0", "transport.throughput_rate_fraction", "(0, 1]"),
        ("apportion_rate_fraction = 1.5", "transport.apportion_rate_fraction", "(0, 1]"),
    ];
    let failures = spec_error_mismatches(
        cases.map(|(line, field, msg)| (line.to_string(), spec(&format!("{base}{line}\n")), field.into(), msg.into())),
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
