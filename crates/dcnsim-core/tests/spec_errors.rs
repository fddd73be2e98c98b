//! Bad specs give errors that name the field: a table of malformed inputs, each with the field the
//! error must name and a fragment of its message. Never a panic, never a silent default.
mod common;
use common::{spec_error_mismatches, SMALL_DCTCP_SPEC};
use dcnsim_core::api::{run, RunError, RunOptions};

/// A small valid DCTCP run that each case edits.
const BASE: &str = SMALL_DCTCP_SPEC;

fn with(edit: &dyn Fn(&mut toml::Table)) -> serde_json::Value {
    let mut t: toml::Table = toml::from_str(BASE).unwrap();
    edit(&mut t);
    serde_json::to_value(t).unwrap()
}

fn set(path: &str, v: toml::Value) -> impl Fn(&mut toml::Table) {
    let path = path.to_string();
    move |t: &mut toml::Table| {
        let mut cur = t;
        let parts: Vec<&str> = path.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            let next = if let Some(ix) = p.strip_suffix("[0]") {
                &mut cur.get_mut(ix).unwrap().as_array_mut().unwrap()[0]
            } else {
                cur.entry(p.to_string()).or_insert(toml::Value::Table(Default::default()))
            };
            cur = next.as_table_mut().unwrap();
        }
        cur.insert(parts[parts.len() - 1].to_string(), v.clone());
    }
}

/// Sets `topology.link_overrides` to one override with these keys.
fn link_override(keys: &[(&str, toml::Value)]) -> Box<dyn Fn(&mut toml::Table)> {
    let o: toml::Table = keys.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Box::new(set("topology.link_overrides", toml::Value::Array(vec![toml::Value::Table(o)])))
}

fn remove(path: &str) -> impl Fn(&mut toml::Table) {
    let path = path.to_string();
    move |t: &mut toml::Table| {
        let (sec, key) = path.split_once('.').map_or(("", path.as_str()), |(a, b)| (a, b));
        let table = if sec.is_empty() { t } else { t.get_mut(sec).unwrap().as_table_mut().unwrap() };
        table.remove(key);
    }
}

