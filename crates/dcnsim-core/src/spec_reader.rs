//! Reading a spec section by section, with errors that name the field and, from the same calls, the
//! parameter documentation that `dcnsim describe` prints. One source of truth: a parameter exists
//! in the docs exactly when some reader asks for it.
//!
//! A `Section` wraps one table of the spec. Every `get`-style call consumes a key; `finish` rejects
//! keys nobody asked for (typos), suggesting the closest known key. In describe mode there is no
//! table: calls record a `ParamDoc` and return the default (or a harmless placeholder for required
//! keys), and checks never fail.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// A spec error: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    /// Dotted path of the field, e.g. `workload[0].load`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "spec error at `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

pub type SpecResult<T> = Result<T, SpecError>;

/// What a missing number reads as: TOML's nan and inf become null on the way to JSON.
const NOT_FINITE: &str = "expected a finite number, got null (NaN or infinity?)";

/// Largest magnitude of a time in microseconds (11.6 days; picoseconds in a u64 reach 213).
pub const MAX_US: f64 = 1e12;

/// One documented parameter.
#[derive(Clone, Debug)]
pub struct ParamDoc {
    pub path: String,
    pub kind: String,
    pub unit: &'static str,
    /// `None` when the key is required.
    pub default: Option<String>,
    pub doc: &'static str,
    /// The protocol (or other variant) the key belongs to, where keys of one table depend on a choice.
    pub scope: Option<&'static str>,
}

enum Mode<'a> {
    Read(&'a Map<String, Value>),
    Describe(&'a RefCell<Vec<ParamDoc>>, Option<&'static str>),
}

/// Where a reading records the value it resolved for every key (defaults included).
pub type Resolved = RefCell<Vec<(String, Value)>>;

pub struct Section<'a> {
    path: String,
    mode: Mode<'a>,
    used: Vec<String>,
    rec: Option<&'a Resolved>,
}

/// What kind of value `v` is, as an error message says it ("an integer", "a table").
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

impl<'a> Section<'a> {
    pub fn new(path: impl Into<String>, table: &'a Map<String, Value>) -> Section<'a> {
        Section { path: path.into(), mode: Mode::Read(table), used: Vec::new(), rec: None }
    }

    /// Reads `table` and records every resolved value into `rec` (see `resolved_to_json`).
    pub fn recording(path: impl Into<String>, table: &'a Map<String, Value>, rec: &'a Resolved) -> Section<'a> {
        Section { path: path.into(), mode: Mode::Read(table), used: Vec::new(), rec: Some(rec) }
    }

    fn child(&self, path: String, table: &'a Map<String, Value>) -> Section<'a> {
        Section { path, mode: Mode::Read(table), used: Vec::new(), rec: self.rec }
    }

    fn note<T: Into<Value>>(&self, key: &str, v: T) {
        if let Some(r) = self.rec {
            r.borrow_mut().push((self.field(key), v.into()));
        }
    }

    pub fn describe(path: impl Into<String>, docs: &'a RefCell<Vec<ParamDoc>>) -> Section<'a> {
        Section { path: path.into(), mode: Mode::Describe(docs, None), used: Vec::new(), rec: None }
    }

    /// A describe section whose keys are documented as belonging to `scope` (e.g. one protocol).
    pub fn describe_scoped(
        path: impl Into<String>,
        docs: &'a RefCell<Vec<ParamDoc>>,
        scope: &'static str,
    ) -> Section<'a> {
        Section { path: path.into(), mode: Mode::Describe(docs, Some(scope)), used: Vec::new(), rec: None }
    }

    /// The documentation sink, in describe mode.
    pub fn describe_docs(&self) -> Option<&'a RefCell<Vec<ParamDoc>>> {
        match self.mode {
            Mode::Describe(d, _) => Some(d),
            Mode::Read(_) => None,
        }
    }

