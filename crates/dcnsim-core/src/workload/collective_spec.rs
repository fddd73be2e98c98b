//! The keys of a `kind = "collective"` workload component (a training job): see `collective.rs`.

use super::collective::{Algorithm, CollectiveSpec, Placement, ALGORITHMS};
use super::dag::Delay;
use crate::limits::{MAX_CHUNKS, MAX_FLOW_BYTES, MAX_HOSTS, MAX_ITERATIONS, MAX_THINK_US};
use crate::spec_reader::{Section, SpecResult};
use crate::time::from_us;

const COLLECTIVE_DOC: &str =
    "[collective] the algorithm, or a list of them run in order every iteration: ring_allreduce, \
     ring_reduce_scatter, ring_allgather, halving_doubling_allreduce, alltoall, alltoall_serial, ring_broadcast";

fn algorithm(s: &Section, key: &str, name: &str) -> SpecResult<Algorithm> {
    ALGORITHMS.iter().find(|(n, _)| *n == name).map(|(_, a)| *a).ok_or_else(|| {
        let names: Vec<&str> = ALGORITHMS.iter().map(|(n, _)| *n).collect();
        s.err(key, format!("unknown collective \"{name}\"; expected one of: {}", names.join(", ")))
    })
}

fn algorithms(s: &mut Section) -> SpecResult<Vec<Algorithm>> {
    if s.is_describe() {
        s.string_opt("collective", COLLECTIVE_DOC)?;
        return Ok(vec![Algorithm::RingAllreduce]);
    }
    if s.is_array("collective") {
        let list = s.array_opt("collective", "string or array of strings", COLLECTIVE_DOC)?.expect("an array");
        s.ensure(!list.is_empty(), "collective", "is empty: name at least one collective")?;
        let mut out = Vec::new();
        for (i, v) in list.iter().enumerate() {
            let key = format!("collective[{i}]");
            let name = v.as_str().ok_or_else(|| s.err(&key, "expected a collective's name (a string)"))?;
            out.push(algorithm(s, &key, name)?);
        }
        return Ok(out);
    }
    let name = s.string("collective", COLLECTIVE_DOC)?;
    Ok(vec![algorithm(s, "collective", &name)?])
}

fn placement(s: &mut Section, ranks: u32) -> SpecResult<Placement> {
    let doc = "[collective] how ranks map to hosts: contiguous (rank i on host first_host + i), strided (first_host + \
               i * stride), random (distinct hosts drawn from the seed), or hosts (the list in `hosts`)";
    let kind = s.choice_or("placement", &["contiguous", "strided", "random", "hosts"], "contiguous", doc)?;
    let first = s.u64_or("first_host", 0, "host", "[collective] contiguous, strided: the host of rank 0")?;
    let stride = s.u64_or("stride", 1, "hosts", "[collective] strided: hosts between consecutive ranks")?;
    let hosts = s.u64_list_or("hosts", "hosts", "[collective] placement = hosts: rank i on hosts[i]")?;
    s.ensure(first < MAX_HOSTS && (1..MAX_HOSTS).contains(&stride), "stride", format!("must be in [1, {MAX_HOSTS})"))?;
    let (first, stride) = (first as u32, stride as u32);
    Ok(match kind.as_str() {
        "contiguous" => Placement::Contiguous { first },
        "strided" => Placement::Strided { first, stride },
        "random" => Placement::Random,
        _ if s.is_describe() => Placement::Random,
        _ => {
            s.ensure(!hosts.is_empty(), "hosts", "placement = \"hosts\" needs the list `hosts`")?;
            let what = format!("lists {} hosts for {ranks} ranks: give one host per rank", hosts.len());
            s.ensure(hosts.len() == ranks as usize, "hosts", what)?;
            let out = hosts.iter().map(|&h| h.min(u32::MAX as u64) as u32).collect();
            Placement::Hosts(out)
        }
    })
}