#[test]
fn malformed_specs_name_the_field() {
    use toml::Value as V;
    let s = |x: &str| V::String(x.into());
    type Edit<'a> = Box<dyn Fn(&mut toml::Table) + 'a>;
    let cases: Vec<(&str, Edit<'_>, &str, &str)> = vec![
        (
            "unknown top-level key",
            Box::new(set("durration_us", V::Float(1.0))),
            "durration_us",
            "did you mean `duration_us`",
        ),
        ("unknown key in a section", Box::new(set("topology.rackz", V::Integer(2))), "topology.rackz", "unknown key"),
        ("missing required key", Box::new(remove("duration_us")), "duration_us", "missing"),
        ("missing topology kind", Box::new(remove("topology.kind")), "topology.kind", "missing"),
        ("negative duration", Box::new(set("duration_us", V::Float(-5.0))), "duration_us", "must be"),
        ("wrong type", Box::new(set("topology.racks", s("two"))), "topology.racks", "expected an integer"),
        ("float for integer", Box::new(set("topology.racks", V::Float(2.5))), "topology.racks", "float"),
        ("negative integer", Box::new(set("topology.racks", V::Integer(-2))), "topology.racks", "non-negative"),
        ("zero racks", Box::new(set("topology.racks", V::Integer(0))), "topology.racks", "at least 1"),
        ("unknown topology", Box::new(set("topology.kind", s("torus"))), "topology.kind", "expected one of"),
        ("zero rate", Box::new(set("topology.host_rate_gbps", V::Float(0.0))), "topology.host_rate_gbps", "must be in"),
        // Below 1 Mb/s a full-size packet's serialization time (ps, fixed point) overflowed u64, and
        // below 1 b/s the rate rounded to zero and panicked.
        (
            "tiny rate",
            Box::new(set("topology.core_rate_gbps", V::Float(1e-6))),
            "topology.core_rate_gbps",
            "must be in",
        ),
        (
            "sub-b/s rate",
            Box::new(set("topology.host_rate_gbps", V::Float(1e-10))),
            "topology.host_rate_gbps",
            "must be in",
        ),
        ("tiny pacing", Box::new(set("net.nic_pacing_gbps", V::Float(1e-6))), "net.nic_pacing_gbps", "must be in"),
        (
            "tiny rate, largest packets",
            Box::new(|t: &mut toml::Table| {
                set("topology.core_rate_gbps", V::Float(1e-6))(t);
                set("net.mtu_bytes", V::Integer(65_536))(t);
            }),
            "topology.core_rate_gbps",
            "must be in",
        ),
        (
            "unknown protocol",
            Box::new(set("transport.protocol", s("dctpc"))),
            "transport.protocol",
            "did you mean \"dctcp\"",
        ),
        ("bad g", Box::new(set("transport.g", V::Float(1.5))), "transport.g", "(0, 1]"),
        (
            "old window key",
            Box::new(set("transport.init_cwnd_packets", V::Integer(10))),
            "transport.init_cwnd_packets",
            "was renamed to `initial_window_packets`",
        ),
        (
            "old cap key",
            Box::new(set("transport.max_cwnd_packets", V::Integer(10))),
            "transport.max_cwnd_packets",
            "was renamed to `max_window_packets`",
        ),
        (
            "old ACK class key",
            Box::new(|t: &mut toml::Table| {
                set("transport.protocol", s("newreno"))(t);
                set("transport.ack_priority", V::Integer(1))(t);
            }),
            "transport.ack_priority",
            "was renamed to `control_priority`",
        ),
        (
            "old alpha key",
            Box::new(set("transport.init_alpha", V::Float(0.5))),
            "transport.init_alpha",
            "was renamed to `initial_alpha`",
        ),
        (
            "zero window",
            Box::new(set("transport.initial_window_packets", V::Integer(0))),
            "transport.initial_window_packets",
            "[1, 1000000]",
        ),
        (
            "negative connection pool",
            Box::new(set("transport.connection_pool", V::Integer(-1))),
            "transport.connection_pool",
            "non-negative integer",
        ),
        (
            "huge connection pool",
            Box::new(set("transport.connection_pool", V::Integer(2_000_000))),
            "transport.connection_pool",
            "[0, 1000000]",
        ),
        (
            "unknown connection set-up",
            Box::new(set("transport.connection_setup", s("syn"))),
            "transport.connection_setup",
            "handshake",
        ),
        (
            "negative OS overhead",
            Box::new(set("transport.os_overhead_us", V::Float(-1.0))),
            "transport.os_overhead_us",
            "[0, 1e6]",
        ),
        (
            "huge OS overhead",
            Box::new(set("transport.os_overhead_us", V::Float(2e6))),
            "transport.os_overhead_us",
            "[0, 1e6]",
        ),
        (
            "g for newreno",
            Box::new(|t: &mut toml::Table| {
                set("transport.protocol", s("newreno"))(t);
                set("transport.g", V::Float(0.1))(t);
            }),
            "transport.g",
            "unknown key",
        ),
        (
            "unknown window floor",
            Box::new(set("transport.window_floor", s("zero"))),
            "transport.window_floor",
            "one_packet",
        ),
        (
            "window floor without ECN",
            Box::new(|t: &mut toml::Table| {
                set("transport.protocol", s("newreno"))(t);
                set("transport.window_floor", s("none"))(t);
            }),
            "transport.window_floor",
            "unknown key",
        ),
        ("both limits", Box::new(set("queue.limit_bytes", V::Integer(1000))), "queue.limit_packets", "not both"),
        (
            "too many priorities",
            Box::new(set("queue.priorities", V::Integer(9))),
            "queue.priorities",
            "between 1 and 8",
        ),
        ("step without K", Box::new(remove("queue.ecn_k_packets")), "queue.ecn_k_packets", "needs"),
        (
            "red min above max",
            Box::new(|t: &mut toml::Table| {
                set("queue.ecn", s("red"))(t);
                remove("queue.ecn_k_packets")(t);
                set("queue.red_min_packets", V::Integer(50))(t);
                set("queue.red_max_packets", V::Integer(10))(t);
            }),
            "queue.red_max_packets",
            "greater",
        ),
        (
            "unknown lb",
            Box::new(set("routing.load_balancing", s("random"))),
            "routing.load_balancing",
            "expected one of",
        ),
        (
            "source routing with dctcp",
            Box::new(set("routing.load_balancing", s("source"))),
            "transport.protocol",
            "source routes",
        ),
        ("header too big", Box::new(set("net.header_bytes", V::Integer(1500))), "net.header_bytes", "smaller than mtu"),
        ("warmup past end", Box::new(set("measure.warmup_us", V::Float(200.0))), "measure.warmup_us", "duration"),
        ("section not a table", Box::new(set("net", V::Integer(3))), "net", "expected a table"),
        ("negative load", Box::new(set("workload[0].load", V::Float(-0.5))), "workload[0].load", ""),
        ("load above one", Box::new(set("workload[0].load", V::Float(1.5))), "workload[0].load", ""),
        (
            "unknown workload kind",
            Box::new(set("workload[0].kind", s("bursty"))),
            "workload[0].kind",
            "expected one of",
        ),
        ("unknown cdf", Box::new(set("workload[0].cdf", s("websurch"))), "workload[0].cdf", ""),
        (
            "override of a missing link",
            link_override(&[("a", s("tor0")), ("b", s("tor1")), ("rate_gbps", V::Float(1.0))]),
            "topology.link_overrides[0]",
            "no link joins tor0 and tor1",
        ),
        (
            "one_way not a bool",
            link_override(&[("a", s("tor0")), ("b", s("agg0")), ("rate_gbps", V::Float(1.0)), ("one_way", s("yes"))]),
            "topology.link_overrides[0].one_way",
            "expected true or false",
        ),
        (
            "NDP without spraying",
            Box::new(set("transport.protocol", s("ndp"))),
            "transport.protocol",
            "spray every packet",
        ),
        (
            "odd k",
            Box::new(|t: &mut toml::Table| {
                let mut topo = toml::Table::new();
                topo.insert("kind".into(), s("fat_tree"));
                topo.insert("k".into(), V::Integer(5));
                topo.insert("host_rate_gbps".into(), V::Float(10.0));
                t.insert("topology".into(), V::Table(topo));
            }),
            "topology.k",
            "even",
        ),
        (
            "more pods than k",
            Box::new(|t: &mut toml::Table| {
                let mut topo = toml::Table::new();
                topo.insert("kind".into(), s("fat_tree"));
                topo.insert("k".into(), V::Integer(8));
                topo.insert("pods".into(), V::Integer(9));
                topo.insert("host_rate_gbps".into(), V::Float(10.0));
                t.insert("topology".into(), V::Table(topo));
            }),
            "topology.pods",
            "must be in [1, k = 8]",
        ),
    ];
    let failures = spec_error_mismatches(cases.iter().map(|(what, edit, field, fragment)| {
        (what.to_string(), with(edit.as_ref()), field.to_string(), fragment.to_string())
    }));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_base_spec_is_valid() {
    run(&with(&|_| {}), &RunOptions::default()).unwrap();
}

#[test]
fn a_non_table_spec_is_an_error() {
    let e = run(&serde_json::json!([1, 2]), &RunOptions::default()).err().unwrap();
    assert!(matches!(e, RunError::Spec(_)));
}
