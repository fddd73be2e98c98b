//! Closed-loop workloads: each source keeps its messages outstanding, the next starting
//! `think_us` after the last finished, alongside open-loop components.
mod common;
use common::*;

fn closed_loop_spec(protocol: &str, think_us: f64, extra: &str) -> serde_json::Value {
    spec(&format!(
        "seed = 3\nduration_us = 3000.0\n[topology]\nkind = \"single_switch\"\nhosts = 8\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
         [queue]\npriorities = 2\n[routing]\nload_balancing = \"ecmp\"\n[transport]\nprotocol = \"{protocol}\"\n\
         [[workload]]\nname = \"loop\"\nkind = \"closed_loop\"\nsources = [1, 2, 3]\nreceiver = 0\nsize_bytes = 100000\nthink_us = {think_us}\n{extra}"
    ))
}

#[test]
fn each_source_starts_its_next_message_think_time_after_the_last_finishes() {
    for (protocol, think) in [("dctcp", 0.0), ("sird", 0.0), ("sird", 7.5)] {
        let bg = "[[workload]]\nkind = \"poisson\"\nload = 0.2\ncdf = \"fb_hadoop_w4\"\n";
        let out = run_checked(&closed_loop_spec(protocol, think, bg));
        let (src, start, end, wl) = (
            u64s(&out.flows, "src"),
            u64s(&out.flows, "start_ps"),
            opt_u64s(&out.flows, "end_ps"),
            strs(&out.flows, "workload"),
        );
        let mut background = 0;
        for s in [1u64, 2, 3] {
            let mine: Vec<usize> = (0..src.len()).filter(|&i| src[i] == s && wl[i] == "loop").collect();
            assert!(mine.len() >= 5, "{protocol}: source {s} ran only {} messages", mine.len());
            assert_eq!(start[mine[0]], 0);
            for w in mine.windows(2) {
                let prev_end = end[w[0]].expect("a message with a successor finished");
                assert_eq!(start[w[1]], prev_end + (think * 1e6) as u64, "{protocol}: source {s}");
            }
            // Only the last may be unfinished: one outstanding at a time.
            assert!(mine[..mine.len() - 1].iter().all(|&i| end[i].is_some()));
        }
        background += wl.iter().filter(|w| *w == "poisson").count();
        assert!(background > 10, "the open-loop component runs alongside");
    }
}

#[test]
fn closed_loop_runs_are_deterministic() {
    let a = run_checked(&closed_loop_spec("sird", 1.0, ""));
    let b = run_checked(&closed_loop_spec("sird", 1.0, ""));
    assert_eq!(opt_u64s(&a.flows, "end_ps"), opt_u64s(&b.flows, "end_ps"));
}

#[test]
fn bad_closed_loops_name_the_field() {
    let cases = [
        ("sources = [1, 1]", "workload[0].sources", "twice"),
        ("sources = [0, 1]", "workload[0].sources", "receiver"),
        ("sources = []", "workload[0].sources", "at least one"),
        ("sources = [1, 9]", "workload[0].sources", "does not exist"),
        ("sources = [1.5]", "workload[0].sources[0]", ""),
    ];
    for (line, field, words) in cases {
        let text = format!(
            "duration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
             [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"closed_loop\"\nreceiver = 0\nsize_bytes = 10\n{line}\n"
        );
        let err = match dcnsim_core::api::run(&spec(&text), &Default::default()) {
            Err(dcnsim_core::api::RunError::Spec(e)) => e,
            other => panic!("{line}: expected a spec error, got {:?}", other.map(|_| ())),
        };
        assert_eq!(err.field, field, "{line}: {err}");
        assert!(err.message.contains(words), "{line}: {err}");
    }
    let text = "duration_us = 10.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\nhost_delay_us = 1.0\n\
                [transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"closed_loop\"\nsources = [1]\nsize_bytes = 10\n";
    // Without a receiver each message goes to a random other host (the source never sends to itself).
    let out = run_checked(&spec(text));
    let dst = u64s(&out.flows, "dst");
    assert!(!dst.is_empty() && dst.iter().all(|&d| d != 1 && d < 4), "{dst:?}");
}
