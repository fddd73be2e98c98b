//! The `[[workload]]` tables: each is one component (Poisson background, permutation, incast,
//! or an explicit flow list); a run merges all of them.

use super::cdf::{self, Cdf, Interpolation};
pub use super::flow_list::{ListedFlow, MAX_FLOW_BYTES};
use crate::limits::{MAX_THINK_US, MAX_WORKLOAD_COMPONENTS};
use crate::spec_reader::{Section, SpecError, SpecResult};
use crate::time::{from_us, Time};

pub const KINDS: &[(&str, &str)] = &[
    ("poisson", "open-loop Poisson arrivals at a load, sizes from a flow-size CDF, uniformly random destinations"),
    ("permutation", "every host sends one flow to a distinct host and receives exactly one"),
    ("incast", "N senders to one receiver, once (at_us) or as a periodic overlay at a load"),
    ("flow_list", "an explicit list of flows, from a CSV file or inline: src, dst, size_bytes, start_us"),
    (
        "closed_loop",
        "each source keeps `connections` messages outstanding (to the receiver, or each to a random host): the \
         next starts think_us (fixed or exponential) after the last finishes",
    ),
];

pub fn shipped_cdf_names() -> Vec<&'static str> {
    cdf::SHIPPED.iter().map(|(n, _)| *n).collect()
}

#[derive(Clone, Debug, PartialEq)]
pub enum IncastMode {
    Once { at: Time, receiver: Option<u32> },
    Overlay { load: f64, periodic: bool, start: Time, stop: Option<Time> },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Poisson {
        load: f64,
        cdf: Cdf,
        rule: Interpolation,
        start: Time,
        stop: Option<Time>,
    },
    Permutation {
        size: u64,
        start: Time,
    },
    Incast {
        senders: u32,
        size: u64,
        mode: IncastMode,
    },
    /// `file` names the origin in messages (the CSV path, or `workload[i].flows` when `inline`).
    FlowList {
        file: String,
        flows: Vec<ListedFlow>,
        inline: bool,
    },
    /// Flows that wait for flows (a flow list with dependency columns, an htsim connection matrix);
    /// `file` names the origin in messages.
    Dag {
        dag: Box<super::dag::Dag>,
        file: String,
    },
    ClosedLoop {
        sources: Vec<u32>,
        /// `None`: each message to a uniformly random other host.
        receiver: Option<u32>,
        sizes: LoopSizes,
        think: Time,
        /// Think times are exponential with mean `think` (else exactly `think`).
        think_exponential: bool,
        /// Loops per source.
        connections: u32,
        start: Time,
        stop: Option<Time>,
    },
}

/// A closed loop's message sizes: one size, or drawn from a flow-size CDF per message.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopSizes {
    Fixed(u64),
    Cdf { cdf: Cdf, rule: Interpolation },
}

