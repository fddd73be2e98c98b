//! The `dcnsim._core` extension: runs a spec (as JSON text) with the interpreter lock released and
//! hands the result tables back column by column. Tables can hold millions of rows, so no column
//! crosses as one Python object per row: numbers go as little-endian bytes that numpy wraps with
//! `frombuffer`, strings as their distinct values plus integer codes. The Python package
//! (`dcnsim.result`) turns these into DataFrames, and only when asked: a run's tables stay here
//! (`RunOutput`) and are written to Parquet from Rust (`parquet_out`) without passing through Python.
//!
//! A panic inside the core (a dcnsim bug) never crosses into Python as pyo3's PanicException (a
//! BaseException that sweeps cannot catch or pickle): it becomes a SimulationError naming it.
//! A run can be stopped from another thread through a `CancelFlag`.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

mod parquet_out;

use dcnsim_core::api::{self, RunError, RunOptions};
use dcnsim_core::record::table::{Column, Table};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    dcnsim._core,
    SpecError,
    PyValueError,
    "A malformed or impossible spec. `field` is the dotted path of the offending key \
     (e.g. `workload[0].load`), `message` says what is wrong with it."
);
create_exception!(
    dcnsim._core,
    SimulationError,
    PyRuntimeError,
    "A run that failed for a reason other than its spec: an internal invariant was violated \
     (a dcnsim bug; the message says which) or a file could not be read."
);

fn spec_error(py: Python<'_>, field: &str, message: &str) -> PyErr {
    let err = SpecError::new_err(format!("spec error at `{field}`: {message}"));
    let value = err.value(py);
    match value.setattr("field", field).and_then(|_| value.setattr("message", message)) {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn to_py_err(py: Python<'_>, e: RunError) -> PyErr {
    match e {
        RunError::Spec(s) => spec_error(py, &s.field, &s.message),
        RunError::Invariant(m) => SimulationError::new_err(format!("invariant violated: {m}")),
        RunError::Io(m) => SimulationError::new_err(m),
        RunError::Cancelled => PyKeyboardInterrupt::new_err("the run was cancelled"),
    }
}

/// Runs `f`, turning a panic into a SimulationError that carries the panic's message.
fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, RunError> + Send) -> PyResult<T>
where
    T: Send,
{
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(r) => r.map_err(|e| to_py_err(py, e)),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Err(SimulationError::new_err(format!("internal error (a dcnsim bug, please report it): panic: {what}")))
        }
    }
}

/// Set it (from any thread) to stop the run it was given to within a few milliseconds; the run
/// then raises KeyboardInterrupt.
#[pyclass(frozen)]
struct CancelFlag(Arc<AtomicBool>);

#[pymethods]
impl CancelFlag {
    #[new]
    fn new() -> Self {
        CancelFlag(Arc::new(AtomicBool::new(false)))
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

fn parse(spec_json: &str) -> PyResult<serde_json::Value> {
    // The Python package always sends valid JSON; this guards direct callers of `_core`.
    serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(format!("spec is not valid JSON: {e}")))
}

/// Fixed-width values as one bytes object, written straight into the Python buffer (one copy).
fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    v: &[T],
    le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * N, |buf| {
        for (chunk, &x) in buf.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&le(x));
        }
        Ok(())
    })
}

/// One column as a tuple whose first item names the encoding:
/// ("u64", bytes) | ("f64", bytes) | ("bool", bytes of 0/1) |
/// ("opt_u64", value bytes, missing-mask bytes of 0/1; missing values are 0) |
/// ("cat", list of distinct strings in first-seen order, bytes of little-endian u32 codes).
fn column<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    let t = match c {
        Column::U64(v) => ("u64", le_bytes(py, v, u64::to_le_bytes)?).into_pyobject(py)?,
        Column::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes)?).into_pyobject(py)?,
        Column::Bool(v) => ("bool", le_bytes(py, v, |b| [b as u8])?).into_pyobject(py)?,
        Column::OptU64(v) => {
            let values = le_bytes(py, &v.values, u64::to_le_bytes)?;
            let missing = le_bytes(py, &v.present, |p| [!p as u8])?;
            ("opt_u64", values, missing).into_pyobject(py)?
        }
        Column::Str(v) => {
            // Result strings (workload names, node names, roles) repeat heavily.
            let mut index: HashMap<&str, u32> = HashMap::new();
            let mut categories: Vec<&str> = Vec::new();
            let codes: Vec<u32> = v
                .iter()
                .map(|s| {
                    *index.entry(s.as_str()).or_insert_with(|| {
                        categories.push(s.as_str());
                        (categories.len() - 1) as u32
                    })
                })
                .collect();
            ("cat", PyList::new(py, categories)?, le_bytes(py, &codes, u32::to_le_bytes)?).into_pyobject(py)?
        }
        Column::Cat { categories, codes } => {
            ("cat", PyList::new(py, categories)?, le_bytes(py, codes, u32::to_le_bytes)?).into_pyobject(py)?
        }
    };
    Ok(t.into_any())
}

/// A table as {column name: encoded column}, in the core's column order.
fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let cols = PyDict::new(py);
    for (name, c) in &t.columns {
        cols.set_item(name, column(py, c)?)?;
    }
    Ok(cols)
}

/// The result of a run, kept in Rust until Python asks for a part of it: `table(name)` encodes
/// one table's columns for a DataFrame (see `column`), `write_parquet` writes one straight to a
/// file. Table names: "flows", "ports", "switches", "timeseries", "trace", "flow_state",
/// "collectives", "iterations".
#[pyclass(frozen)]
struct RunOutput(api::RunOutput);

