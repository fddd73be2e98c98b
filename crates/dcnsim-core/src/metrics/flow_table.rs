//! The flow table: one row per flow with its exact ideal FCT and slowdown, and the per-flow figures
//! the summary's statistics need (collected whether or not the table itself is kept).

use super::flows::FlowRecord;
use super::ideal::ideal_over;
use super::ideal_deflected::DeflectedPaths;
use super::ideal_paths::{Crossing, IdealPaths};
use super::table::{Column, OptU64s, Table};
use crate::net::packet::LoadBalancing;
use crate::report::output::RunError;
use crate::scenario::run::Simulation;
use crate::time::Time;
use crate::transport::Framing;

/// The flow table and what the slowdown statistics need from it.
pub(super) struct FlowResults {
    pub table: Table,
    /// (size, slowdown) of counted flows that finished.
    pub slowdowns: Vec<(u64, f64)>,
    pub fcts_us: Vec<f64>,
    /// Sizes of counted flows that did not finish.
    pub unfinished_sizes: Vec<u64>,
}

/// A flow's exact ideal FCT over its equal-cost paths or, when switches may deflect it onto a
/// faster route than those (`deflected`), over the whole fabric (see `ideal_deflected.rs`).
fn flow_ideal(
    r: &FlowRecord,
    fr: Framing,
    c: &Crossing,
    deflected: Option<&mut DeflectedPaths>,
    multipath: bool,
) -> Time {
    let (mss, header) = (fr.mss(), fr.header_bytes);
    let Some(d) = deflected else { return ideal_over(r.size, mss, header, c, multipath) };
    let rest = (r.size % mss as u64) as u32;
    let wires: Vec<u32> = [Some(mss + header), (rest > 0).then_some(rest + header)].into_iter().flatten().collect();
    let mut middles = c.middles.to_vec();
    middles.extend(d.middles(r.src, r.dst, &wires));
    ideal_over(r.size, mss, header, &Crossing { first: c.first, middles: &middles, last: c.last }, true)
}

/// The flow table's columns, filled a row at a time.
struct FlowColumns {
    id: Vec<u64>,
    src: Vec<u64>,
    dst: Vec<u64>,
    size: Vec<u64>,
    start: Vec<u64>,
    end: OptU64s,
    fct: OptU64s,
    ideal: Vec<u64>,
    slowdown: Vec<f64>,
    /// The workload column as codes, categories in first-seen order (what Python and Parquet were
    /// given for a column of strings): a `String` per flow cost 50-60 bytes at tens of millions.
    workload: Vec<u32>,
    categories: Vec<String>,
    code_of_component: Vec<Option<u32>>,
    counted: Vec<bool>,
    window_bytes: Vec<u64>,
}

impl FlowColumns {
    fn new(rows: usize, components: usize) -> FlowColumns {
        let v = || Vec::with_capacity(rows);
        FlowColumns {
            id: v(),
            src: v(),
            dst: v(),
            size: v(),
            start: v(),
            end: OptU64s::with_capacity(rows),
            fct: OptU64s::with_capacity(rows),
            ideal: v(),
            slowdown: Vec::with_capacity(rows),
            workload: Vec::with_capacity(rows),
            categories: Vec::new(),
            code_of_component: vec![None; components],
            counted: Vec::with_capacity(rows),
            window_bytes: v(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        id: usize,
        r: &FlowRecord,
        fct: Option<Time>,
        ideal: Time,
        slowdown: f64,
        counted: bool,
        window_bytes: u64,
        names: &[String],
    ) {
        self.id.push(id as u64);
        self.src.push(r.src as u64);
        self.dst.push(r.dst as u64);
        self.size.push(r.size);
        self.start.push(r.start);
        self.end.push(r.end);
        self.fct.push(fct);
        self.ideal.push(ideal);
        self.slowdown.push(slowdown);
        let (categories, c) = (&mut self.categories, r.component as usize);
        self.workload.push(*self.code_of_component[c].get_or_insert_with(|| {
            categories.push(names[c].clone());
            categories.len() as u32 - 1
        }));
        self.counted.push(counted);
        self.window_bytes.push(window_bytes);
    }

    fn into_table(self) -> Table {
        let mut table = Table::default();
        table.push("flow_id", Column::U64(self.id));
        table.push("src", Column::U64(self.src));
        table.push("dst", Column::U64(self.dst));
        table.push("size_bytes", Column::U64(self.size));
        table.push("start_ps", Column::U64(self.start));
        table.push("end_ps", Column::OptU64(self.end));
        table.push("fct_ps", Column::OptU64(self.fct));
        table.push("ideal_fct_ps", Column::U64(self.ideal));
        table.push("slowdown", Column::F64(self.slowdown));
        table.push("workload", Column::Cat { categories: self.categories, codes: self.workload });
        table.push("counted", Column::Bool(self.counted));
        table.push("window_bytes", Column::U64(self.window_bytes));
        table
    }
}

/// Every flow's exact ideal FCT and slowdown, for the summary's statistics and (`with_table`) one
/// row per flow; fails if a flow beat its ideal (a bug).
pub(super) fn flow_table(sim: &Simulation, with_table: bool) -> Result<FlowResults, RunError> {
    let (spec, fr, window_start) = (&sim.spec, sim.spec.framing, sim.spec.warmup);
    let names = sim.workload.component_names();
    let mut columns = with_table.then(|| FlowColumns::new(sim.flows.records.len(), names.len()));
    let mut paths = IdealPaths::new(&sim.net);
    let mut deflected = DeflectedPaths::new(&sim.net);
    let mut slowdowns: Vec<(u64, f64)> = Vec::new();
    let mut fcts_us: Vec<f64> = Vec::new();
    let mut unfinished_sizes: Vec<u64> = Vec::new();
    for (i, r) in sim.flows.records.iter().enumerate() {
        let setup = &spec.transports[spec.component_transport[r.component as usize] as usize];
        let multipath =
            !matches!(setup.load_balancing, LoadBalancing::Ecmp | LoadBalancing::Symmetric) || setup.config.multipath();
        let deflected = deflected.as_mut().filter(|_| setup.config.deflectable(r.size));
        let id_fct = flow_ideal(r, fr, &paths.crossing(r.src, r.dst), deflected, multipath);
        let f = r.end.map(|e| e - r.start);
        if let Some(f) = f.filter(|&f| f < id_fct) {
            return Err(RunError::Invariant(format!(
                "flow {i} ({} bytes, host {} to {}) finished in {f} ps, faster than its ideal {id_fct} ps",
                r.size, r.src, r.dst
            )));
        }
        let sd = f.map_or(f64::NAN, |f| f as f64 / id_fct as f64);
        let is_counted = !sim.workload.excluded_from_slowdown(r.component) && r.start >= window_start;
        match (is_counted, f) {
            (true, Some(fct)) => {
                slowdowns.push((r.size, sd));
                fcts_us.push(fct as f64 / 1e6);
            }
            (true, None) => unfinished_sizes.push(r.size),
            _ => {}
        }
        if let Some(c) = columns.as_mut() {
            c.push(i, r, f, id_fct, sd, is_counted, sim.flows.delivered_per_flow_in_window[i], &names);
        }
    }
    let table = columns.map_or_else(Table::default, FlowColumns::into_table);
    Ok(FlowResults { table, slowdowns, fcts_us, unfinished_sizes })
}
