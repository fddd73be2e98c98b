//! dcnsim: a fast, deterministic packet-level datacenter network simulator.
//!
//! Data flows one way: a spec (`scenario`) builds a topology graph (`topology`), which builds the
//! network (`net`); the workload (`workload`) starts flows on a transport (`transport`); the event
//! loop (`engine`, `scenario::run`) moves packets; `metrics` turns the end state into tables.

pub mod engine;
pub mod limits;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod topology;
pub mod transport;
pub mod workload;

/// Large buffers on transparent huge pages (see `engine::huge_pages`): fewer TLB misses per hop.
/// A library that sets the allocator sets it for every program linking it, so this is the
/// `huge-pages` feature, off by default: the Python extension turns it on, the bench binary
/// installs the same allocator itself (`bin/bench.rs`), tests and other programs keep their own.
#[cfg(feature = "huge-pages")]
#[global_allocator]
static ALLOC: engine::huge_pages::HugePageAlloc = engine::huge_pages::HugePageAlloc;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
