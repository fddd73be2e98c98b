//! Traces of chosen flows (`[trace]`): the packet trace follows every packet hop by hop and agrees
//! with the port counters; the flow state series shows the protocol's control state; the row cap
//! is reported; bad `[trace]` tables are spec errors. (That tracing leaves results unchanged is
//! checked against the golden specs in golden.rs.)
mod common;
use common::*;
use dcnsim_core::api::RunOutput;
use dcnsim_core::record::table::{Column, Table};
use std::collections::{BTreeMap, HashMap};

fn cats(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Cat { categories, codes }) => codes.iter().map(|&c| categories[c as usize].clone()).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Row {
    time: u64,
    flow: u64,
    kind: String,
    seq: u64,
    node: String,
    port: u64,
    event: String,
}

fn trace_rows(out: &RunOutput) -> Vec<Row> {
    let t = &out.trace;
    let (time, flow, seq, port) = (u64s(t, "time_ps"), u64s(t, "flow_id"), u64s(t, "seq"), u64s(t, "port_id"));
    let (kind, node, event) = (cats(t, "kind"), cats(t, "node"), cats(t, "event"));
    (0..t.rows())
        .map(|i| Row {
            time: time[i],
            flow: flow[i],
            kind: kind[i].clone(),
            seq: seq[i],
            node: node[i].clone(),
            port: port[i],
            event: event[i].clone(),
        })
        .collect()
}

/// (time, flow, variable, value) rows of the flow state series.
fn state_rows(out: &RunOutput) -> Vec<(u64, u64, String, f64)> {
    let t = &out.flow_state;
    let (time, flow, var, value) = (u64s(t, "time_ps"), u64s(t, "flow_id"), cats(t, "variable"), f64s(t, "value"));
    (0..t.rows()).map(|i| (time[i], flow[i], var[i].clone(), value[i])).collect()
}

fn series(out: &RunOutput, flow: u64, name: &str) -> Vec<(u64, f64)> {
    state_rows(out).into_iter().filter(|r| r.1 == flow && r.2 == name).map(|r| (r.0, r.3)).collect()
}

const LEAF_SPINE: &str = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\nhost_rate_gbps = 10.0\n\
                          core_rate_gbps = 10.0\nhost_delay_us = 1.0\ncore_delay_us = 1.0";

/// One DCTCP flow from host 0 to host 3 (the other rack: four hops each way). The run goes on
/// after the flow finishes, so that the last ACKs arrive.
fn lone_dctcp(size: u64, trace: &str) -> RunOutput {
    let f = flow_file(&format!("trace-lone-{size}-{:x}", trace.len()), &[(0, 3, size, 3.0)]);
    run_checked(&spec(&format!(
        "seed = 1\nduration_us = 100000.0\nstop_when_done = false\n[topology]\n{LEAF_SPINE}\n[queue]\necn = \"step\"\necn_k_packets = 65\n\
         [transport]\nprotocol = \"dctcp\"\ninitial_window_packets = 10\n\
         [[workload]]\nkind = \"flow_list\"\npath = \"{}\"\n{trace}",
        f.display()
    )))
}

#[test]
fn a_lone_flow_is_traced_hop_by_hop() {
    let (size, mss, hops): (u64, u64, u64) = (40 * 1436 + 100, 1436, 4);
    let packets = size.div_ceil(mss);
    let out = lone_dctcp(size, "[trace]\nflows = [0]\n");
    let rows = trace_rows(&out);
    assert!(rows.windows(2).all(|w| w[0].time <= w[1].time), "rows are in time order");
    assert!(rows.iter().all(|r| r.flow == 0));
    for kind in ["data", "ack"] {
        for event in ["tx_start", "arrive"] {
            let n = rows.iter().filter(|r| r.kind == kind && r.event == event).count() as u64;
            assert_eq!(n, packets * hops, "{kind} {event}: one per packet per hop");
        }
        let delivered = rows.iter().filter(|r| r.kind == kind && r.event == "deliver").count() as u64;
        assert_eq!(delivered, packets, "{kind}: each delivered once");
    }
    assert!(rows.iter().all(|r| !["drop", "trim", "bounce"].contains(&r.event.as_str())));
    // Each data packet: enqueue, tx_start, arrive at every hop, from host0's NIC to host3.
    let nic = rows.iter().find(|r| r.event == "enqueue").unwrap().port;
    let mut by_seq: BTreeMap<u64, Vec<&Row>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.kind == "data" && r.event != "mark") {
        by_seq.entry(r.seq).or_default().push(r);
    }
    assert_eq!(by_seq.len() as u64, packets);
    for (seq, evs) in &by_seq {
        let names: Vec<&str> = evs.iter().map(|r| r.event.as_str()).collect();
        let mut want: Vec<&str> = (0..hops).flat_map(|_| ["enqueue", "tx_start", "arrive"]).collect();
        want.push("deliver");
        assert_eq!(names, want, "packet at byte {seq}");
        assert_eq!((evs[0].node.as_str(), evs[0].port), ("host0", nic), "first event at the sender's NIC");
        assert_eq!(evs.last().unwrap().node, "host3", "last event at the receiver");
        for hop in evs.chunks(3).take(hops as usize) {
            assert!(hop.iter().all(|r| r.port == hop[0].port), "a hop's three events are at one port");
        }
    }
    // The flow is all the traffic: the trace's transmissions per port are the port counters.
    let mut tx: HashMap<u64, u64> = HashMap::new();
    for r in rows.iter().filter(|r| r.event == "tx_start") {
        *tx.entry(r.port).or_default() += 1;
    }
    for (port, &n) in u64s(&out.ports, "tx_packets").iter().enumerate() {
        assert_eq!(tx.get(&(port as u64)).copied().unwrap_or(0), n, "port {port}");
    }
}

