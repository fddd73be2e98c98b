//! Named protocol setups: each protocol as a paper runs it, as the spec tables that say so
//! (transport, queue, routing, net, switch). They are data, shipped as spec files in
//! `data/setups/<name>.toml` (each opens with a comment on its source) and built into the binary.
//!
//! A spec naming a setup (`setup = "ndp-paper"`) starts from its tables; tables and keys the spec
//! gives itself are merged over them, key by key (`[transport] initial_window_packets = 15` changes
//! only the window). `read_spec` expands the setup first, so the resolved spec holds the expanded
//! tables and every front end (the Python package, the CLI, the bench binary) runs the same setups.

use crate::spec_reader::{type_name, SpecError};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::OnceLock;

/// The tables a setup may give.
pub const SETUP_KEYS: [&str; 5] = ["transport", "queue", "routing", "net", "switch"];

/// The shipped setups' files, in the order `dcnsim describe` lists them.
const FILES: &[(&str, &str)] = &[
    ("ndp-paper", include_str!("../../data/setups/ndp-paper.toml")),
    ("cp-ndp-paper", include_str!("../../data/setups/cp-ndp-paper.toml")),
    ("dctcp-ndp-paper", include_str!("../../data/setups/dctcp-ndp-paper.toml")),
    ("dctcp-shared-ndp-paper", include_str!("../../data/setups/dctcp-shared-ndp-paper.toml")),
    ("dcqcn-ndp-paper", include_str!("../../data/setups/dcqcn-ndp-paper.toml")),
    ("mptcp-ndp-paper", include_str!("../../data/setups/mptcp-ndp-paper.toml")),
    ("phost-ndp-paper", include_str!("../../data/setups/phost-ndp-paper.toml")),
    ("sird-paper", include_str!("../../data/setups/sird-paper.toml")),
    ("dctcp-sird-paper", include_str!("../../data/setups/dctcp-sird-paper.toml")),
    ("dcpim-paper", include_str!("../../data/setups/dcpim-paper.toml")),
    ("dcpim-sird-paper", include_str!("../../data/setups/dcpim-sird-paper.toml")),
    ("rcp-paper", include_str!("../../data/setups/rcp-paper.toml")),
    ("dx-paper", include_str!("../../data/setups/dx-paper.toml")),
    ("hull-paper", include_str!("../../data/setups/hull-paper.toml")),
    ("expresspass-paper", include_str!("../../data/setups/expresspass-paper.toml")),
    ("expresspass-shuffle-paper", include_str!("../../data/setups/expresspass-shuffle-paper.toml")),
    ("dctcp-xpass-paper", include_str!("../../data/setups/dctcp-xpass-paper.toml")),
    ("dctcp-shuffle-paper", include_str!("../../data/setups/dctcp-shuffle-paper.toml")),
    ("xpass-sird-paper", include_str!("../../data/setups/xpass-sird-paper.toml")),
    ("swift-sird-paper", include_str!("../../data/setups/swift-sird-paper.toml")),
    ("homa-sird-paper", include_str!("../../data/setups/homa-sird-paper.toml")),
    ("dcqcn-hpcc-paper", include_str!("../../data/setups/dcqcn-hpcc-paper.toml")),
    ("timely-hpcc-paper", include_str!("../../data/setups/timely-hpcc-paper.toml")),
    ("hpcc-paper", include_str!("../../data/setups/hpcc-paper.toml")),
    ("dctcp-rate-hpcc-paper", include_str!("../../data/setups/dctcp-rate-hpcc-paper.toml")),
];

/// One named setup: what it is (a sentence naming its paper) and the tables it gives.
#[derive(Clone, Debug)]
pub struct Setup {
    pub name: &'static str,
    pub summary: String,
    /// Table name (one of `SETUP_KEYS`) to the keys it sets (tables and keys in name order).
    pub tables: Map<String, Value>,
}

impl Setup {
    /// Every key the setup sets, dotted (`queue.fabric.ecn`).
    pub fn keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for (table, value) in &self.tables {
            dotted_keys(table, value, &mut keys);
        }
        keys
    }

    /// The protocol the setup's `[transport]` names, if it names one.
    fn protocol(&self) -> Option<&str> {
        self.tables.get("transport")?.get("protocol")?.as_str()
    }
}

fn dotted_keys(path: &str, value: &Value, out: &mut Vec<String>) {
    match value.as_object() {
        Some(table) if !table.is_empty() => table.iter().for_each(|(k, v)| dotted_keys(&format!("{path}.{k}"), v, out)),
        Some(_) => {}
        None => out.push(path.to_string()),
    }
}

/// Every shipped setup, read once. A shipped file that does not read is a bug of the build (the
/// `shipped_setups_read` test reads them all).
pub fn setups() -> &'static [Setup] {
    static SETUPS: OnceLock<Vec<Setup>> = OnceLock::new();
    SETUPS.get_or_init(|| {
        FILES.iter().map(|&(name, text)| read_setup(name, text).unwrap_or_else(|e| panic!("{e}"))).collect()
    })
}