impl Kind {
    /// The flow-size distribution of a component that draws sizes from one.
    pub fn size_cdf(&self) -> Option<&Cdf> {
        match self {
            Kind::Poisson { cdf, .. } | Kind::ClosedLoop { sizes: LoopSizes::Cdf { cdf, .. }, .. } => Some(cdf),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComponentSpec {
    pub name: String,
    pub exclude_from_slowdown: bool,
    pub kind: Kind,
    /// The named transport setup (`[transports.NAME]`) its flows use; `None` = `[transport]`.
    pub transport: Option<String>,
    /// The section path (`workload[i]`), for errors found when the workload is built.
    pub path: String,
}

impl ComponentSpec {
    pub fn err(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError { field: format!("{}.{key}", self.path), message: message.into() }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub components: Vec<ComponentSpec>,
}

// Keys shared by several kinds are documented once (describe keeps the first), so their docs name
// every kind they apply to. docs/parameters.md is generated from these strings.
const LOAD_DOC: &str = "[poisson, incast] offered load as a fraction of host link capacity (application bytes)";
const SIZE_DOC: &str = "[permutation, incast, closed_loop] bytes per flow";
const START_DOC: &str = "[poisson, permutation, incast overlay, closed_loop] first arrival not before this time";
const STOP_DOC: &str = "[poisson, incast overlay, closed_loop] no arrivals at or after this time; unset = end of run";
const RECEIVER_DOC: &str =
    "[incast once, closed_loop] the receiving host; unset = random (incast: one for all; closed_loop: per message)";
const CDF_DOC: &str = "[poisson, closed_loop] flow-size CDF: a shipped name (see `dcnsim describe`) or a file path \
                       (closed_loop: instead of size_bytes)";
const INTERPOLATION_DOC: &str =
    "[poisson, closed_loop] step | linear | log_linear; default: the rule the CDF file declares (sampling= in its header)";

fn size(s: &mut Section) -> SpecResult<u64> {
    let v = s.u64("size_bytes", "bytes", SIZE_DOC)?;
    s.ensure(
        (1..=MAX_FLOW_BYTES).contains(&v),
        "size_bytes",
        format!("must be in [1, {MAX_FLOW_BYTES}] bytes, got {v}"),
    )?;
    Ok(v)
}

fn load(s: &mut Section) -> SpecResult<f64> {
    let v = s.f64("load", "fraction", LOAD_DOC)?;
    s.ensure(v > 0.0 && v <= 1.0, "load", format!("must be in (0, 1] (a fraction of host link capacity), got {v}"))?;
    Ok(v)
}

fn start_us(s: &mut Section) -> SpecResult<Time> {
    let v = s.f64_or("start_us", 0.0, "us", START_DOC)?;
    s.ensure(v >= 0.0, "start_us", format!("must be >= 0 us, got {v}"))?;
    Ok(from_us(v))
}

fn stop_us(s: &mut Section, start: Time) -> SpecResult<Option<Time>> {
    let v = s.f64_opt("stop_us", "us", STOP_DOC)?;
    if let Some(v) = v {
        s.ensure(v >= 0.0 && from_us(v) > start, "stop_us", format!("must be after start_us, got {v}"))?;
    }
    Ok(v.map(from_us))
}

fn read_poisson(s: &mut Section) -> SpecResult<Kind> {
    let load = load(s)?;
    let name = s.string("cdf", CDF_DOC)?;
    let rule = s.string_opt("interpolation", INTERPOLATION_DOC)?;
    let start = start_us(s)?;
    let stop = stop_us(s, start)?;
    if s.is_describe() {
        let cdf = Cdf { points: vec![(1.0, 1.0)], declared: None, declared_mean: None };
        return Ok(Kind::Poisson { load, cdf, rule: Interpolation::Step, start, stop });
    }
    let (cdf, rule) = load_cdf(s, &name, rule)?;
    Ok(Kind::Poisson { load, cdf, rule, start, stop })
}

/// The CDF `name` under `rule` (or the rule it declares), checked, with a mean of at least a byte.
fn load_cdf(s: &mut Section, name: &str, rule: Option<String>) -> SpecResult<(Cdf, Interpolation)> {
    let cdf = cdf::load(name).map_err(|e| s.err("cdf", e))?;
    let rule = match rule {
        Some(r) => Interpolation::parse(&r).ok_or_else(|| {
            s.err("interpolation", format!("unknown rule \"{r}\"; expected step, linear or log_linear"))
        })?,
        None => cdf.declared.ok_or_else(|| {
            s.err(
                "interpolation",
                format!("{name} declares no sampling rule: set interpolation = step, linear or log_linear"),
            )
        })?,
    };
    cdf.check(rule).map_err(|e| s.err("interpolation", e))?;
    // Sizes are rounded to at least 1 byte; a smaller mean would make the arrival rate meaningless.
    let mean = cdf.mean(rule);
    s.ensure(
        mean >= 1.0,
        "cdf",
        format!("{name} has a mean of {mean} bytes under {} interpolation; it must be >= 1", rule.name()),
    )?;
    Ok((cdf, rule))
}

/// Keys that only make sense for an incast overlay, rejected with a pointed message for `at_us`.
const OVERLAY_ONLY: &[&str] = &["arrival", "start_us", "stop_us"];

fn read_incast(s: &mut Section) -> SpecResult<Kind> {
    let senders = s.u64("senders", "hosts", "[incast] number of senders N")?;
    s.ensure(senders >= 1 && senders <= u32::MAX as u64, "senders", format!("must be at least 1, got {senders}"))?;
    let size = size(s)?;
    let (once, overlay) = (s.has("at_us"), s.has("load"));
    if !s.is_describe() {
        if once && overlay {
            return Err(s.err("at_us", "set either at_us (one incast) or load (a periodic overlay), not both"));
        }
        if !once && !overlay {
            return Err(s.err("load", "incast needs at_us (one incast) or load (a periodic overlay)"));
        }
    }
    let mut mode = None;
    // Describe mode reads both branches so `dcnsim describe` lists every incast key.
    if once || s.is_describe() {
        let at = s.f64_opt("at_us", "us", "[incast] one incast at this time (exclusive with load)")?.unwrap_or(0.0);
        s.ensure(at >= 0.0, "at_us", format!("must be >= 0 us, got {at}"))?;
        let receiver = s.u64_opt("receiver", "host", RECEIVER_DOC)?;
        s.ensure(receiver.is_none_or(|r| r <= u32::MAX as u64), "receiver", "is not a host id")?;
        if let Some(k) = OVERLAY_ONLY.iter().find(|k| s.has(k)) {
            return Err(s.err(k, "applies only to an incast overlay (load), not to one incast at at_us"));
        }
        mode = Some(IncastMode::Once { at: from_us(at), receiver: receiver.map(|r| r as u32) });
    }
    if overlay || s.is_describe() {
        let load = load(s)?;
        let arrival = s.choice_or(
            "arrival",
            &["poisson", "periodic"],
            "poisson",
            "[incast overlay] incast events as a Poisson process or strictly periodic",
        )?;
        let start = start_us(s)?;
        let stop = stop_us(s, start)?;
        if s.has("receiver") && !s.is_describe() {
            return Err(
                s.err("receiver", "applies only to one incast (at_us); an overlay draws a random receiver per event")
            );
        }
        mode = Some(IncastMode::Overlay { load, periodic: arrival == "periodic", start, stop });
    }
    Ok(Kind::Incast { senders: senders as u32, size, mode: mode.expect("one branch ran") })
}

fn read_flow_list(s: &mut Section) -> SpecResult<Kind> {
    let file =
        s.string_opt("path", "[flow_list] CSV file with a header row: src,dst,size_bytes,start_us (or `flows`)")?;
    let rows = s.array_opt(
        "flows",
        "array of [src, dst, size_bytes, start_us]",
        "[flow_list] the flows inline, each [src, dst, size_bytes, start_us] (instead of `path`)",
    )?;
    if s.is_describe() {
        return Ok(Kind::FlowList { file: String::new(), flows: Vec::new(), inline: false });
    }
    match (file, rows) {
        (Some(_), Some(_)) => Err(s.err("flows", "give either `path` (a CSV file) or `flows` (inline rows), not both")),
        (None, None) => Err(s.err("path", "a flow_list needs `path` (a CSV file) or `flows` (inline rows)")),
        (Some(file), None) => {
            let text = std::fs::read_to_string(&file).map_err(|e| s.err("path", format!("cannot read {file}: {e}")))?;
            let flows = super::flow_list::parse(&text, &file).map_err(|e| s.err("path", e))?;
            s.ensure(!flows.is_empty(), "path", format!("{file} has a header but no flows"))?;
            Ok(Kind::FlowList { file, flows, inline: false })
        }
        (None, Some(rows)) => {
            s.ensure(!rows.is_empty(), "flows", "is empty: list at least one [src, dst, size_bytes, start_us]")?;
            let flows = super::flow_list::from_rows(rows).map_err(|(i, m)| s.err(&format!("flows[{i}]"), m))?;
            Ok(Kind::FlowList { file: s.field("flows"), flows, inline: true })
        }
    }
}

/// Host ids are checked against the topology when the workload is built.
fn read_closed_loop(s: &mut Section) -> SpecResult<Kind> {
    let sources = s.u64_list(
        "sources",
        "hosts",
        "[closed_loop] the sending hosts, each with `connections` messages outstanding",
    )?;
    let receiver = s.u64_opt("receiver", "host", RECEIVER_DOC)?;
    let sizes = loop_sizes(s)?;
    let think =
        s.f64_or("think_us", 0.0, "us", "[closed_loop] wait between a message's completion and the next one's start")?;
    s.ensure(
        (0.0..=MAX_THINK_US).contains(&think),
        "think_us",
        format!("must be in [0, {MAX_THINK_US:e}] us, got {think}"),
    )?;
    let think_exponential = s.choice_or(
        "think_distribution",
        &["fixed", "exponential"],
        "fixed",
        "[closed_loop] fixed: every wait is think_us; exponential: waits are exponential with mean think_us (the \
         first message of each loop too waits one)",
    )? == "exponential";
    let connections = s.u64_or("connections", 1, "messages", "[closed_loop] loops per source, each one message")?;
    s.ensure((1..=1000).contains(&connections), "connections", format!("must be in [1, 1000], got {connections}"))?;
    let start = start_us(s)?;
    let stop = stop_us(s, start)?;
    let (connections, think) = (connections as u32, from_us(think));
    let kind = |sources, receiver, sizes| Kind::ClosedLoop {
        sources,
        receiver,
        sizes,
        think,
        think_exponential,
        connections,
        start,
        stop,
    };
    if s.is_describe() {
        return Ok(kind(vec![], None, sizes));
    }
    s.ensure(!sources.is_empty(), "sources", "needs at least one host")?;
    let mut seen = std::collections::HashSet::new();
    for (i, &h) in sources.iter().enumerate() {
        s.ensure(receiver != Some(h), "sources", format!("sources[{i}] = {h} is the receiver"))?;
        s.ensure(seen.insert(h), "sources", format!("host {h} is listed twice"))?;
        s.ensure(h <= u32::MAX as u64, "sources", format!("sources[{i}] = {h} is not a host id"))?;
    }
    s.ensure(receiver.is_none_or(|r| r <= u32::MAX as u64), "receiver", "is not a host id")?;
    let sources = sources.iter().map(|&h| h as u32).collect();
    Ok(kind(sources, receiver.map(|r| r as u32), sizes))
}

/// `size_bytes` or `cdf` (exactly one) of a closed loop.
fn loop_sizes(s: &mut Section) -> SpecResult<LoopSizes> {
    let name = s.string_opt("cdf", CDF_DOC)?;
    let rule = s.string_opt("interpolation", INTERPOLATION_DOC)?;
    if s.is_describe() {
        return Ok(LoopSizes::Fixed(size(s)?));
    }
    match name {
        None => {
            s.ensure(rule.is_none(), "interpolation", "only used with cdf")?;
            Ok(LoopSizes::Fixed(size(s)?))
        }
        Some(name) => {
            let both = s.u64_opt("size_bytes", "bytes", SIZE_DOC)?.is_some();
            s.ensure(!both, "size_bytes", "give size_bytes or cdf, not both")?;
            let (cdf, rule) = load_cdf(s, &name, rule)?;
            Ok(LoopSizes::Cdf { cdf, rule })
        }
    }
}

fn read_kind(s: &mut Section, kind: &str) -> SpecResult<Kind> {
    match kind {
        "poisson" => read_poisson(s),
        "permutation" => Ok(Kind::Permutation { size: size(s)?, start: start_us(s)? }),
        "incast" => read_incast(s),
        "flow_list" => read_flow_list(s),
        "closed_loop" => read_closed_loop(s),
        other => unreachable!("kind {other} passed the choice check"),
    }
}

impl WorkloadSpec {
    /// Reads the `[[workload]]` array of the top-level section. In describe mode it reads the keys
    /// of every kind, so all of them are documented.
    pub fn read(top: &mut Section) -> SpecResult<WorkloadSpec> {
        let names: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
        let mut components = Vec::new();
        for mut s in top.tables("workload", "workload components; their flows are merged")? {
            let kind = s.choice("kind", &names, "workload kind")?;
            let name = s.string_opt(
                "name",
                "label for this component's flows (the flow table's workload column); default: the kind",
            )?;
            let exclude = s.bool_or(
                "exclude_from_slowdown",
                false,
                "leave this component's flows out of slowdown statistics (e.g. an incast overlay, as SIRD does)",
            )?;
            let transport = s.string_opt(
                "transport",
                "name of the transport setup its flows use (a `[transports.NAME]` table); default: `[transport]`",
            )?;
            let kinds = if s.is_describe() { names.clone() } else { vec![kind.as_str()] };
            for k in kinds {
                let spec = read_kind(&mut s, k)?;
                let name = name.clone().unwrap_or_else(|| k.to_string());
                components.push(ComponentSpec {
                    name,
                    exclude_from_slowdown: exclude,
                    kind: spec,
                    transport: transport.clone(),
                    path: s.path().to_string(),
                });
            }
            s.finish()?;
        }
        if components.is_empty() && !top.is_describe() {
            return Err(SpecError {
                field: "workload".into(),
                message: "is empty: a run needs at least one workload component".into(),
            });
        }
        if components.len() > MAX_WORKLOAD_COMPONENTS {
            return Err(SpecError {
                field: "workload".into(),
                message: format!("at most {MAX_WORKLOAD_COMPONENTS} workload components"),
            });
        }
        Ok(WorkloadSpec { components })
    }
}

/// What the timing checks need to know about the run.
pub struct RunTiming {
    /// End of the run.
    pub end: Time,
    /// Hosts and their link rate in bytes per second, for the expected number of arrivals.
    pub hosts: u64,
    pub host_bytes_per_sec: f64,
}

impl WorkloadSpec {
    /// Components that would start nothing before the run ends are errors naming the key that puts
    /// them there; a flow list partly past the end, or a component expecting under one arrival, is
    /// a warning (returned as "`field`: message").
    pub fn check_timing(&self, run: &RunTiming) -> SpecResult<Vec<String>> {
        let mut warnings = Vec::new();
        let end_us = run.end as f64 / 1e6;
        let after_end = |c: &ComponentSpec, key: &str, at: Time| -> SpecResult<()> {
            if at >= run.end {
                return Err(c.err(
                    key,
                    format!("{} us is at or after the end of the run (duration_us = {end_us}): the component would start no flow", at as f64 / 1e6),
                ));
            }
            Ok(())
        };
        // Expected arrivals of a rate-driven component between its start and its stop.
        let expect = |c: &ComponentSpec, per_sec: f64, start: Time, stop: Option<Time>, what: &str| {
            let span = stop.unwrap_or(run.end).min(run.end).saturating_sub(start) as f64 / 1e12;
            let n = per_sec * span;
            (n < 1.0).then(|| {
                format!("`{}`: expects {n:.2} {what} before the run ends: raise the load or the duration", c.path)
            })
        };
        let capacity = run.hosts as f64 * run.host_bytes_per_sec;
        for c in &self.components {
            match &c.kind {
                Kind::Poisson { load, cdf, rule, start, stop } => {
                    after_end(c, "start_us", *start)?;
                    warnings.extend(expect(c, load * capacity / cdf.mean(*rule), *start, *stop, "flows"));
                }
                Kind::Permutation { start, .. } | Kind::ClosedLoop { start, .. } => after_end(c, "start_us", *start)?,
                Kind::Incast { mode: IncastMode::Once { at, .. }, .. } => after_end(c, "at_us", *at)?,
                Kind::Incast { senders, size, mode: IncastMode::Overlay { load, start, stop, .. } } => {
                    after_end(c, "start_us", *start)?;
                    let per_sec = load * capacity / (*senders as f64 * *size as f64);
                    warnings.extend(expect(c, per_sec, *start, *stop, "incast events"));
                }
                Kind::FlowList { file, flows, inline } => {
                    let key = if *inline { "flows" } else { "path" };
                    let late = flows.iter().filter(|f| f.start >= run.end).count();
                    if late == flows.len() {
                        return Err(c.err(
                            key,
                            format!(
                                "every flow in {file} starts at or after the end of the run (duration_us = {end_us})"
                            ),
                        ));
                    }
                    if late > 0 {
                        warnings.push(format!(
                            "`{}.{key}`: {late} of the {} flows in {file} start at or after the end of the run (duration_us = {end_us}) and never run",
                            c.path,
                            flows.len()
                        ));
                    }
                }
                Kind::Dag { dag, file } => {
                    let first = (0..dag.flows.len() as u32).filter(|&i| dag.starts_at_time(i));
                    if first.map(|i| dag.flows[i as usize].start).min().is_some_and(|t| t >= run.end) {
                        let what =
                            format!("no flow of {file} starts before the end of the run (duration_us = {end_us})");
                        return Err(c.err("path", what));
                    }
                }
            }
        }
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn describe_documents_every_kind() {
        let docs = RefCell::new(Vec::new());
        let mut top = Section::describe("", &docs);
        let spec = WorkloadSpec::read(&mut top).unwrap();
        assert_eq!(spec.components.len(), KINDS.len());
        let paths: Vec<String> = docs.into_inner().into_iter().map(|d| d.path).collect();
        for key in [
            "kind",
            "name",
            "exclude_from_slowdown",
            "load",
            "cdf",
            "interpolation",
            "start_us",
            "stop_us",
            "size_bytes",
            "senders",
            "at_us",
            "receiver",
            "arrival",
            "path",
            "sources",
            "think_us",
        ] {
            assert!(paths.contains(&format!("workload[].{key}")), "{key} undocumented: {paths:?}");
        }
    }

    #[test]
    fn defaults() {
        let v = serde_json::json!({"workload": [
            {"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop_w4"},
            {"kind": "incast", "senders": 2, "size_bytes": 10, "load": 0.1},
        ]});
        let mut top = Section::new("", v.as_object().unwrap());
        let spec = WorkloadSpec::read(&mut top).unwrap();
        let c = &spec.components;
        assert_eq!(
            (c[0].name.as_str(), c[0].exclude_from_slowdown, c[0].path.as_str()),
            ("poisson", false, "workload[0]")
        );
        match &c[0].kind {
            Kind::Poisson { rule, start, stop, .. } => {
                assert_eq!((*rule, *start, *stop), (Interpolation::Step, 0, None))
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(
            c[1].kind,
            Kind::Incast {
                senders: 2,
                size: 10,
                mode: IncastMode::Overlay { load: 0.1, periodic: false, start: 0, stop: None }
            }
        );
        assert!(shipped_cdf_names().contains(&"websearch") && shipped_cdf_names().len() == cdf::SHIPPED.len());
    }
}