fn incast(protocol: &str, queue: &str, senders: u32, size: u64, trace: &str) -> RunOutput {
    run_checked(&spec(&format!(
        "seed = 3\nduration_us = 200000.0\n[net]\nmtu_bytes = 9000\n[topology]\nkind = \"single_switch\"\nhosts = {}\n\
         host_rate_gbps = 10.0\n[queue]\n{queue}\n[routing]\nload_balancing = \"spray\"\n\
         [transport]\nprotocol = \"{protocol}\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = {senders}\nsize_bytes = {size}\nat_us = 1.0\nreceiver = 0\n{trace}",
        senders + 1
    )))
}

/// Per port: how many rows of `event` the trace holds.
fn per_port(rows: &[Row], event: &str, ports: usize) -> Vec<u64> {
    let mut n = vec![0; ports];
    for r in rows.iter().filter(|r| r.event == event) {
        n[r.port as usize] += 1;
    }
    n
}

#[test]
fn an_incast_trace_shows_the_drops_the_ports_count() {
    let all: Vec<String> = (0..8).map(|f| f.to_string()).collect();
    let trace = format!("[trace]\nflows = [{}]\n", all.join(", "));
    let queue = "limit_packets = 12";
    let out = incast("newreno", queue, 8, 200_000, &trace);
    let rows = trace_rows(&out);
    let drops = u64s(&out.ports, "drops");
    assert!(drops.iter().sum::<u64>() > 0, "8 x 10 initial packets overflow a 12-packet buffer");
    assert_eq!(per_port(&rows, "drop", drops.len()), drops, "every flow is traced: drops match per port");
    // Every dropped data packet was sent again and delivered.
    for d in rows.iter().filter(|r| r.event == "drop" && r.kind == "data") {
        assert!(
            rows.iter().any(|r| r.flow == d.flow && r.seq == d.seq && r.event == "deliver" && r.time > d.time),
            "flow {} byte {} dropped and never delivered",
            d.flow,
            d.seq
        );
    }
    // Tracing one flow keeps exactly that flow's rows.
    let one = incast("newreno", queue, 8, 200_000, "[trace]\nflows = [5]\n");
    let five: Vec<Row> = rows.iter().filter(|r| r.flow == 5).cloned().collect();
    assert_eq!(trace_rows(&one), five);
    assert!(five.iter().any(|r| r.event == "drop"), "flow 5 lost packets too");
}

#[test]
fn an_ndp_incast_trace_shows_the_trims_and_returns_the_ports_count() {
    let trace = format!("[trace]\nflows = [{}]\n", (0..16).map(|f| f.to_string()).collect::<Vec<_>>().join(", "));
    let queue = "priorities = 2\nlimit_packets = 8\ntrim = true\nheader_limit_bytes = 640";
    let out = run_checked(&spec(&format!(
        "seed = 3\nduration_us = 200000.0\n[net]\nmtu_bytes = 9000\n[topology]\nkind = \"single_switch\"\nhosts = 17\n\
         host_rate_gbps = 10.0\n[queue]\n{queue}\n[routing]\nload_balancing = \"source\"\n\
         [transport]\nprotocol = \"ndp\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 16\nsize_bytes = 300000\nat_us = 1.0\nreceiver = 0\n{trace}"
    )));
    let rows = trace_rows(&out);
    for (event, column) in [("trim", "trims"), ("bounce", "bounces"), ("drop", "drops")] {
        let counted = u64s(&out.ports, column);
        assert_eq!(per_port(&rows, event, counted.len()), counted, "{event}s per port");
    }
    assert!(rows.iter().any(|r| r.event == "trim"), "a 16-to-1 incast trims");
    assert!(rows.iter().any(|r| r.event == "bounce"), "a 10-header queue returns headers");
    // A trimmed packet reaches the receiver as a header, which is delivered.
    let t = rows.iter().find(|r| r.event == "trim").unwrap();
    assert!(rows.iter().any(|r| r.flow == t.flow && r.seq == t.seq && r.kind == "header" && r.time >= t.time));
}