/// Reads one setup file: a `summary` string and tables among `SETUP_KEYS`.
pub fn read_setup(name: &'static str, text: &str) -> Result<Setup, String> {
    let file = format!("data/setups/{name}.toml");
    let mut top: Map<String, Value> = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    let summary = match top.remove("summary") {
        Some(Value::String(s)) => s,
        _ => return Err(format!("{file}: needs `summary`, a string")),
    };
    for (key, value) in &top {
        if !SETUP_KEYS.contains(&key.as_str()) || !value.is_object() {
            return Err(format!("{file}: `{key}` is not a setup table (tables: {})", SETUP_KEYS.join(", ")));
        }
    }
    Ok(Setup { name, summary, tables: top })
}

/// The names of the shipped setups.
pub fn names() -> Vec<&'static str> {
    setups().iter().map(|s| s.name).collect()
}

/// The setup `value` names; an error at `setup` naming the known ones otherwise.
pub fn find(value: &Value) -> Result<&'static Setup, SpecError> {
    let err = |message: String| SpecError { field: "setup".into(), message };
    let Some(name) = value.as_str() else {
        return Err(err(format!("expected a setup name (a string), got {} {value}", type_name(value))));
    };
    setups()
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| err(format!("unknown setup \"{name}\"; known: {}", names().join(", "))))
}

/// The spec with its `setup` (if any) replaced by the setup's tables, the spec's own tables merged
/// over them key by key. A spec without `setup` is returned as it is.
pub fn expand(spec: &Value) -> Result<Cow<'_, Value>, SpecError> {
    let Some(name) = spec.as_object().and_then(|m| m.get("setup")) else {
        return Ok(Cow::Borrowed(spec));
    };
    let setup = find(name)?;
    let mut own = spec.as_object().expect("a table: it has a key").clone();
    own.remove("setup");
    check_protocol(setup, &own)?;
    for (key, table) in &setup.tables {
        match own.get_mut(key) {
            None | Some(Value::Null) => {
                own.insert(key.clone(), table.clone());
            }
            Some(mine @ Value::Object(_)) => *mine = merged(table, mine),
            Some(_) => {} // not a table: left for the spec reader to reject, naming the field
        }
    }
    Ok(Cow::Owned(Value::Object(own)))
}

/// A spec naming a setup may not name another protocol in `[transport]`.
fn check_protocol(setup: &Setup, own: &Map<String, Value>) -> Result<(), SpecError> {
    let (Some(theirs), Some(mine)) = (setup.protocol(), own.get("transport").and_then(|t| t.get("protocol"))) else {
        return Ok(());
    };
    if mine.as_str() == Some(theirs) {
        return Ok(());
    }
    let shown = mine.as_str().map_or_else(|| mine.to_string(), |s| format!("\"{s}\""));
    Err(SpecError {
        field: "transport.protocol".into(),
        message: format!("{shown} contradicts setup \"{}\" (protocol {theirs}): drop one of them", setup.name),
    })
}

/// `over` merged over `base`: tables key by key, anything else replaced.
fn merged(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out = b.clone();
            for (k, v) in o {
                let m = match out.get(k) {
                    Some(bv) if v.is_object() && bv.is_object() => merged(bv, v),
                    _ => v.clone(),
                };
                out.insert(k.clone(), m);
            }
            Value::Object(out)
        }
        _ => over.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shipped_setups_read() {
        for &(name, text) in FILES {
            let s = read_setup(name, text).unwrap();
            assert!(s.protocol().is_some(), "{name}: every setup names its protocol");
        }
        assert_eq!(setups().len(), FILES.len());
    }

    #[test]
    fn the_specs_keys_are_merged_over_the_setup() {
        let spec =
            json!({"setup": "ndp-paper", "transport": {"initial_window_packets": 15}, "queue": {"limit_packets": 12}});
        let out = expand(&spec).unwrap();
        assert_eq!(out["transport"], json!({"protocol": "ndp", "initial_window_packets": 15}));
        assert_eq!(out["queue"]["limit_packets"], 12);
        assert_eq!(out["queue"]["trim"], true);
        assert!(out.get("setup").is_none());
    }

    #[test]
    fn errors_name_the_field() {
        let e = expand(&json!({"setup": "sird"})).unwrap_err();
        assert_eq!(e.field, "setup");
        assert!(e.message.starts_with("unknown setup \"sird\"; known: ndp-paper, "));
        assert_eq!(
            expand(&json!({"setup": 3})).unwrap_err().message,
            "expected a setup name (a string), got an integer 3"
        );
        let e = expand(&json!({"setup": "ndp-paper", "transport": {"protocol": "dctcp"}})).unwrap_err();
        assert_eq!(e.field, "transport.protocol");
        assert!(e.message.contains("contradicts setup"));
    }
}
