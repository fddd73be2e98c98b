//! The summary's schema, defined once: each part of the summary is a typed structure declared with
//! `summary_part!`, which gives both its JSON (fields in declaration order) and its schema (each
//! field's path, unit, description and sweep-table column). Front ends derive their tables from
//! the schema (`dcnsim._core.summary_schema()`), so a new summary field reaches them by itself.

use super::output::num;
use serde_json::{json, Map, Value};

/// One field of the summary.
#[derive(Clone, Debug)]
pub struct FieldDoc {
    /// Dotted path in the summary. `.{key}` stands for every key of a table (a tier, a counter);
    /// `[{key}]` for every item of a list, keyed by the item's `group`.
    pub path: String,
    /// The field's column in sweep result tables (`{key}` as in `path`); empty: not a column.
    pub column: String,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A value of the summary: how it is written as JSON, and the fields inside it (if it has parts).
pub trait SummaryValue {
    fn to_json(&self) -> Value;
    /// The schema of what is inside the value, under `path` (nothing for a plain value).
    fn inner_fields(_path: &str) -> Vec<FieldDoc> {
        Vec::new()
    }
    /// What a value's path gains for its items (`.{key}` for tables, `[{key}]` for lists of parts).
    fn item_segment() -> &'static str {
        ""
    }
}

macro_rules! plain_values {
    ($($t:ty),*) => {$(impl SummaryValue for $t { fn to_json(&self) -> Value { json!(self) } })*};
}
plain_values!(u64, usize, u32, bool, String, &'static str, Option<f64>, Option<u64>, Vec<String>);

/// A float that is not finite (an empty window's statistics) is null: JSON has no NaN.
impl SummaryValue for f64 {
    fn to_json(&self) -> Value {
        num(*self)
    }
}

/// Free-form JSON (the resolved spec, the per-setup transport list).
impl SummaryValue for Value {
    fn to_json(&self) -> Value {
        self.clone()
    }
}

/// A table keyed by name (tiers, counters): one column per key.
impl SummaryValue for Map<String, Value> {
    fn to_json(&self) -> Value {
        Value::Object(self.clone())
    }
    fn item_segment() -> &'static str {
        ".{key}"
    }
}

/// A list of parts keyed by their `group` (slowdown by flow size).
impl<T: SummaryPart> SummaryValue for Vec<T> {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(SummaryValue::to_json).collect())
    }
    fn inner_fields(path: &str) -> Vec<FieldDoc> {
        T::fields(&format!("{path}[{{key}}]"))
    }
}

/// A part of the summary declared with `summary_part!`.
pub trait SummaryPart: SummaryValue {
    /// The part's fields under `prefix` (its own path).
    fn fields(prefix: &str) -> Vec<FieldDoc>;
}

/// Declares a summary part: a struct whose fields each carry a sweep column ("" for none), a unit
/// and a description, written as JSON in declaration order.
macro_rules! summary_part {
    ($(#[$meta:meta])* pub struct $name:ident {
        $($field:ident: $ty:ty => ($column:literal, $unit:literal, $doc:literal)),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        pub struct $name { $(#[doc = $doc] pub $field: $ty),* }

        impl $crate::report::schema::SummaryValue for $name {
            fn to_json(&self) -> serde_json::Value {
                let mut m = serde_json::Map::new();
                $(m.insert(stringify!($field).into(), $crate::report::schema::SummaryValue::to_json(&self.$field));)*
                serde_json::Value::Object(m)
            }
            fn inner_fields(path: &str) -> Vec<$crate::report::schema::FieldDoc> {
                <Self as $crate::report::schema::SummaryPart>::fields(path)
            }
        }

        impl $crate::report::schema::SummaryPart for $name {
            fn fields(prefix: &str) -> Vec<$crate::report::schema::FieldDoc> {
                let mut out = Vec::new();
                $($crate::report::schema::push_field::<$ty>(&mut out, prefix, stringify!($field), $column, $unit, $doc);)*
                out
            }
        }
    };
}
pub(crate) use summary_part;

/// Adds a field to a schema: the field itself, or the fields inside it if it has parts.
pub fn push_field<T: SummaryValue>(
    out: &mut Vec<FieldDoc>,
    prefix: &str,
    name: &str,
    column: &'static str,
    unit: &'static str,
    doc: &'static str,
) {
    let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    let inner = T::inner_fields(&path);
    if inner.is_empty() {
        // A part used in several places (slowdown, FCT) names its columns after its own path.
        let column = column.replace("{prefix}", &prefix.replace('.', "_"));
        out.push(FieldDoc { path: format!("{path}{}", T::item_segment()), column, unit, doc });
    } else {
        out.extend(inner);
    }
}
