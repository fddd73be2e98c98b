//! Randomly mutated specs never panic: every run ends in results or a spec error naming a field.
use dcnsim_core::api::{run, RunError, RunOptions};
use dcnsim_core::engine::rng::Rng;
use serde_json::{json, Value};

fn bases() -> Vec<Value> {
    let ls = json!({
        "seed": 1, "duration_us": 300.0, "measure": {"warmup_us": 50.0},
        "net": {"mtu_bytes": 1500, "header_bytes": 64, "control_bytes": 64, "switch_latency_us": 0.0},
        "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 3, "spines": 2, "host_rate_gbps": 10.0, "core_rate_gbps": 20.0},
        "queue": {"limit_packets": 50, "ecn": "step", "ecn_k_packets": 10, "priorities": 2},
        "routing": {"load_balancing": "ecmp"},
        "transport": {"protocol": "dctcp", "g": 0.0625, "initial_window_packets": 10},
        "metrics": {"sample_interval_us": 50.0},
        "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"},
                     {"kind": "incast", "senders": 3, "size_bytes": 20000, "at_us": 10.0}]
    });
    let ndp = json!({
        "seed": 1, "duration_us": 300.0,
        "net": {"mtu_bytes": 9000, "header_bytes": 64},
        "topology": {"kind": "fat_tree", "k": 4, "host_rate_gbps": 10.0},
        "queue": {"priorities": 2, "limit_packets": 8, "trim": true, "scheduling": "wrr", "wrr_weights": [10, 1]},
        "routing": {"load_balancing": "source"},
        "transport": {"protocol": "ndp", "initial_window_packets": 30},
        "workload": [{"kind": "permutation", "size_bytes": 100000},
                     {"kind": "incast", "senders": 5, "size_bytes": 50000, "load": 0.1}]
    });
    vec![ls, ndp]
}

/// Every (path, leaf) pair of a spec, so mutations can target any key.
fn leaves(v: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = prefix.clone();
                p.push(k.clone());
                leaves(x, p, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| x.is_object()) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(format!("#{i}"));
                leaves(x, p, out);
            }
        }
        _ => out.push(prefix),
    }
}

fn set(v: &mut Value, path: &[String], new: Option<Value>) {
    let mut cur = v;
    for seg in &path[..path.len() - 1] {
        cur = match seg.strip_prefix('#') {
            Some(i) => &mut cur[i.parse::<usize>().unwrap()],
            None => &mut cur[seg.as_str()],
        };
    }
    let last = &path[path.len() - 1];
    match new {
        Some(x) => cur[last.as_str()] = x,
        None => {
            cur.as_object_mut().unwrap().remove(last);
        }
    }
}

fn random_value(rng: &mut Rng) -> Option<Value> {
    Some(match rng.below(14) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(1),
        3 => json!(2),
        4 => json!(u32::MAX as u64 * 4),
        5 => json!(0.0),
        6 => json!(-0.5),
        7 => json!(1e300),
        8 => json!(0.001),
        9 => json!("nonsense"),
        10 => json!(true),
        11 => json!([1, 2]),
        12 => json!({"x": 1}),
        _ => return None, // delete the key
    })
}

#[test]
fn mutated_specs_never_panic() {
    let mut rng = Rng::seed_from(2024);
    let mut outcomes = [0usize; 3];
    for base in bases() {
        let mut paths = Vec::new();
        leaves(&base, Vec::new(), &mut paths);
        for _ in 0..250 {
            let mut spec = base.clone();
            for _ in 0..(1 + rng.below(2)) {
                let p = &paths[rng.below(paths.len() as u64) as usize];
                set(&mut spec, p, random_value(&mut rng));
            }
            let s = spec.to_string();
            let r = std::panic::catch_unwind(|| run(&spec, &RunOptions::default()));
            match r {
                Ok(Ok(_)) => outcomes[0] += 1,
                Ok(Err(RunError::Spec(e))) => {
                    assert!(!e.field.is_empty() && !e.message.is_empty());
                    outcomes[1] += 1
                }
                Ok(Err(e)) => panic!("non-spec error {e} for {s}"),
                Err(_) => panic!("panicked on {s}"),
            }
        }
    }
    assert!(outcomes[0] > 20 && outcomes[1] > 200, "{outcomes:?}");
}
