//! Several transports in one run: workload components name a `[transports.NAME]` setup, packets of
//! every transport share the fabric's queues, and each transport keeps its own state and counters.
mod common;
use common::*;

const FABRIC: &str =
    "seed = 3\nduration_us = 20000.0\n[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 4\n\
                      spines = 2\nhost_rate_gbps = 10.0\ncore_rate_gbps = 10.0\n";

fn dctcp_table(name: &str) -> String {
    format!("[{name}]\nprotocol = \"dctcp\"\ninitial_rto_us = 500.0\n")
}

fn workload(bg_transport: &str) -> String {
    format!(
        "[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fb_hadoop\"\nstop_us = 5000.0\n\
         [[workload]]\nkind = \"incast\"\nsenders = 6\nsize_bytes = 300000\nat_us = 500.0\nreceiver = 0\n{bg_transport}"
    )
}

#[test]
fn two_identical_setups_give_the_same_results_as_one() {
    // Splitting the flows over two DCTCP instances with the same parameters must change nothing:
    // connections are per flow, and timers return to the instance that set them.
    let queue = "[queue]\nlimit_packets = 40\necn = \"step\"\necn_k_packets = 20\n";
    let one = run_checked(&spec(&format!("{FABRIC}{queue}{}{}", dctcp_table("transport"), workload(""))));
    let two = run_checked(&spec(&format!(
        "{FABRIC}{queue}{}{}{}",
        dctcp_table("transport"),
        dctcp_table("transports.incast"),
        workload("transport = \"incast\"\n")
    )));
    assert!(one.flows.rows() > 20);
    assert_eq!(one.flows.to_csv(), two.flows.to_csv());
    assert_eq!(one.ports.to_csv(), two.ports.to_csv());
    let setups = two.summary["transports"].as_array().expect("a multi-transport run lists its setups");
    assert_eq!(setups.len(), 2);
    assert_eq!(setups[1]["name"], "incast");
    // The counters split between the two instances and add up to the single run's.
    let sum = |k: &str| setups.iter().map(|s| s["counters"][k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("retransmitted_packets"), one.summary["transport"]["retransmitted_packets"].as_u64().unwrap());
    assert!(one.summary.get("transports").is_none(), "a one-transport run has no setups list");
}

#[test]
fn dctcp_background_and_ndp_foreground_share_a_trimming_fabric() {
    // NDP needs trimming queues and source routing; DCTCP keeps per-flow ECMP (a per-transport
    // load_balancing override). DCTCP data that a full queue trims arrives as a header, which
    // DCTCP treats as a loss: both kinds of flow must still complete with every byte. DCTCP data
    // goes in class 1, as NDP's: trimming queues keep class 0 for headers and control packets.
    let s = spec(&format!(
        "{FABRIC}[net]\nmtu_bytes = 9000\n[queue]\npriorities = 2\nlimit_packets = 8\ntrim = true\nscheduling = \"wrr\"\n\
         wrr_weights = [10, 1]\n[routing]\nload_balancing = \"source\"\n[transport]\nprotocol = \"ndp\"\n\
         [transports.bg]\nprotocol = \"dctcp\"\nload_balancing = \"ecmp\"\ninitial_rto_us = 500.0\ndata_priority = 1\n\
         [[workload]]\nkind = \"poisson\"\nload = 0.4\ncdf = \"fb_hadoop\"\nstop_us = 5000.0\ntransport = \"bg\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 6\nsize_bytes = 300000\nat_us = 500.0\nreceiver = 0\n"
    ));
    let out = run_checked(&s);
    let ends = opt_u64s(&out.flows, "end_ps");
    assert!(ends.iter().all(|e| e.is_some()), "every flow of both transports finishes");
    let setups = out.summary["transports"].as_array().unwrap();
    assert_eq!((setups[0]["protocol"].as_str(), setups[1]["protocol"].as_str()), (Some("ndp"), Some("dctcp")));
    assert!(setups[0]["counters"]["pulls_sent"].as_u64().unwrap() > 0);
    // Both kinds of flow ran: the incast (NDP) and the background (DCTCP).
    let names = strs(&out.flows, "workload");
    assert!(names.iter().any(|n| n == "incast") && names.iter().any(|n| n == "poisson"));
}

#[test]
fn a_component_naming_an_unknown_setup_is_an_error_naming_the_field() {
    let s = spec(&format!("{FABRIC}[transport]\nprotocol = \"dctcp\"\n{}", workload("transport = \"nope\"\n")));
    let e = dcnsim_core::api::read_spec(&s).expect_err("an unknown setup is an error").to_string();
    assert!(e.contains("workload[1].transport") && e.contains("nope"), "{e}");
}

#[test]
fn a_setup_with_a_bad_protocol_names_its_table() {
    let s = spec(&format!(
        "{FABRIC}[transport]\nprotocol = \"dctcp\"\n[transports.x]\nprotocol = \"tcp\"\n{}",
        workload("transport = \"x\"\n")
    ));
    let e = dcnsim_core::api::read_spec(&s).expect_err("an unknown protocol is an error").to_string();
    assert!(e.contains("transports.x.protocol"), "{e}");
}

/// DCTCP and Homa share one bottleneck (host 0's downlink): together they cannot beat its line rate,
/// so the later of the two finishes no sooner than both transfers back to back; and DCTCP, whose
/// data sits in class 7 below Homa's four levels (0-3), is held back by Homa's packets at the
/// same port rather than finishing as if alone.
#[test]
fn dctcp_and_homa_share_one_bottleneck_queue() {
    let head =
        "seed = 5\nduration_us = 5000.0\n[topology]\nkind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\n\
                host_delay_us = 1.0\n[queue]\npriorities = 8\nlimit_bytes = 4000000\n[transport]\nprotocol = \"homa\"\n\
                priority_levels = 4\n\
                [transports.bg]\nprotocol = \"dctcp\"\ndata_priority = 7\ninitial_window_packets = 20\n";
    let dctcp = "[[workload]]\nkind = \"flow_list\"\nflows = [[1, 0, 1000000, 1.0]]\ntransport = \"bg\"\n";
    let homa = "[[workload]]\nkind = \"flow_list\"\nflows = [[2, 0, 1000000, 1.0]]\n";
    let alone = run_checked(&spec(&format!("{head}{dctcp}")));
    let both = run_checked(&spec(&format!("{head}{dctcp}{homa}")));
    let (ends, ideals) = (opt_u64s(&both.flows, "end_ps"), u64s(&both.flows, "ideal_fct_ps"));
    assert!(ends.iter().all(|e| e.is_some()), "both flows finish: {ends:?}");
    assert_eq!(u64s(&both.flows, "window_bytes"), vec![1_000_000; 2], "every byte delivered once");
    let start = 1_000_000; // 1 us
    let last = ends.iter().map(|e| e.unwrap() - start).max().unwrap();
    let back_to_back = ideals.iter().sum::<u64>() as f64;
    assert!(last as f64 >= 0.95 * back_to_back, "the pair beat the shared link: {last} ps vs {back_to_back} ps");
    assert!((last as f64) < 1.3 * back_to_back, "the pair left the shared link idle: {last} ps vs {back_to_back} ps");
    // The DCTCP flow is the one from host 1.
    let of_dctcp = |out: &dcnsim_core::api::RunOutput, col: &str| {
        let i = u64s(&out.flows, "src").iter().position(|&s| s == 1).unwrap();
        u64s(&out.flows, col)[i]
    };
    let fct = |out: &dcnsim_core::api::RunOutput| of_dctcp(out, "fct_ps");
    let homa_ideal = (ideals.iter().sum::<u64>() - of_dctcp(&both, "ideal_fct_ps")) as f64;
    assert!(
        fct(&both) as f64 >= fct(&alone) as f64 + 0.8 * homa_ideal,
        "DCTCP ({} ps beside Homa, {} ps alone) should wait for Homa's {homa_ideal} ps of higher-class data",
        fct(&both),
        fct(&alone)
    );
    let setups = both.summary["transports"].as_array().unwrap();
    assert_eq!((setups[0]["protocol"].as_str(), setups[1]["protocol"].as_str()), (Some("homa"), Some("dctcp")));
}