    pub fn is_describe(&self) -> bool {
        matches!(self.mode, Mode::Describe(..))
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    /// An error about `key` of this section.
    pub fn err(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError { field: self.field(key), message: message.into() }
    }

    /// Fails with `message` unless `ok` (never fails in describe mode).
    pub fn ensure(&self, ok: bool, key: &str, message: impl Into<String>) -> SpecResult<()> {
        if ok || self.is_describe() {
            Ok(())
        } else {
            Err(self.err(key, message))
        }
    }

    fn record(&self, key: &str, kind: String, unit: &'static str, default: Option<String>, doc: &'static str) {
        if let Mode::Describe(docs, scope) = &self.mode {
            docs.borrow_mut().push(ParamDoc { path: self.field(key), kind, unit, default, doc, scope: *scope });
        }
    }

    fn raw(&mut self, key: &str) -> Option<&'a Value> {
        self.used.push(key.to_string());
        match self.mode {
            Mode::Read(m) => m.get(key),
            Mode::Describe(..) => None,
        }
    }

    /// Whether the key is present (does not consume it).
    pub fn has(&self, key: &str) -> bool {
        match self.mode {
            Mode::Read(m) => m.contains_key(key),
            Mode::Describe(..) => false,
        }
    }

    /// Whether `key` is given as an array (for keys that take one value or a list).
    pub fn is_array(&self, key: &str) -> bool {
        match self.mode {
            Mode::Read(m) => matches!(m.get(key), Some(Value::Array(_))),
            Mode::Describe(..) => false,
        }
    }

    fn missing(&self, key: &str) -> SpecError {
        let mut msg = "required key is missing".to_string();
        if let Mode::Read(m) = self.mode {
            if let Some(near) = m.keys().filter(|k| k.as_str() != key).min_by_key(|k| edit_distance(k, key)) {
                if edit_distance(near, key) <= 2 {
                    msg.push_str(&format!(" (`{near}` is given: a misspelling?)"));
                }
            }
        }
        self.err(key, msg)
    }

