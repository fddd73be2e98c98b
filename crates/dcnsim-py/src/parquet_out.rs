//! Writes a result table straight to Parquet (zstd) from the core's columns: no Python object,
//! numpy array or pandas frame per table, so `dcnsim run` and the sweep store never import pandas
//! or pyarrow to save a run (they cost 0.5-1 s and about 100 MB at start-up).
//!
//! The files read back exactly as the pandas-written ones did: every column's Arrow type is the
//! one `pyarrow.Table.from_pandas` gave the DataFrame of `dcnsim.Result` (strings dictionary
//! encoded, so pandas reads them as categoricals), and the `pandas` metadata names the nullable
//! integer columns `UInt64` so that `pandas.read_parquet` restores them as such (not as floats).
//! One difference: the Parquet writer re-encodes dictionaries, so a categorical column read back
//! from a file has the categories that occur in it, in order of first occurrence (pyarrow kept a
//! column's unused categories too, e.g. every trace event kind); the values are the same.
//! Rows go in chunks, so writing a 10-million-flow table holds one chunk of Arrow arrays at a time.

use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::UInt64Array;
use arrow_array::{Array, ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dcnsim_core::record::table::{Column, OptU64s, Table};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// Rows per Arrow batch handed to the writer (row groups stay the writer's default size).
const CHUNK_ROWS: usize = 1 << 16;

/// The flow table's exact picosecond times that the file also carries in microseconds (float,
/// NaN where missing), appended after the other columns as `dcnsim.result.with_microseconds` does.
pub const MICROSECOND_COLUMNS: [(&str, &str); 4] =
    [("start_ps", "start_us"), ("end_ps", "end_us"), ("fct_ps", "fct_us"), ("ideal_fct_ps", "ideal_fct_us")];

/// A column ready to slice into Arrow arrays: strings become codes into their distinct values.
enum Source<'a> {
    U64(&'a [u64]),
    OptU64(&'a OptU64s),
    F64(&'a [f64]),
    Bool(&'a [bool]),
    Micros(&'a Column),
    Cat(Arc<StringArray>, Vec<i32>),
}

fn codes_of(v: &[String]) -> (Vec<&str>, Vec<i32>) {
    // First-seen order, as the extension's `cat` encoding for DataFrames.
    let mut index: HashMap<&str, i32> = HashMap::new();
    let mut categories = Vec::new();
    let codes = v
        .iter()
        .map(|s| {
            *index.entry(s.as_str()).or_insert_with(|| {
                categories.push(s.as_str());
                (categories.len() - 1) as i32
            })
        })
        .collect();
    (categories, codes)
}

impl<'a> Source<'a> {
    fn new(c: &'a Column) -> Source<'a> {
        match c {
            Column::U64(v) => Source::U64(v),
            Column::OptU64(v) => Source::OptU64(v),
            Column::F64(v) => Source::F64(v),
            Column::Bool(v) => Source::Bool(v),
            Column::Str(v) => {
                let (categories, codes) = codes_of(v);
                Source::Cat(Arc::new(StringArray::from(categories)), codes)
            }
            Column::Cat { categories, codes } => {
                let values = StringArray::from_iter_values(categories.iter());
                Source::Cat(Arc::new(values), codes.iter().map(|&c| c as i32).collect())
            }
        }
    }

    fn data_type(&self) -> DataType {
        match self {
            Source::U64(_) | Source::OptU64(_) => DataType::UInt64,
            Source::F64(_) | Source::Micros(_) => DataType::Float64,
            Source::Bool(_) => DataType::Boolean,
            Source::Cat(..) => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        }
    }

    /// (pandas_type, numpy_type) as pyarrow records a DataFrame column of this kind.
    fn pandas_types(&self) -> (&'static str, &'static str) {
        match self {
            Source::U64(_) => ("uint64", "uint64"),
            Source::OptU64(_) => ("uint64", "UInt64"),
            Source::F64(_) | Source::Micros(_) => ("float64", "float64"),
            Source::Bool(_) => ("bool", "bool"),
            Source::Cat(..) => ("categorical", "int32"),
        }
    }

    fn slice(&self, lo: usize, hi: usize) -> ArrayRef {
        match self {
            Source::U64(v) => Arc::new(UInt64Array::from(v[lo..hi].to_vec())),
            Source::OptU64(v) => Arc::new(UInt64Array::from_iter((lo..hi).map(|i| v.get(i)))),
            Source::F64(v) => Arc::new(Float64Array::from(v[lo..hi].to_vec())),
            Source::Bool(v) => Arc::new(BooleanArray::from(v[lo..hi].to_vec())),
            Source::Micros(Column::U64(v)) => {
                Arc::new(Float64Array::from_iter_values(v[lo..hi].iter().map(|&x| micros(x))))
            }
            Source::Micros(Column::OptU64(v)) => {
                Arc::new(Float64Array::from_iter_values((lo..hi).map(|i| v.get(i).map_or(f64::NAN, micros))))
            }
            Source::Micros(_) => unreachable!("only integer picosecond columns have microsecond copies"),
            Source::Cat(values, codes) => {
                let keys = Int32Array::from(codes[lo..hi].to_vec());
                let values: ArrayRef = values.clone();
                Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).expect("codes index the categories"))
            }
        }
    }
}

/// Picoseconds as microseconds, exactly as `dcnsim.result` computes them (float64, then / 1e6).
fn micros(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// The `pandas` schema metadata pyarrow writes for a DataFrame without its index: it tells
/// `pandas.read_parquet` which columns are nullable `UInt64` and that the frame has a plain index.
fn pandas_metadata(columns: &[(&str, &Source)]) -> String {
    let cols: Vec<serde_json::Value> = columns
        .iter()
        .map(|(name, s)| {
            let (pandas_type, numpy_type) = s.pandas_types();
            let metadata = match s {
                Source::Cat(values, _) => serde_json::json!({"num_categories": values.len(), "ordered": false}),
                _ => serde_json::Value::Null,
            };
            serde_json::json!({"name": name, "field_name": name, "pandas_type": pandas_type,
                               "numpy_type": numpy_type, "metadata": metadata})
        })
        .collect();
    serde_json::json!({
        "index_columns": [],
        "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode", "numpy_type": "object",
                            "metadata": {"encoding": "UTF-8"}}],
        "columns": cols,
        "creator": {"library": "dcnsim", "version": dcnsim_core::VERSION},
    })
    .to_string()
}

/// Writes `table` to `path` as Parquet (zstd), with `metadata` as key-value pairs beside the
/// schema. With `micros`, the picosecond time columns are repeated in microseconds at the end.
pub fn write(table: &Table, path: &str, metadata: &[(String, String)], micros: bool) -> Result<(), String> {
    let mut columns: Vec<(&str, Source)> = table.columns.iter().map(|(n, c)| (n.as_str(), Source::new(c))).collect();
    if micros {
        for (ps, us) in MICROSECOND_COLUMNS {
            if let Some(c @ (Column::U64(_) | Column::OptU64(_))) = table.get(ps) {
                if table.get(us).is_none() {
                    columns.push((us, Source::Micros(c)));
                }
            }
        }
    }
    let named: Vec<(&str, &Source)> = columns.iter().map(|(n, s)| (*n, s)).collect();
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, s)| Field::new(*n, s.data_type(), matches!(s, Source::OptU64(_) | Source::Micros(_))))
        .collect();
    let mut meta: Vec<(String, String)> = metadata.to_vec();
    meta.push(("pandas".into(), pandas_metadata(&named)));
    let schema = Arc::new(Schema::new(fields).with_metadata(meta.iter().cloned().collect::<HashMap<String, String>>()));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(Some(meta.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect()))
        .build();
    let file = File::create(path).map_err(|e| format!("cannot write {path}: {e}"))?;
    let err = |e: parquet::errors::ParquetError| format!("cannot write {path}: {e}");
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(err)?;
    let rows = table.rows();
    for lo in (0..rows).step_by(CHUNK_ROWS) {
        let hi = (lo + CHUNK_ROWS).min(rows);
        let arrays = columns.iter().map(|(_, s)| s.slice(lo, hi)).collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| format!("cannot write {path}: {e}"))?;
        writer.write(&batch).map_err(err)?;
    }
    writer.close().map_err(err)?;
    Ok(())
}
