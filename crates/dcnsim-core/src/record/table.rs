//! Column-oriented result tables, handed as-is to Python (pandas/Arrow) and to the Rust bench.

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    /// Integers that may be missing (e.g. the end time of a flow that did not finish).
    OptU64(OptU64s),
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

/// A column of optional integers as values plus a presence flag: 9 bytes a row where
/// `Vec<Option<u64>>` takes 16 (flow tables run to tens of millions of rows).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptU64s {
    /// The value of each row; 0 where it is missing.
    pub values: Vec<u64>,
    pub present: Vec<bool>,
}

impl OptU64s {
    pub fn with_capacity(n: usize) -> OptU64s {
        OptU64s { values: Vec::with_capacity(n), present: Vec::with_capacity(n) }
    }

    pub fn push(&mut self, x: Option<u64>) {
        self.values.push(x.unwrap_or(0));
        self.present.push(x.is_some());
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<u64> {
        self.present[i].then_some(self.values[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<u64>> + '_ {
        self.values.iter().zip(&self.present).map(|(&v, &p)| p.then_some(v))
    }
}

impl FromIterator<Option<u64>> for OptU64s {
    fn from_iter<I: IntoIterator<Item = Option<u64>>>(it: I) -> OptU64s {
        let mut c = OptU64s::default();
        it.into_iter().for_each(|x| c.push(x));
        c
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
                        if let Some(x) = v.get(r) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_column_keeps_missing_rows_apart_from_zero() {
        let c: OptU64s = [Some(0), None, Some(7)].into_iter().collect();
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![Some(0), None, Some(7)]);
        assert_eq!((c.len(), c.get(1), c.values[1]), (3, None, 0));
        let mut t = Table::default();
        t.push("end_ps", Column::OptU64(c));
        assert_eq!(t.to_csv(), "end_ps\n0\n\n7\n");
    }
}
