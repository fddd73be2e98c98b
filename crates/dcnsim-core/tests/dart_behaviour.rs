//! Dart's in-order flow deflection in whole runs: short messages deflected around a congested
//! uplink arrive in order (the go-back-N receiver NACKs any gap: none), every one completes at its
//! own receiver (a packet deflected to a host would never complete its flow), misroutes stay
//! within the token budget (one token: one misrouting switch per message), zero tokens stop
//! deflection and a one-entry table fills.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::Column;

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
    (0..size.len()).filter(|&i| size[i] == 8_000 && fct.get(i).is_some()).count()
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
    let Err(err) = dcnsim_core::api::run(
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
        ("control_window_us = 0.0", "transport.control_window_us", "(0, 1e7]"),
        ("apportion_after_control = 1", "transport.apportion_after_control", "true or false"),
    ];
    let failures = spec_error_mismatches(
        cases.map(|(line, field, msg)| (line.to_string(), spec(&format!("{base}{line}\n")), field.into(), msg.into())),
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn an_iofd_ceiling_must_lie_above_the_threshold() {
    let Err(err) = dcnsim_core::api::run(
        &spec(
            "seed = 1\nduration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n[switch]\n\
             iofd = true\niofd_ceiling_bytes = 10000\n[transport]\nprotocol = \"dart\"\n[[workload]]\nkind = \"incast\"\n\
             senders = 1\nsize_bytes = 1000\nat_us = 0.0\n",
        ),
        &Default::default(),
    ) else {
        panic!("a ceiling below the 15 KB threshold ran")
    };
    let err = err.to_string();
    assert!(err.contains("switch.iofd_ceiling_bytes") && err.contains("above iofd_threshold_bytes"), "{err}");
}

/// A 3-switch ring whose ring2-ring1 link is degraded to 2.5 Gbps (the rest 40 Gbps, hosts 10 Gbps;
/// two hosts a switch). A long flow (not deflectable) from ring2 to ring1 fills the slow link's
/// queue; then a 1000-byte message takes the same way, is deflected by ring2 round ring0 and
/// crosses two fast links instead of the slow one: faster than its only equal-cost path allows.
/// Its ideal is the fastest walk's (`metrics/ideal_deflected.rs`), which it meets exactly; before,
/// the run failed, the flow beating its equal-cost ideal (random-dart-1-162).
#[test]
fn a_message_deflected_onto_a_faster_route_than_the_equal_cost_one_meets_its_ideal() {
    let f = flow_file("dart-iofd-ring", &[(5, 3, 10_000_000, 0.0), (4, 2, 1_000, 20.0)]);
    let out = run_checked(&spec(&format!(
        "seed = 3\nduration_us = 60.0\n[topology]\nkind = \"ring\"\nswitches = 3\nhosts_per_switch = 2\n\
         host_rate_gbps = 10.0\nhost_delay_us = 0.2\ncore_rate_gbps = 40.0\ncore_delay_us = 0.1\n\
         [[topology.link_overrides]]\na = \"ring1\"\nb = \"ring2\"\nrate_gbps = 2.5\n\
         [queue]\nlimit_packets = 200\necn = \"step\"\necn_k_packets = 60\n[switch]\niofd = true\n\
         iofd_threshold_bytes = 3000\n[transport]\nprotocol = \"dart\"\ndasr = false\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )));
    assert_eq!(iofd(&out, "deflections"), 1, "{}", out.summary["iofd"]);
    let (fct, ideal) =
        (opt_u64s(&out.flows, "fct_ps")[1].expect("the message finished"), u64s(&out.flows, "ideal_fct_ps")[1]);
    // 1064 bytes on the wire: 851.2 ns at 10 Gbps, 212.8 ns at 40 Gbps, 3404.8 ns at 2.5 Gbps.
    let equal_cost = 2 * 851_200 + 3_404_800 + 500_000;
    let round_the_ring = 2 * 851_200 + 2 * 212_800 + 600_000;
    assert_eq!(ideal, round_the_ring);
    assert!(fct < equal_cost, "deflected round the ring: {fct} ps");
    assert_eq!(fct, ideal, "alone on the fast links: exactly the ideal");
}
