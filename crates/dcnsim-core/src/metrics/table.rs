//! Column-oriented result tables, handed as-is to Python (pandas/Arrow) and to the Rust bench.

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    /// Integers that may be missing (e.g. the end time of a flow that did not finish).
    OptU64(Vec<Option<u64>>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Strings from a small set, as codes into `categories` (long tables: traces).
    Cat {
        categories: Vec<String>,
        codes: Vec<u32>,
    },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Cat { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table whose columns all have the same length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, col: Column) {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(first.len(), col.len(), "column {name} has a different length");
        }
        self.columns.push((name.to_string(), col));
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Writes the table as CSV (used by the Rust bench and in tests; Python writes Parquet).
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| n.as_str()).collect();
        s.push_str(&names.join(","));
        s.push('\n');
        for r in 0..self.rows() {
            for (i, (_, c)) in self.columns.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                match c {
                    Column::U64(v) => s.push_str(&v[r].to_string()),
                    Column::OptU64(v) => {
                        if let Some(x) = v[r] {
                            s.push_str(&x.to_string())
                        }
                    }
                    Column::F64(v) => s.push_str(&format!("{:?}", v[r])),
                    Column::Bool(v) => s.push_str(if v[r] { "true" } else { "false" }),
                    Column::Str(v) => s.push_str(&v[r]),
                    Column::Cat { categories, codes } => s.push_str(&categories[codes[r] as usize]),
                }
            }
            s.push('\n');
        }
        s
    }
}
