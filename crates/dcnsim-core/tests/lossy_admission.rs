//! `[switch] lossy_admission`: how a shared buffer without PFC admits lossy packets. "egress" (the
//! default) bounds each egress queue by alpha x free; "ingress" is the HPCC authors' ns-3 switch with
//! PFC off (PB-FS's lossy fabric, Fig. 7): packets are accounted to the port they came in on, as
//! lossless ones (reserve, shared within alpha x free, a headroom of 3 x rate x link delay), and
//! dropped beyond it; nothing is paused and a drop is no configuration error.
mod common;
use common::*;
use dcnsim_core::api::RunOutput;

const N: u32 = 8;
const BUFFER: u64 = 600_000;
const MTU: u64 = 1500;

fn incast(name: &str, admission: &str) -> RunOutput {
    let flows: Vec<_> = (1..=N).map(|h| (h, 0, 600_000, 0.0)).collect();
    let f = flow_file(name, &flows);
    run_checked(&spec(&format!(
        "duration_us = 20000.0\n[topology]\nkind = \"single_switch\"\nhosts = {}\nhost_rate_gbps = 10.0\n\
         host_delay_us = 5.0\n[switch]\nbuffer_bytes = {BUFFER}\nlossy_admission = \"{admission}\"\n\
         [transport]\nprotocol = \"newreno\"\n[[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        N + 1,
        f.display()
    )))
}

fn downlink_max(out: &RunOutput) -> u64 {
    let (node, peer) = (strs(&out.ports, "node"), strs(&out.ports, "peer"));
    let i = (0..node.len()).find(|&i| node[i] == "switch0" && peer[i] == "host0").expect("the receiver's downlink");
    u64s(&out.ports, "max_bytes")[i]
}

#[test]
fn ingress_accounting_gives_each_sender_its_own_share_and_headroom() {
    let egress = incast("lossy_egress", "egress");
    let ingress = incast("lossy_ingress", "ingress");
    for (name, out) in [("egress", &egress), ("ingress", &ingress)] {
        assert_eq!(out.summary["flows"]["unfinished"], 0, "{name}: {}", out.summary["flows"]);
        assert!(out.summary["queues"]["drops"].as_u64().unwrap() > 0, "{name}: an 8:1 incast must overflow");
        assert_eq!(u64s(&out.switches, "headroom_overflows")[0], 0, "{name}: lossy drops are no configuration error");
    }
    // Egress: one queue alone holds at most alpha / (1 + alpha) of the buffer (alpha 1/8: 1/9).
    let (e, i) = (downlink_max(&egress), downlink_max(&ingress));
    assert!(e <= BUFFER / 9 + MTU, "egress {e}");
    // Ingress: 9 ports set aside a reserve (4096) and a headroom (3 x 10 Gb/s x 5 us = 18750) each;
    // each sender's ingress shares s <= (P - 8 s) / 8 of the pool P, i.e. s <= P / 16.
    let headroom = 3 * 10_000_000_000u64 / 8 * 5 / 1_000_000;
    assert_eq!(headroom, 18_750);
    let pool = BUFFER - (N as u64 + 1) * (4096 + headroom);
    let bound = N as u64 * (4096 + pool / 16 + headroom) + MTU;
    assert!(i <= bound, "ingress {i} > {bound}");
    // The eight shares and headrooms together hold far more than one egress share.
    assert!(i > 2 * e && i > bound * 3 / 4, "ingress {i}, egress {e}, bound {bound}");
}

#[test]
fn lossy_admission_errors_name_the_field() {
    let base = "duration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 3\nhost_rate_gbps = 10.0\n\
                [transport]\nprotocol = \"newreno\"\n[[workload]]\nkind = \"incast\"\nsenders = 2\nsize_bytes = 10000\nreceiver = 0\nat_us = 1.0\n";
    let case = |what: &str, extra: &str, fragment: &str| {
        (what.to_string(), spec(&format!("{base}{extra}")), "switch.lossy_admission".to_string(), fragment.to_string())
    };
    let failures = spec_error_mismatches([
        case("no buffer", "[switch]\nlossy_admission = \"ingress\"\n", "only used with buffer_bytes"),
        case(
            "with pfc",
            "[switch]\nbuffer_bytes = 100000\npfc = true\nlossy_admission = \"ingress\"\n",
            "lossy fabrics",
        ),
        case("unknown", "[switch]\nbuffer_bytes = 100000\nlossy_admission = \"both\"\n", "egress"),
    ]);
    assert!(failures.is_empty(), "{failures:#?}");
}