    fn as_f64(&self, key: &str, v: &Value) -> SpecResult<f64> {
        match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            Some(_) => Err(self.err(key, "must be a finite number")),
            None if v.is_null() => Err(self.err(key, NOT_FINITE)),
            None => Err(self.err(key, format!("expected a number, got {}", type_name(v)))),
        }
    }

    /// Checks every float key by its unit suffix: a `_gbps` key must be a rate the engine
    /// represents, a `_us` key a time it can hold (each reader checks its own range besides).
    fn check_unit(&self, key: &str, x: f64) -> SpecResult<()> {
        if key.ends_with("_gbps") {
            crate::limits::check_gbps(x).map_err(|m| self.err(key, m))?;
        }
        if key.ends_with("_us") && x.abs() > MAX_US {
            return Err(self.err(key, format!("must be at most {MAX_US:e} us in magnitude, got {x}")));
        }
        Ok(())
    }

    fn as_u64(&self, key: &str, v: &Value) -> SpecResult<u64> {
        if let Some(x) = v.as_u64() {
            return Ok(x);
        }
        match v {
            Value::Number(n) if n.as_i64().is_some() => {
                Err(self.err(key, format!("must be a non-negative integer, got {n}")))
            }
            Value::Number(n) => Err(self.err(key, format!("expected an integer, got the float {n}"))),
            Value::Null => Err(self.err(key, NOT_FINITE)),
            _ => Err(self.err(key, format!("expected an integer, got {}", type_name(v)))),
        }
    }

    pub fn f64(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<f64> {
        self.record(key, "float".into(), unit, None, doc);
        let r = match self.raw(key) {
            Some(v) => self.as_f64(key, v),
            None if self.is_describe() => Ok(1.0),
            None => Err(self.missing(key)),
        }?;
        if !self.is_describe() {
            self.check_unit(key, r)?;
        }
        self.note(key, r);
        Ok(r)
    }

    pub fn f64_or(&mut self, key: &str, default: f64, unit: &'static str, doc: &'static str) -> SpecResult<f64> {
        self.record(key, "float".into(), unit, Some(format!("{default}")), doc);
        let r = match self.raw(key) {
            Some(v) => self.as_f64(key, v),
            None => Ok(default),
        }?;
        if self.has(key) {
            self.check_unit(key, r)?;
        }
        self.note(key, r);
        Ok(r)
    }

    /// An optional float with no default value (absent means "not set", e.g. no limit).
    pub fn f64_opt(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<Option<f64>> {
        self.record(key, "float".into(), unit, Some("unset".into()), doc);
        let r = match self.raw(key) {
            Some(v) => self.as_f64(key, v).map(Some),
            None => Ok(None),
        }?;
        if let Some(x) = r {
            self.check_unit(key, x)?;
            self.note(key, x);
        }
        Ok(r)
    }

    pub fn u64(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<u64> {
        self.record(key, "integer".into(), unit, None, doc);
        let r = match self.raw(key) {
            Some(v) => self.as_u64(key, v),
            None if self.is_describe() => Ok(1),
            None => Err(self.missing(key)),
        }?;
        self.note(key, r);
        Ok(r)
    }

    pub fn u64_or(&mut self, key: &str, default: u64, unit: &'static str, doc: &'static str) -> SpecResult<u64> {
        self.record(key, "integer".into(), unit, Some(format!("{default}")), doc);
        let r = match self.raw(key) {
            Some(v) => self.as_u64(key, v),
            None => Ok(default),
        }?;
        self.note(key, r);
        Ok(r)
    }

    pub fn u64_opt(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<Option<u64>> {
        self.record(key, "integer".into(), unit, Some("unset".into()), doc);
        let r = match self.raw(key) {
            Some(v) => self.as_u64(key, v).map(Some),
            None => Ok(None),
        }?;
        if let Some(x) = r {
            self.note(key, x);
        }
        Ok(r)
    }

    pub fn bool_or(&mut self, key: &str, default: bool, doc: &'static str) -> SpecResult<bool> {
        self.record(key, "bool".into(), "", Some(format!("{default}")), doc);
        let r = match self.raw(key) {
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(key, format!("expected true or false, got {}", type_name(v)))),
            None => Ok(default),
        }?;
        self.note(key, r);
        Ok(r)
    }

    pub fn string(&mut self, key: &str, doc: &'static str) -> SpecResult<String> {
        self.record(key, "string".into(), "", None, doc);
        let r = match self.raw(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", type_name(v)))),
            None if self.is_describe() => Ok(String::new()),
            None => Err(self.missing(key)),
        }?;
        self.note(key, r.clone());
        Ok(r)
    }

    pub fn string_opt(&mut self, key: &str, doc: &'static str) -> SpecResult<Option<String>> {
        self.record(key, "string".into(), "", Some("unset".into()), doc);
        let r = match self.raw(key) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", type_name(v)))),
            None => Ok(None),
        }?;
        if let Some(x) = &r {
            self.note(key, x.clone());
        }
        Ok(r)
    }

    fn check_choice(&self, key: &str, s: &str, choices: &[&str]) -> SpecResult<()> {
        if choices.contains(&s) {
            return Ok(());
        }
        let mut msg = format!("unknown value \"{s}\"; expected one of: {}", choices.join(", "));
        if let Some(best) = choices.iter().min_by_key(|c| edit_distance(s, c)) {
            if edit_distance(s, best) <= 2 {
                msg.push_str(&format!(" (did you mean \"{best}\"?)"));
            }
        }
        Err(self.err(key, msg))
    }

    /// A name from a fixed list; required. In describe mode returns the first choice.
    pub fn choice(&mut self, key: &str, choices: &[&str], doc: &'static str) -> SpecResult<String> {
        self.record(key, format!("one of {}", choices.join("|")), "", None, doc);
        let r = match self.raw(key) {
            Some(Value::String(s)) => self.check_choice(key, s, choices).map(|_| s.clone()),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", type_name(v)))),
            None if self.is_describe() => Ok(choices[0].to_string()),
            None => Err(self.missing(key)),
        }?;
        self.note(key, r.clone());
        Ok(r)
    }

    pub fn choice_or(&mut self, key: &str, choices: &[&str], default: &str, doc: &'static str) -> SpecResult<String> {
        debug_assert!(choices.contains(&default));
        self.record(key, format!("one of {}", choices.join("|")), "", Some(format!("\"{default}\"")), doc);
        let r = match self.raw(key) {
            Some(Value::String(s)) => self.check_choice(key, s, choices).map(|_| s.clone()),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", type_name(v)))),
            None => Ok(default.to_string()),
        }?;
        self.note(key, r.clone());
        Ok(r)
    }

    /// A required list of non-negative integers (e.g. host ids).
    pub fn u64_list(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<Vec<u64>> {
        self.record(key, "array of integers".into(), unit, None, doc);
        let r: Vec<u64> = match self.raw(key) {
            Some(Value::Array(a)) => {
                a.iter().enumerate().map(|(i, v)| self.as_u64(&format!("{key}[{i}]"), v)).collect()
            }
            Some(v) => Err(self.err(key, format!("expected an array, got {}", type_name(v)))),
            None if self.is_describe() => Ok(vec![]),
            None => Err(self.missing(key)),
        }?;
        self.note(key, r.clone());
        Ok(r)
    }

    /// An optional list of non-negative integers; empty when absent.
    pub fn u64_list_or(&mut self, key: &str, unit: &'static str, doc: &'static str) -> SpecResult<Vec<u64>> {
        if self.has(key) || self.is_describe() {
            return self.u64_list(key, unit, doc);
        }
        self.record(key, "array of integers".into(), unit, Some("[]".into()), doc);
        Ok(Vec::new())
    }

    /// A list of floats (e.g. size-group edges); `default` when absent.
    pub fn f64_list_or(
        &mut self,
        key: &str,
        default: &[f64],
        unit: &'static str,
        doc: &'static str,
    ) -> SpecResult<Vec<f64>> {
        self.record(key, "array of floats".into(), unit, Some(format!("{default:?}")), doc);
        let r: Vec<f64> = match self.raw(key) {
            Some(Value::Array(a)) => {
                a.iter().enumerate().map(|(i, v)| self.as_f64(&format!("{key}[{i}]"), v)).collect()
            }
            Some(v) => Err(self.err(key, format!("expected an array, got {}", type_name(v)))),
            None => Ok(default.to_vec()),
        }?;
        self.note(key, r.clone());
        Ok(r)
    }

    /// An optional array whose items the caller checks (e.g. inline rows); recorded as given.
    pub fn array_opt(&mut self, key: &str, kind: &str, doc: &'static str) -> SpecResult<Option<&'a Vec<Value>>> {
        self.record(key, kind.into(), "", Some("unset".into()), doc);
        let r = match self.raw(key) {
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(self.err(key, format!("expected an array, got {}", type_name(v)))),
            None => Ok(None),
        }?;
        if let Some(a) = r {
            self.note(key, Value::Array(a.clone()));
        }
        Ok(r)
    }

    /// A nested table. Absent tables read as empty (all defaults), so `[net]` may be omitted.
    pub fn table(&mut self, key: &str, doc: &'static str) -> SpecResult<Section<'a>> {
        let path = self.field(key);
        self.record(key, "table".into(), "", Some("{}".into()), doc);
        let raw = self.raw(key);
        match (&self.mode, raw) {
            (Mode::Describe(d, scope), _) => {
                Ok(Section { path, mode: Mode::Describe(d, *scope), used: Vec::new(), rec: None })
            }
            (_, Some(Value::Object(m))) => Ok(self.child(path, m)),
            (_, Some(v)) => Err(self.err(key, format!("expected a table, got {}", type_name(v)))),
            (_, None) => Ok(self.child(path, empty_map())),
        }
    }

    /// Whether a nested table is present (for optional override tables).
    pub fn table_opt(&mut self, key: &str, doc: &'static str) -> SpecResult<Option<Section<'a>>> {
        if self.is_describe() || self.has(key) {
            self.table(key, doc).map(Some)
        } else {
            self.used.push(key.to_string());
            Ok(None)
        }
    }

    /// An array of tables (`[[workload]]`). In describe mode returns one describe section.
    pub fn tables(&mut self, key: &str, doc: &'static str) -> SpecResult<Vec<Section<'a>>> {
        let path = self.field(key);
        self.record(key, "array of tables".into(), "", None, doc);
        let raw = self.raw(key);
        match (&self.mode, raw) {
            (Mode::Describe(d, scope), _) => Ok(vec![Section {
                path: format!("{path}[]"),
                mode: Mode::Describe(d, *scope),
                used: Vec::new(),
                rec: None,
            }]),
            (_, Some(Value::Array(a))) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Object(m) => Ok(self.child(format!("{path}[{i}]"), m)),
                    _ => Err(SpecError {
                        field: format!("{path}[{i}]"),
                        message: format!("expected a table, got {}", type_name(v)),
                    }),
                })
                .collect(),
            (_, Some(Value::Object(m))) => Ok(vec![self.child(format!("{path}[0]"), m)]),
            (_, Some(v)) => Err(self.err(key, format!("expected an array of tables, got {}", type_name(v)))),
            (_, None) => Err(self.missing(key)),
        }
    }

    /// An optional array of tables: absent reads as empty.
    pub fn tables_opt(&mut self, key: &str, doc: &'static str) -> SpecResult<Vec<Section<'a>>> {
        if self.is_describe() || self.has(key) {
            self.tables(key, doc)
        } else {
            self.used.push(key.to_string());
            Ok(Vec::new())
        }
    }

    /// A table of named tables (`[transports.bulk]`, `[transports.fg]`): each name with its section,
    /// in the spec's order. Absent reads as empty; in describe mode one section named `<name>`.
    pub fn named_tables(&mut self, key: &str, doc: &'static str) -> SpecResult<Vec<(String, Section<'a>)>> {
        let path = self.field(key);
        self.record(key, "table of tables".into(), "", Some("{}".into()), doc);
        let raw = self.raw(key);
        match (&self.mode, raw) {
            (Mode::Describe(d, scope), _) => Ok(vec![(
                "<name>".into(),
                Section {
                    path: format!("{path}.<name>"),
                    mode: Mode::Describe(d, *scope),
                    used: Vec::new(),
                    rec: None,
                },
            )]),
            (_, None) => Ok(Vec::new()),
            (_, Some(Value::Object(m))) => m
                .iter()
                .map(|(name, v)| match v {
                    Value::Object(t) => Ok((name.clone(), self.child(format!("{path}.{name}"), t))),
                    _ => Err(SpecError {
                        field: format!("{path}.{name}"),
                        message: format!("expected a table, got {}", type_name(v)),
                    }),
                })
                .collect(),
            (_, Some(v)) => Err(self.err(key, format!("expected a table of tables, got {}", type_name(v)))),
        }
    }

    /// Fails if the spec still uses a key under its old name, pointing to the new one.
    pub fn renamed(&mut self, old: &str, new: &str) -> SpecResult<()> {
        if self.has(old) {
            return Err(self.err(old, format!("was renamed to `{new}`")));
        }
        Ok(())
    }

    /// Rejects keys that no reader consumed.
    pub fn finish(self) -> SpecResult<()> {
        let Mode::Read(m) = self.mode else { return Ok(()) };
        for key in m.keys() {
            if !self.used.iter().any(|u| u == key) {
                let mut msg = "unknown key".to_string();
                if let Some(best) = self.used.iter().min_by_key(|u| edit_distance(key, u)) {
                    if edit_distance(key, best) <= 3 {
                        msg.push_str(&format!(" (did you mean `{best}`?)"));
                    }
                }
                if !self.used.is_empty() {
                    let mut known: Vec<&str> = self.used.iter().map(|s| s.as_str()).collect();
                    known.sort();
                    known.dedup();
                    msg.push_str(&format!("; known keys here: {}", known.join(", ")));
                }
                return Err(SpecError { field: self.field(key), message: msg });
            }
        }
        Ok(())
    }
}

/// Builds the nested JSON document from recorded `(dotted.path[i].key, value)` pairs.
pub fn resolved_to_json(rec: &[(String, Value)]) -> Value {
    let mut root = Value::Object(Map::new());
    for (path, v) in rec {
        insert_path(&mut root, &path.split('.').collect::<Vec<_>>(), v.clone());
    }
    root
}

fn insert_path(node: &mut Value, segs: &[&str], v: Value) {
    let seg = segs[0];
    let (name, index) = match seg.find('[') {
        Some(b) => (&seg[..b], seg[b + 1..seg.len() - 1].parse::<usize>().ok()),
        None => (seg, None),
    };
    let obj = node.as_object_mut().expect("resolved path crosses a non-table");
    match index {
        None if segs.len() == 1 => {
            obj.insert(name.to_string(), v);
        }
        None => insert_path(obj.entry(name.to_string()).or_insert_with(|| Value::Object(Map::new())), &segs[1..], v),
        Some(ix) => {
            let arr = obj.entry(name.to_string()).or_insert_with(|| Value::Array(Vec::new()));
            let arr = arr.as_array_mut().expect("resolved array");
            while arr.len() <= ix {
                arr.push(Value::Object(Map::new()));
            }
            insert_path(&mut arr[ix], &segs[1..], v);
        }
    }
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let v = json!({"load": -0.5, "k": 3.5, "name": 4, "lod": 1});
        let m = v.as_object().unwrap();
        let mut s = Section::new("workload[0]", m);
        let load = s.f64("load", "", "").unwrap();
        let e = s.ensure(load >= 0.0, "load", "must be >= 0").unwrap_err();
        assert_eq!(e.field, "workload[0].load");
        let e = s.u64("k", "", "").unwrap_err();
        assert!(e.message.contains("float"), "{e}");
        let e = s.string("name", "").unwrap_err();
        assert!(e.message.contains("expected a string"), "{e}");
        let e = s.finish().unwrap_err();
        assert_eq!(e.field, "workload[0].lod");
        assert!(e.message.contains("did you mean `load`"), "{e}");
    }

    #[test]
    fn keys_are_checked_by_their_unit() {
        // Any `_gbps` key (a transport's pacing rate, say) must be a rate the engine represents, any
        // `_us` key a time it can hold; NaN and infinity (null once in JSON) are named as such.
        let v =
            json!({"pace_rate_gbps": 1e-10, "fast_gbps": 2e6, "ok_gbps": 25.0, "wait_us": 1e300, "x": null, "n": null});
        let mut s = Section::new("transport", v.as_object().unwrap());
        let e = s.f64_or("pace_rate_gbps", 1.0, "Gb/s", "").unwrap_err();
        assert_eq!(e.field, "transport.pace_rate_gbps");
        assert!(e.message.contains("must be in"), "{e}");
        assert!(s.f64_opt("fast_gbps", "Gb/s", "").is_err());
        assert_eq!(s.f64("ok_gbps", "Gb/s", "").unwrap(), 25.0);
        assert!(s.f64_or("wait_us", 0.0, "us", "").unwrap_err().message.contains("at most"));
        assert!(s.f64("x", "", "").unwrap_err().message.contains("finite"));
        assert!(s.u64("n", "", "").unwrap_err().message.contains("finite"));
        // Defaults are not checked (a reader may default a rate to "unset" differently).
        assert_eq!(s.f64_or("absent_gbps", 0.0, "Gb/s", "").unwrap(), 0.0);
    }

    #[test]
    fn choices_suggest() {
        let v = json!({"protocol": "dctpc"});
        let mut s = Section::new("transport", v.as_object().unwrap());
        let e = s.choice("protocol", &["dctcp", "newreno"], "").unwrap_err();
        assert!(e.message.contains("did you mean \"dctcp\""), "{e}");
    }

    #[test]
    fn describe_records_defaults() {
        let docs = RefCell::new(Vec::new());
        let mut s = Section::describe("net", &docs);
        assert_eq!(s.u64_or("mtu_bytes", 1500, "bytes", "MTU").unwrap(), 1500);
        s.f64("rate_gbps", "Gb/s", "rate").unwrap();
        let d = docs.borrow();
        assert_eq!(d[0].path, "net.mtu_bytes");
        assert_eq!(d[0].default.as_deref(), Some("1500"));
        assert!(d[1].default.is_none());
    }
}
