//! The `[[workload]]` tables: each is one component (Poisson background, permutation, incast,
//! or an explicit flow list); a run merges all of them.

use super::cdf::{self, Cdf, Interpolation};
use crate::engine::time::{from_us, Time};
use crate::scenario::reader::{Section, SpecError, SpecResult};

pub const KINDS: &[(&str, &str)] = &[
    ("poisson", "open-loop Poisson arrivals at a load, sizes from a flow-size CDF, uniformly random destinations"),
    ("permutation", "every host sends one flow to a distinct host and receives exactly one"),
    ("incast", "N senders to one receiver, once (at_us) or as a periodic overlay at a load"),
    ("flow_list", "an explicit list of flows from a CSV file: src,dst,size_bytes,start_us"),
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
    Poisson { load: f64, cdf: Cdf, rule: Interpolation, start: Time, stop: Option<Time> },
    Permutation { size: u64, start: Time },
    Incast { senders: u32, size: u64, mode: IncastMode },
    FlowList { flows: Vec<(u32, u32, u64, Time)> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComponentSpec {
    pub name: String,
    pub exclude_from_slowdown: bool,
    pub kind: Kind,
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

/// Largest flow we accept: 1 TB, far beyond any simulated duration, small enough for exact math.
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

fn size(s: &mut Section, key: &str, doc: &'static str) -> SpecResult<u64> {
    let v = s.u64(key, "bytes", doc)?;
    s.ensure(v >= 1 && v <= MAX_FLOW_BYTES, key, format!("must be in [1, {MAX_FLOW_BYTES}] bytes, got {v}"))?;
    Ok(v)
}

fn load(s: &mut Section, doc: &'static str) -> SpecResult<f64> {
    let v = s.f64("load", "fraction", doc)?;
    s.ensure(v > 0.0 && v <= 1.0, "load", format!("must be in (0, 1] (a fraction of host link capacity), got {v}"))?;
    Ok(v)
}

fn time_us(s: &mut Section, key: &str, doc: &'static str) -> SpecResult<Time> {
    let v = s.f64_or(key, 0.0, "us", doc)?;
    s.ensure(v >= 0.0, key, format!("must be >= 0 us, got {v}"))?;
    Ok(from_us(v))
}

fn stop_us(s: &mut Section, start: Time) -> SpecResult<Option<Time>> {
    let v = s.f64_opt("stop_us", "us", "[poisson, incast overlay] no arrivals at or after this time; unset = end of run")?;
    if let Some(v) = v {
        s.ensure(v >= 0.0 && from_us(v) > start, "stop_us", "must be after start_us")?;
    }
    Ok(v.map(from_us))
}

fn read_cdf(s: &mut Section) -> SpecResult<(Cdf, Interpolation)> {
    let name = s.string("cdf", "[poisson] flow-size CDF: a shipped name (see `dcnsim describe`) or a file path")?;
    let rule = s.string_opt("interpolation",
        "[poisson] step | linear | log_linear; default: the rule the CDF file declares (sampling= in its header)")?;
    if s.is_describe() {
        return Ok((Cdf { points: vec![(1.0, 1.0)], declared: None, declared_mean: None }, Interpolation::Step));
    }
    let cdf = if name.contains('/') || name.ends_with(".cdf") {
        let text = std::fs::read_to_string(&name).map_err(|e| s.err("cdf", format!("cannot read {name}: {e}")))?;
        Cdf::parse(&text, &name).map_err(|e| s.err("cdf", e))?
    } else {
        cdf::shipped(&name).ok_or_else(|| {
            s.err("cdf", format!("unknown CDF \"{name}\"; shipped: {} (or give a path)", shipped_cdf_names().join(", ")))
        })?
    };
    let rule = match rule {
        Some(r) => Interpolation::parse(&r)
            .ok_or_else(|| s.err("interpolation", format!("unknown rule \"{r}\"; expected step, linear or log_linear")))?,
        None => cdf.declared.ok_or_else(|| {
            s.err("interpolation", "the CDF declares no sampling rule: set interpolation = step, linear or log_linear")
        })?,
    };
    cdf.check(rule).map_err(|e| s.err("interpolation", e))?;
    Ok((cdf, rule))
}

fn read_flow_list(s: &mut Section) -> SpecResult<Vec<(u32, u32, u64, Time)>> {
    let path = s.string("path", "[flow_list] CSV file with a header row: src,dst,size_bytes,start_us")?;
    if s.is_describe() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path).map_err(|e| s.err("path", format!("cannot read {path}: {e}")))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((_, header)) = lines.next() else {
        return Err(s.err("path", format!("{path} is empty")));
    };
    let cols: Vec<&str> = header.split(',').map(|c| c.trim()).collect();
    let col = |name: &str| cols.iter().position(|c| *c == name).ok_or_else(|| {
        s.err("path", format!("{path}: header must name the columns src,dst,size_bytes,start_us (missing {name})"))
    });
    let (ci, di, zi, ti) = (col("src")?, col("dst")?, col("size_bytes")?, col("start_us")?);
    let mut flows = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').map(|c| c.trim()).collect();
        let at = |what: &str| s.err("path", format!("{path} line {}: {what}", i + 1));
        if f.len() != cols.len() {
            return Err(at(&format!("expected {} fields, got {}", cols.len(), f.len())));
        }
        let src: u32 = f[ci].parse().map_err(|_| at(&format!("src `{}` is not a host id", f[ci])))?;
        let dst: u32 = f[di].parse().map_err(|_| at(&format!("dst `{}` is not a host id", f[di])))?;
        let size: u64 = f[zi].parse().map_err(|_| at(&format!("size_bytes `{}` is not a whole number", f[zi])))?;
        let start: f64 = f[ti].parse().map_err(|_| at(&format!("start_us `{}` is not a number", f[ti])))?;
        if src == dst {
            return Err(at("src and dst are the same host"));
        }
        if size == 0 || size > MAX_FLOW_BYTES {
            return Err(at(&format!("size_bytes must be in [1, {MAX_FLOW_BYTES}]")));
        }
        if !(start >= 0.0 && start.is_finite()) {
            return Err(at("start_us must be >= 0"));
        }
        flows.push((src, dst, size, from_us(start)));
    }
    flows.sort_by_key(|f| f.3); // stable: equal start times keep file order
    Ok(flows)
}

impl WorkloadSpec {
    /// Reads the `[[workload]]` array of the top-level section.
    pub fn read(top: &mut Section) -> SpecResult<WorkloadSpec> {
        let mut components = Vec::new();
        let names: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
        for mut s in top.tables("workload", "workload components; their flows are merged")? {
            let kinds: Vec<String> = if s.is_describe() {
                names.iter().map(|k| k.to_string()).collect()
            } else {
                vec![s.choice("kind", &names, "workload kind")?]
            };
            if s.is_describe() {
                s.choice("kind", &names, "workload kind")?;
            }
            for kind in kinds {
                let name = s.string_opt("name", "label for this component's flows (the flow table's workload column); default: the kind")?
                    .unwrap_or_else(|| kind.clone());
                let exclude = s.bool_or("exclude_from_slowdown", false,
                    "leave this component's flows out of slowdown statistics (e.g. an incast overlay, as SIRD does)")?;
                let k = match kind.as_str() {
                    "poisson" => {
                        let load = load(&mut s, "[poisson, incast] offered load as a fraction of host link capacity (application bytes)")?;
                        let (cdf, rule) = read_cdf(&mut s)?;
                        let start = time_us(&mut s, "start_us", "[poisson, permutation, incast overlay] first arrival not before this time")?;
                        let stop = stop_us(&mut s, start)?;
                        Kind::Poisson { load, cdf, rule, start, stop }
                    }
                    "permutation" => Kind::Permutation {
                        size: size(&mut s, "size_bytes", "[permutation, incast] bytes per flow")?,
                        start: time_us(&mut s, "start_us", "[poisson, permutation, incast overlay] first arrival not before this time")?,
                    },
                    "incast" => {
                        let senders = s.u64("senders", "hosts", "[incast] number of senders N")?;
                        s.ensure(senders >= 1 && senders <= u32::MAX as u64, "senders", "must be at least 1")?;
                        let size = size(&mut s, "size_bytes", "[permutation, incast] bytes per flow")?;
                        let at = s.f64_opt("at_us", "us", "[incast] one incast at this time (exclusive with load)")?;
                        let has_load = s.has("load") || s.is_describe();
                        let mode = match (at, has_load) {
                            (Some(_), true) if !s.is_describe() => return Err(s.err("at_us", "set either at_us (one incast) or load (a periodic overlay), not both")),
                            (None, false) => return Err(s.err("load", "incast needs at_us (one incast) or load (a periodic overlay)")),
                            (Some(at), _) if !s.is_describe() => {
                                s.ensure(at >= 0.0, "at_us", "must be >= 0")?;
                                let r = s.u64_opt("receiver", "host", "[incast once] the receiving host; unset = random")?;
                                IncastMode::Once { at: from_us(at), receiver: r.map(|r| r as u32) }
                            }
                            _ => {
                                if s.is_describe() {
                                    s.u64_opt("receiver", "host", "[incast once] the receiving host; unset = random")?;
                                }
                                let load = load(&mut s, "[poisson, incast] offered load as a fraction of host link capacity (application bytes)")?;
                                let arrival = s.choice_or("arrival", &["poisson", "periodic"], "poisson",
                                    "[incast overlay] incast events as a Poisson process or strictly periodic")?;
                                let start = time_us(&mut s, "start_us", "[poisson, permutation, incast overlay] first arrival not before this time")?;
                                let stop = stop_us(&mut s, start)?;
                                IncastMode::Overlay { load, periodic: arrival == "periodic", start, stop }
                            }
                        };
                        Kind::Incast { senders: senders as u32, size, mode }
                    }
                    "flow_list" => Kind::FlowList { flows: read_flow_list(&mut s)? },
                    other => unreachable!("{other}"),
                };
                components.push(ComponentSpec { name, exclude_from_slowdown: exclude, kind: k, path: s.path().to_string() });
            }
            s.finish()?;
        }
        if components.len() > u16::MAX as usize {
            return Err(SpecError { field: "workload".into(), message: "too many workload components".into() });
        }
        Ok(WorkloadSpec { components })
    }
}
