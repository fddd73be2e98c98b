//! Reported rates never exceed a capacity: bytes on the wire when the measurement window opens or
//! closes, and bytes arriving across a time-series bin edge, count only their share on each side.
//! (Counting whole packets gave 1.0027 utilization with 9 KB packets, and 10.4 Gb/s received on
//! 10 Gb/s links with 10 us bins.)
mod common;
use common::*;

/// One long flow saturating host0 -> host1 on a 10G single switch, 9 KB packets, a window that
/// opens and closes mid-packet, and 10 us samples that cut packets too.
fn saturated() -> dcnsim_core::api::RunOutput {
    let f = flow_file("rates-saturated", &[(0, 1, 50_000_000, 0.0)]);
    run_checked(&spec(&format!(
        "seed = 1\nduration_us = 1003.3\nstop_when_done = false\n[measure]\nwarmup_us = 101.7\n[net]\nmtu_bytes = 9000\n\
         [metrics]\nsample_interval_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
         [queue]\nlimit_packets = 1000\n[transport]\nprotocol = \"newreno\"\ninitial_window_packets = 100\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n",
        f.display()
    )))
}

#[test]
fn a_saturated_link_is_used_exactly_once_over() {
    let out = saturated();
    let (role, util) = (strs(&out.ports, "role"), f64s(&out.ports, "utilization"));
    let nic = (0..role.len()).find(|&i| role[i] == "host_nic").unwrap();
    // The sender's NIC serializes back to back for the whole window: exactly 1, not one packet more.
    assert!((util[nic] - 1.0).abs() < 1e-9, "NIC utilization {}", util[nic]);
    assert!(util.iter().all(|u| *u <= 1.0 + 1e-12), "{util:?}");
}

#[test]
fn receive_rates_in_time_series_stay_under_the_link_rate() {
    let out = saturated();
    let ts = &out.timeseries;
    let (series, names, values) = (strs(ts, "series"), strs(ts, "name"), f64s(ts, "value"));
    let rx: Vec<f64> =
        (0..ts.rows()).filter(|&i| series[i] == "host_rx_gbps" && names[i] == "host1").map(|i| values[i]).collect();
    // Payload at line rate: 10 Gb/s x 8936 / 9000, in every full bin once the flow runs.
    let goodput = 10.0 * 8936.0 / 9000.0;
    assert!(rx.iter().all(|&r| r <= goodput + 1e-9), "{rx:?}");
    let steady: Vec<f64> = rx[5..rx.len() - 1].to_vec();
    assert!(steady.iter().all(|&r| (r - goodput).abs() < 1e-6), "{steady:?}");
}
