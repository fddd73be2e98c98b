//! The `dcnsim._core` extension: runs a spec (as JSON text) with the interpreter lock released and
//! hands the result tables back column by column. Numeric columns cross as little-endian bytes
//! that numpy wraps without copying row by row; the Python package builds the DataFrames.

use dcnsim_core::metrics::table::{Column, Table};
use dcnsim_core::scenario::{self, RunError, RunOptions};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(_core, SpecError, PyValueError, "A malformed or impossible spec: args are (field, message).");

fn bytes_of<T: Copy>(v: &[T], to_le: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        out.extend(to_le(x));
    }
    out
}

/// One column as (kind, data[, mask]): kind is "u64", "f64", "bool", "opt_u64" or "str".
fn column<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::U64(v) => ("u64", PyBytes::new(py, &bytes_of(v, |x| x.to_le_bytes().to_vec()))).into_pyobject(py)?.into_any(),
        Column::F64(v) => ("f64", PyBytes::new(py, &bytes_of(v, |x| x.to_le_bytes().to_vec()))).into_pyobject(py)?.into_any(),
        Column::Bool(v) => ("bool", PyBytes::new(py, &v.iter().map(|&b| b as u8).collect::<Vec<u8>>())).into_pyobject(py)?.into_any(),
        Column::OptU64(v) => {
            let values = bytes_of(v, |x| x.unwrap_or(0).to_le_bytes().to_vec());
            let mask: Vec<u8> = v.iter().map(|x| x.is_none() as u8).collect();
            ("opt_u64", PyBytes::new(py, &values), PyBytes::new(py, &mask)).into_pyobject(py)?.into_any()
        }
        Column::Str(v) => ("str", PyList::new(py, v)?).into_pyobject(py)?.into_any(),
    })
}

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyList>> {
    let cols = PyList::empty(py);
    for (name, c) in &t.columns {
        cols.append((name.as_str(), column(py, c)?))?;
    }
    Ok(cols)
}

/// Runs a spec given as JSON text. Returns a dict with the tables ("flows", "ports", "switches"),
/// each a list of (name, column), and "summary" and "spec" as JSON text.
#[pyfunction]
#[pyo3(signature = (spec_json, progress = false))]
fn run<'py>(py: Python<'py>, spec_json: &str, progress: bool) -> PyResult<Bound<'py, PyDict>> {
    let spec: serde_json::Value =
        serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(format!("spec is not valid JSON: {e}")))?;
    let opts = RunOptions { progress };
    let out = py.detach(|| scenario::run(&spec, &opts)).map_err(|e| match e {
        RunError::Spec(s) => SpecError::new_err((s.field, s.message)),
        RunError::Io(m) => PyValueError::new_err(m),
        RunError::Invariant(m) => PyRuntimeError::new_err(format!("invariant violated: {m}")),
    })?;
    let d = PyDict::new(py);
    d.set_item("flows", table(py, &out.flows)?)?;
    d.set_item("ports", table(py, &out.ports)?)?;
    d.set_item("switches", table(py, &out.switches)?)?;
    d.set_item("timeseries", table(py, &out.timeseries)?)?;
    d.set_item("summary", out.summary.to_string())?;
    d.set_item("spec", out.resolved_spec.to_string())?;
    Ok(d)
}

/// Validates a spec (JSON text) without running it; returns the resolved spec (every default
/// filled in) as JSON text. Raises SpecError like `run`.
#[pyfunction]
fn resolve(spec_json: &str) -> PyResult<String> {
    let spec: serde_json::Value =
        serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(format!("spec is not valid JSON: {e}")))?;
    match scenario::read_spec(&spec) {
        Ok((_, resolved)) => Ok(resolved.to_string()),
        Err(RunError::Spec(s)) => Err(SpecError::new_err((s.field, s.message))),
        Err(e) => Err(PyValueError::new_err(e.to_string())),
    }
}

/// Every protocol, topology, workload, shipped CDF and parameter, as JSON text.
#[pyfunction]
fn describe() -> String {
    let d = scenario::describe();
    let pairs = |v: &[(String, String)]| -> serde_json::Value {
        v.iter().map(|(n, s)| serde_json::json!({"name": n, "summary": s})).collect()
    };
    let params: Vec<serde_json::Value> = d
        .params
        .iter()
        .map(|p| serde_json::json!({"path": p.path, "type": p.kind, "unit": p.unit, "default": p.default, "doc": p.doc}))
        .collect();
    serde_json::json!({
        "version": dcnsim_core::VERSION,
        "protocols": pairs(&d.protocols),
        "topologies": pairs(&d.topologies),
        "workloads": pairs(&d.workloads),
        "cdfs": d.cdfs,
        "params": params,
    })
    .to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("__version__", dcnsim_core::VERSION)?;
    Ok(())
}