#[test]
fn dctcp_state_shows_slow_start_from_the_initial_window() {
    let out = lone_dctcp(3_000_000, "[trace]\nflows = [0]\nstate_interval_us = 2.0\n");
    let cwnd = series(&out, 0, "cwnd_bytes");
    let ssthresh = series(&out, 0, "ssthresh_bytes");
    assert_eq!(cwnd[0], (3_000_000, 10.0 * 1436.0), "sampled at the start: the initial window");
    assert!(ssthresh[0].1.is_infinite(), "no ssthresh before the first cut");
    // While ssthresh is infinite the sender is in slow start: cwnd only grows, and it doubles
    // about once per RTT (13 us here).
    let slow: Vec<f64> = cwnd.iter().zip(&ssthresh).take_while(|(_, s)| s.1.is_infinite()).map(|(c, _)| c.1).collect();
    assert!(slow.windows(2).all(|w| w[0] <= w[1]), "cwnd never falls in slow start: {slow:?}");
    assert!(*slow.last().unwrap() >= 4.0 * 10.0 * 1436.0, "cwnd grows from 10 packets: {slow:?}");
    assert!(slow.len() < cwnd.len(), "ECN ends slow start within the flow");
    // Samples every 2 us while the sender holds state, and none after the flow is done.
    let times: Vec<u64> = cwnd.iter().map(|c| c.0).collect();
    assert!(times[1..].iter().all(|t| t % 2_000_000 == 0));
    assert!(times.windows(2).all(|w| w[1] - w[0] <= 2_000_000));
    let end = opt_u64s(&out.flows, "end_ps")[0].unwrap();
    let rtt = out.summary["base_rtt_ps"].as_u64().unwrap();
    assert!(*times.last().unwrap() <= end + rtt + 2_000_000, "sampling stops once the flow is done");
    let srtt = series(&out, 0, "srtt_us");
    let base_rtt_us = out.summary["base_rtt_ps"].as_f64().unwrap() / 1e6;
    assert!(srtt.iter().all(|s| s.1 >= base_rtt_us - 1e-9), "srtt {:?} < base RTT {base_rtt_us}", &srtt[..3]);
    let alpha = series(&out, 0, "alpha");
    assert!(alpha.iter().all(|a| (0.0..=1.0).contains(&a.1)));
}

#[test]
fn ndp_and_sird_report_their_state() {
    let ndp = run_checked(&spec(
        "seed = 1\nduration_us = 100000.0\n[net]\nmtu_bytes = 9000\n[topology]\nkind = \"single_switch\"\nhosts = 4\n\
         host_rate_gbps = 10.0\n[queue]\npriorities = 2\nlimit_packets = 8\ntrim = true\n[routing]\nload_balancing = \"source\"\n\
         [transport]\nprotocol = \"ndp\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 3\nsize_bytes = 1000000\nat_us = 1.0\nreceiver = 0\n\
         [trace]\nflows = [0, 2]\n",
    ));
    for f in [0, 2] {
        let in_flight = series(&ndp, f, "in_flight_packets");
        assert_eq!(in_flight[0].1, 30.0, "flow {f}: the first window of 30 packets is out at the start");
        let pulls = series(&ndp, f, "receiver_pulls_sent");
        assert!(pulls.windows(2).all(|w| w[0].1 <= w[1].1), "pulls sent only grow");
        assert!(pulls.last().unwrap().1 > 50.0, "a 112-packet flow is mostly pulled");
    }
    assert!(series(&ndp, 1, "in_flight_packets").is_empty(), "flow 1 is not traced");

    let sird = run_checked(&spec(
        "seed = 1\nduration_us = 100000.0\n[topology]\nkind = \"single_switch\"\nhosts = 5\nhost_rate_gbps = 100.0\n\
         [queue]\npriorities = 2\n[routing]\nload_balancing = \"spray\"\n[transport]\nprotocol = \"sird\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 4\nsize_bytes = 2000000\nat_us = 1.0\nreceiver = 0\n\
         [trace]\nflows = [1]\n",
    ));
    let bdp = sird.summary["bdp_bytes"].as_f64().unwrap();
    let sb = series(&sird, 1, "sb_bytes");
    assert!(!sb.is_empty() && sb.iter().all(|s| s.1 > 0.0 && s.1 <= bdp), "0 < SB <= SBmax = 1 BDP");
    let budget = 1.5 * bdp + 9000.0;
    assert!(series(&sird, 1, "receiver_outstanding_bytes").iter().all(|b| b.1 <= budget), "b stays within B");
    let granted = series(&sird, 1, "granted_packets");
    assert!(granted.windows(2).all(|w| w[0].1 <= w[1].1) && granted.last().unwrap().1 > 100.0);
    assert!(series(&sird, 1, "sender_credit_bytes").iter().all(|c| (0.0..=budget).contains(&c.1)));
}

