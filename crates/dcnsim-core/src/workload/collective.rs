//! Collectives as a workload: a training job's ranks, placed on hosts, repeat an iteration
//! (compute, then one or more collectives) and every transfer is a flow of a dependency graph
//! (`dag.rs`) that waits for the data it forwards.
//!
//! Each algorithm is a list of steps; in a step, ranks send transfers to ranks. A rank's transfer
//! in a step waits for the transfers the rank *received* in its latest earlier step with any (the
//! data it reduces or forwards), chunk by chunk when a transfer is split into `chunks` pipelined
//! pieces; a transfer with nothing to wait for starts when its rank is ready (the iteration's
//! compute done, or its previous collective done). A rank is done with a collective when it has
//! received all its transfers (a rank that receives none: when its own have arrived). Sizes follow
//! NCCL's conventions: `size_bytes` is each rank's buffer (all-reduce: the vector; all-gather: the
//! gathered output; reduce-scatter: the input; all-to-all: the send buffer, `size/N` per peer;
//! broadcast: the message).
//!
//! | algorithm | steps | each step |
//! |---|---|---|
//! | `ring_allreduce` | 2(N-1) | r -> r+1, S/N (reduce-scatter then all-gather) |
//! | `ring_reduce_scatter`, `ring_allgather` | N-1 | r -> r+1, S/N |
//! | `halving_doubling_allreduce` | 2 log2 N | r <-> r xor d, S/2, S/4, .. then back (N a power of 2) |
//! | `alltoall` | 1 | r -> every other rank, S/N each |
//! | `alltoall_serial` | N-1 | r -> r+p in phase p, S/N, each after the rank's previous one arrived |
//! | `ring_broadcast` | N-1 | rank 0's message pipelined along the ring, S per hop |

use super::dag::{Dag, DagFlow, Delay, Group, Milestone, Trigger, TriggerKind};
use super::WorkloadEnv;
use crate::engine::rng::Rng;
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    RingAllreduce,
    RingReduceScatter,
    RingAllgather,
    HalvingDoublingAllreduce,
    Alltoall,
    AlltoallSerial,
    RingBroadcast,
}

pub const ALGORITHMS: &[(&str, Algorithm)] = &[
    ("ring_allreduce", Algorithm::RingAllreduce),
    ("ring_reduce_scatter", Algorithm::RingReduceScatter),
    ("ring_allgather", Algorithm::RingAllgather),
    ("halving_doubling_allreduce", Algorithm::HalvingDoublingAllreduce),
    ("alltoall", Algorithm::Alltoall),
    ("alltoall_serial", Algorithm::AlltoallSerial),
    ("ring_broadcast", Algorithm::RingBroadcast),
];