impl RunOutput {
    fn get(&self, name: &str) -> PyResult<&Table> {
        let o = &self.0;
        Ok(match name {
            "flows" => &o.flows,
            "ports" => &o.ports,
            "switches" => &o.switches,
            "timeseries" => &o.timeseries,
            "trace" => &o.trace,
            "flow_state" => &o.flow_state,
            "collectives" => &o.collectives,
            "iterations" => &o.iterations,
            _ => return Err(PyValueError::new_err(format!("no result table named {name:?}"))),
        })
    }
}

#[pymethods]
impl RunOutput {
    /// Aggregates and provenance, as JSON text.
    #[getter]
    fn summary(&self) -> String {
        self.0.summary.to_string()
    }

    /// The spec with every default filled in, as JSON text.
    #[getter]
    fn spec(&self) -> String {
        self.0.resolved_spec.to_string()
    }

    fn rows(&self, name: &str) -> PyResult<usize> {
        Ok(self.get(name)?.rows())
    }

    /// {column: encoded column}, in the core's column order.
    fn table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        table(py, self.get(name)?)
    }

    /// Writes one table to `path` as zstd Parquet with `metadata` (key, value) pairs; `micros`
    /// adds the flow table's microsecond copies of its picosecond times. Runs without the
    /// interpreter lock.
    #[pyo3(signature = (name, path, metadata, micros = false))]
    fn write_parquet(
        &self,
        py: Python<'_>,
        name: &str,
        path: &str,
        metadata: Vec<(String, String)>,
        micros: bool,
    ) -> PyResult<()> {
        let t = self.get(name)?;
        py.detach(|| parquet_out::write(t, path, &metadata, micros)).map_err(PyOSError::new_err)
    }
}

/// Runs a spec given as JSON text; returns a `RunOutput`. Raises SpecError for a bad spec,
/// SimulationError otherwise. With `progress`, the core prints simulated time and event rate to
/// stderr as it goes; setting `cancel` stops the run (KeyboardInterrupt). With `summary_only`, the
/// output has no flow table (`RunOptions::summary_only`).
#[pyfunction]
#[pyo3(signature = (spec_json, progress = false, cancel = None, summary_only = false))]
fn run<'py>(
    py: Python<'py>,
    spec_json: &str,
    progress: bool,
    cancel: Option<&Bound<'py, CancelFlag>>,
    summary_only: bool,
) -> PyResult<RunOutput> {
    let spec = parse(spec_json)?;
    let opts = RunOptions { progress, cancel: cancel.map(|c| c.get().0.clone()), summary_only };
    // The interpreter lock is released: other Python threads keep running during a long simulation.
    Ok(RunOutput(guarded(py, || api::run(&spec, &opts))?))
}

/// Validates a spec (JSON text) without running it; returns the resolved spec (every default
/// filled in) as JSON text. Raises SpecError like `run`.
#[pyfunction]
fn resolve(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    let spec = parse(spec_json)?;
    guarded(py, || api::read_spec(&spec).map(|(_, resolved)| resolved.to_string()))
}

/// Panics inside the same guard as `run`: lets tests check that a panic in the core surfaces as a
/// SimulationError (and that sweeps record it) without a real bug to trigger one.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>, message: &str) -> PyResult<()> {
    guarded(py, || -> Result<(), RunError> { panic!("{message}") })
}

/// Every protocol, topology, workload, shipped CDF, named setup and parameter, as JSON text.
/// A parameter's `default` is null when the key is required.
#[pyfunction]
fn describe() -> String {
    let d = api::describe();
    let pairs = |v: &[(String, String)]| -> serde_json::Value {
        v.iter().map(|(n, s)| serde_json::json!({"name": n, "summary": s})).collect()
    };
    let params: Vec<serde_json::Value> = d
        .params
        .iter()
        .map(
            |p| serde_json::json!({"path": p.path, "type": p.kind, "unit": p.unit, "default": p.default, "doc": p.doc, "scope": p.scope}),
        )
        .collect();
    serde_json::json!({
        "version": dcnsim_core::VERSION,
        "protocols": pairs(&d.protocols),
        "topologies": pairs(&d.topologies),
        "workloads": pairs(&d.workloads),
        "cdfs": d.cdfs,
        "setups": d.setups.iter().map(setup_json).collect::<Vec<_>>(),
        "params": params,
    })
    .to_string()
}

/// The build id: a hash of the core's sources, manifests and lock file (see build.rs). Runs in a
/// results store are keyed by it, so a store tells the runs of another build from this one's.
#[pyfunction]
fn build_id() -> &'static str {
    env!("DCNSIM_BUILD_ID")
}

/// The git commit this extension was compiled from ("-dirty" with uncommitted changes; "unknown"
/// outside a git work tree): provenance only, not part of any key.
#[pyfunction]
fn build_git() -> &'static str {
    env!("DCNSIM_BUILD_GIT")
}

/// A named setup as `describe` lists it: name, summary, its tables and the dotted keys it sets.
fn setup_json(s: &api::Setup) -> serde_json::Value {
    serde_json::json!({"name": s.name, "summary": s.summary, "tables": s.tables, "keys": s.keys()})
}

/// The summary's fields as JSON text: each {path, column (its sweep-table column, "" for none),
/// unit, doc}, in the order `summary.json` has them.
#[pyfunction]
fn summary_schema() -> String {
    let fields: Vec<serde_json::Value> = api::summary_schema()
        .iter()
        .map(|f| serde_json::json!({"path": f.path, "column": f.column, "unit": f.unit, "doc": f.doc}))
        .collect();
    serde_json::Value::Array(fields).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(summary_schema, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add_function(wrap_pyfunction!(build_git, m)?)?;
    m.add_class::<CancelFlag>()?;
    m.add_class::<RunOutput>()?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", dcnsim_core::VERSION)?;
    Ok(())
}