#[test]
fn the_row_cap_is_reported() {
    let out = lone_dctcp(200_000, "[trace]\nflows = [0]\nmax_rows = 100\nstate_interval_us = 0.1\n");
    assert_eq!(out.trace.rows(), 100);
    assert_eq!(out.flow_state.rows(), 100);
    let t = &out.summary["trace"];
    assert_eq!(t["truncated"], true, "{t}");
    assert_eq!(t["packet_rows"], 100);
    assert!(t["packet_rows_dropped"].as_u64().unwrap() > 1000, "{t}");
    let cut = t["packet_truncated_at_ps"].as_u64().unwrap();
    assert!(cut >= *u64s(&out.trace, "time_ps").last().unwrap(), "cut after the last row kept");
    assert!(t["state_truncated_at_ps"].as_u64().is_some());
    // Without a cap the same run is complete, and the summary says so.
    let full = lone_dctcp(200_000, "[trace]\nflows = [0]\n");
    assert_eq!(full.summary["trace"]["truncated"], false);
    assert_eq!(full.trace.rows() as u64, 100 + t["packet_rows_dropped"].as_u64().unwrap());
    assert_eq!(full.summary["trace"]["packet_truncated_at_ps"], serde_json::Value::Null);
}

#[test]
fn untraced_runs_have_empty_trace_tables_and_no_summary_entry() {
    let out = lone_dctcp(10_000, "");
    assert_eq!(out.trace.rows(), 0);
    assert_eq!(out.flow_state.rows(), 0);
    assert!(out.trace.get("event").is_some() && out.flow_state.get("variable").is_some(), "columns are there");
    assert!(out.summary.get("trace").is_none());
    // A traced flow id beyond the flows that started is listed as such.
    let out = lone_dctcp(10_000, "[trace]\nflows = [0, 7]\n");
    assert_eq!(out.summary["trace"]["flows_not_started"], serde_json::json!([7]));
}

#[test]
fn bad_trace_tables_are_spec_errors() {
    let base =
        "seed = 1\nduration_us = 100.0\n[topology]\nkind = \"single_switch\"\nhosts = 2\nhost_rate_gbps = 10.0\n\
                [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n";
    let many: Vec<String> = (0..1025).map(|f| f.to_string()).collect();
    let cases = [
        ("flows = [-1]", "trace.flows[0]", "non-negative"),
        ("flows = [1.5]", "trace.flows[0]", "integer"),
        ("flows = []", "trace.flows", "at least one"),
        ("flows = [3, 1, 3]", "trace.flows", "listed twice"),
        (&format!("flows = [{}]", many.join(",")), "trace.flows", "at most 1024"),
        ("flows = [4294967295]", "trace.flows", "below 2^32"),
        ("flows = 3", "trace.flows", "expected an array"),
        ("max_rows = 10", "trace.flows", "required"),
        ("flows = [0]\nstate_interval_us = 0.0", "trace.state_interval_us", "must be in"),
        ("flows = [0]\nmax_rows = 0", "trace.max_rows", "must be in"),
        ("flows = [0]\nrows = 5", "trace.rows", "unknown key"),
    ];
    let failures = spec_error_mismatches(cases.iter().map(|(t, field, msg)| {
        (t.to_string(), spec(&format!("{base}[trace]\n{t}\n")), field.to_string(), msg.to_string())
    }));
    assert!(failures.is_empty(), "{failures:#?}");
}