impl Algorithm {
    pub fn name(self) -> &'static str {
        ALGORITHMS.iter().find(|(_, a)| *a == self).expect("listed").0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// Rank i on host `first + i`.
    Contiguous {
        first: u32,
    },
    /// Rank i on host `first + i * stride`.
    Strided {
        first: u32,
        stride: u32,
    },
    /// Ranks on distinct hosts drawn uniformly at random.
    Random,
    Hosts(Vec<u32>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveSpec {
    pub algorithms: Vec<Algorithm>,
    pub ranks: u32,
    pub size: u64,
    pub chunks: u32,
    pub placement: Placement,
    pub iterations: u32,
    pub start: Time,
    /// Each rank's compute before the iteration's collectives.
    pub compute: Delay,
    pub stragglers: Vec<u32>,
    pub straggler_factor: f64,
}

/// One transfer of a step: (from rank, to rank, bytes).
type Transfer = (u32, u32, u64);

/// The algorithm's steps over `n` ranks for a buffer of `size` bytes. Sizes are split evenly,
/// the remainder to the first pieces, so a step's bytes add up exactly.
pub fn steps(algorithm: Algorithm, n: u32, size: u64) -> Vec<Vec<Transfer>> {
    let share = |i: u64, parts: u64| size / parts + u64::from(i < size % parts);
    let ring = |count: u32| -> Vec<Vec<Transfer>> {
        (0..count)
            .map(|s| (0..n).map(|r| (r, (r + 1) % n, share(((r + n - s % n) % n) as u64, n as u64))).collect())
            .collect()
    };
    match algorithm {
        Algorithm::RingAllreduce => ring(2 * (n - 1)),
        Algorithm::RingReduceScatter | Algorithm::RingAllgather => ring(n - 1),
        Algorithm::HalvingDoublingAllreduce => {
            let levels = n.trailing_zeros();
            let mut out = Vec::new();
            // Recursive halving: the distance halves and so does the exchanged half.
            for k in 0..levels {
                let d = n >> (k + 1);
                out.push((0..n).map(|r| (r, r ^ d, size >> (k + 1))).collect());
            }
            for k in (0..levels).rev() {
                let d = n >> (k + 1);
                out.push((0..n).map(|r| (r, r ^ d, size >> (k + 1))).collect());
            }
            out
        }
        Algorithm::Alltoall => {
            vec![(0..n).flat_map(|r| (1..n).map(move |p| (r, (r + p) % n, share(p as u64, n as u64)))).collect()]
        }
        Algorithm::AlltoallSerial => {
            (1..n).map(|p| (0..n).map(|r| (r, (r + p) % n, share(p as u64, n as u64))).collect()).collect()
        }
        Algorithm::RingBroadcast => (0..n - 1).map(|s| vec![(s, s + 1, size)]).collect(),
    }
}

/// The hosts of the ranks; an error names the key.
fn place(spec: &CollectiveSpec, env: &WorkloadEnv, rng: &mut Rng) -> Result<Vec<u32>, (&'static str, String)> {
    let n = spec.ranks;
    let hosts: Vec<u64> = match &spec.placement {
        Placement::Contiguous { first } => (0..n as u64).map(|i| *first as u64 + i).collect(),
        Placement::Strided { first, stride } => (0..n as u64).map(|i| *first as u64 + i * *stride as u64).collect(),
        Placement::Random => {
            if n > env.hosts {
                return Err(("ranks", format!("{n} ranks need {n} distinct hosts; the topology has {}", env.hosts)));
            }
            let mut pool: Vec<u32> = (0..env.hosts).collect();
            rng.shuffle(&mut pool);
            pool.truncate(n as usize);
            return Ok(pool);
        }
        Placement::Hosts(h) => h.iter().map(|&h| h as u64).collect(),
    };
    if let Some(h) = hosts.iter().find(|&&h| h >= env.hosts as u64) {
        let what = format!("places a rank on host {h}, which does not exist (hosts are 0..{})", env.hosts);
        return Err(("placement", what));
    }
    let mut sorted = hosts.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(("placement", format!("places two ranks on host {}: one rank per host", w[0])));
    }
    Ok(hosts.into_iter().map(|h| h as u32).collect())
}

/// Builds the job's graph: for each collective of the iteration, its flows (a group of the
/// graph), chained per rank, and the loop into the next iteration through each rank's compute.
pub fn build(spec: &CollectiveSpec, env: &WorkloadEnv, rng: &mut Rng) -> Result<Dag, (&'static str, String)> {
    let n = spec.ranks;
    let host = place(spec, env, rng)?;
    let mut dag = Dag::new();
    dag.iterations = spec.iterations;
    // Each rank's trigger that starts its first transfers of the next collective: in the first
    // collective, the loop-back from the last one through the rank's compute.
    let compute: Vec<u32> = (0..n)
        .map(|r| {
            let mut t = Trigger::new(TriggerKind::Barrier, spec.compute).into_next_iteration();
            if spec.stragglers.contains(&r) {
                t.scale = spec.straggler_factor;
            }
            dag.trigger(t)
        })
        .collect();
    let mut ready = compute.clone();
    for (j, &algorithm) in spec.algorithms.iter().enumerate() {
        let last = j + 1 == spec.algorithms.len();
        let done: Vec<u32> = if last {
            compute.clone()
        } else {
            (0..n).map(|_| dag.trigger(Trigger::new(TriggerKind::Barrier, Delay::NONE))).collect()
        };
        let first = dag.flows.len() as u32;
        add_collective(&mut dag, spec, algorithm, &host, &ready, &done);
        let name = algorithm.name().to_string();
        dag.groups.push(Group { name, bytes: spec.size, flows: first..dag.flows.len() as u32 });
        ready = done;
    }
    dag.seal().map_err(|m| ("collective", m))?;
    Ok(dag)
}

/// The flows of one collective: rank r's transfers without a dependency start on `ready[r]`
/// (at the job's start in the first iteration); every rank activates `done[r]` when it has what it
/// receives.
fn add_collective(
    dag: &mut Dag,
    spec: &CollectiveSpec,
    algorithm: Algorithm,
    host: &[u32],
    ready: &[u32],
    done: &[u32],
) {
    let (n, chunks) = (spec.ranks, spec.chunks);
    // The flows each rank received in its latest step with any, per transfer and chunk: what it
    // forwards next.
    let mut inbox: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n as usize];
    let mut received: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut sent: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    // alltoall_serial: each transfer waits for the rank's previous one to arrive.
    let mut previous: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let serial = algorithm == Algorithm::AlltoallSerial;
    for step in steps(algorithm, n, spec.size) {
        let mut arrived: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n as usize];
        for (from, to, bytes) in step {
            let (src, dst, r) = (host[from as usize], host[to as usize], from as usize);
            let mut pieces = Vec::with_capacity(chunks as usize);
            for k in 0..chunks as usize {
                let piece = (bytes / chunks as u64 + u64::from((k as u64) < bytes % chunks as u64)).max(1);
                let deps: Vec<u32> = if serial {
                    previous[r].clone()
                } else {
                    inbox[r].iter().filter_map(|c| c.get(k).copied()).collect()
                };
                let flow = if deps.is_empty() {
                    dag.flow(DagFlow { start_trigger: ready[r], ..DagFlow::at(src, dst, piece, spec.start) })
                } else {
                    let t = dag.trigger(Trigger::new(TriggerKind::Barrier, Delay::NONE));
                    for d in deps {
                        dag.activate(d, Milestone::Received, t);
                    }
                    dag.flow(DagFlow::after(src, dst, piece, t))
                };
                pieces.push(flow);
            }
            sent[r].extend(&pieces);
            received[to as usize].extend(&pieces);
            previous[r] = pieces.clone();
            arrived[to as usize].push(pieces);
        }
        for (r, a) in arrived.into_iter().enumerate() {
            if !a.is_empty() {
                inbox[r] = a;
            }
        }
    }
    for r in 0..n as usize {
        // A rank that receives nothing (a broadcast's root) is done when its own transfers arrived.
        let mine = if received[r].is_empty() { &sent[r] } else { &received[r] };
        for &f in mine {
            dag.activate(f, Milestone::Received, done[r]);
        }
    }
}