fn compute(s: &mut Section) -> SpecResult<Delay> {
    let mean =
        s.f64_or("compute_us", 0.0, "us", "[collective] each rank's compute before every iteration's collectives")?;
    let law = s.choice_or(
        "compute_distribution",
        &["fixed", "uniform", "exponential", "normal"],
        "fixed",
        "[collective] fixed: every compute takes compute_us; uniform: in compute_us +- compute_spread_us; exponential: \
         mean compute_us; normal: mean compute_us, standard deviation compute_spread_us (truncated at 0)",
    )?;
    let spread =
        s.f64_or("compute_spread_us", 0.0, "us", "[collective] uniform: half-width; normal: standard deviation")?;
    s.ensure(
        (0.0..=MAX_THINK_US).contains(&mean),
        "compute_us",
        format!("must be in [0, {MAX_THINK_US:e}] us, got {mean}"),
    )?;
    s.ensure((0.0..=MAX_THINK_US).contains(&spread), "compute_spread_us", format!("must be >= 0 us, got {spread}"))?;
    let (m, d) = (from_us(mean), from_us(spread));
    Ok(match law.as_str() {
        "fixed" => Delay::Fixed(m),
        "uniform" => {
            s.ensure(
                spread <= mean,
                "compute_spread_us",
                format!("must not exceed compute_us ({mean}), got {spread}"),
            )?;
            Delay::Uniform(m - d, m + d)
        }
        "exponential" => Delay::Exponential { mean: m },
        _ => Delay::Normal { mean: m, sd: d },
    })
}

pub fn read(s: &mut Section) -> SpecResult<CollectiveSpec> {
    let algorithms = algorithms(s)?;
    let ranks = s.u64("ranks", "ranks", "[collective] ranks of the job, one per host")?;
    s.ensure((2..=MAX_HOSTS).contains(&ranks), "ranks", format!("must be in [2, {MAX_HOSTS}], got {ranks}"))?;
    if algorithms.contains(&Algorithm::HalvingDoublingAllreduce) {
        s.ensure(
            ranks.is_power_of_two(),
            "ranks",
            format!("halving_doubling_allreduce needs a power of 2, got {ranks}"),
        )?;
    }
    let size =
        s.u64("size_bytes", "bytes", "[collective] each rank's buffer (see docs/workloads.md for each collective)")?;
    s.ensure(
        (1..=MAX_FLOW_BYTES).contains(&size),
        "size_bytes",
        format!("must be in [1, {MAX_FLOW_BYTES}], got {size}"),
    )?;
    let chunks = s.u64_or("chunks", 1, "chunks", "[collective] each transfer split into this many pipelined chunks")?;
    s.ensure((1..=MAX_CHUNKS).contains(&chunks), "chunks", format!("must be in [1, {MAX_CHUNKS}], got {chunks}"))?;
    let placement = placement(s, ranks as u32)?;
    let iterations = s.u64_or("iterations", 1, "iterations", "[collective] iterations of compute then collectives")?;
    let what = format!("must be in [1, {MAX_ITERATIONS}], got {iterations}");
    s.ensure((1..=MAX_ITERATIONS).contains(&iterations), "iterations", what)?;
    let start = s.f64_or("start_us", 0.0, "us", "[collective] the job starts (its first compute) at this time")?;
    s.ensure(start >= 0.0, "start_us", format!("must be >= 0 us, got {start}"))?;
    let compute = compute(s)?;
    let stragglers = s.u64_list_or("stragglers", "ranks", "[collective] ranks whose compute is slower")?;
    if let Some(r) = stragglers.iter().find(|&&r| r >= ranks) {
        return Err(s.err("stragglers", format!("rank {r} does not exist (ranks are 0..{ranks})")));
    }
    let factor =
        s.f64_or("straggler_factor", 1.0, "x", "[collective] a straggler's compute takes this many times longer")?;
    s.ensure((1.0..=1000.0).contains(&factor), "straggler_factor", format!("must be in [1, 1000], got {factor}"))?;
    Ok(CollectiveSpec {
        algorithms,
        ranks: ranks as u32,
        size,
        chunks: chunks as u32,
        placement,
        iterations: iterations as u32,
        start: from_us(start),
        compute,
        stragglers: stragglers.into_iter().map(|r| r as u32).collect(),
        straggler_factor: factor,
    })
}
