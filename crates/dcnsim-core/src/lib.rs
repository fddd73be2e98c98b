//! dcnsim: a fast, deterministic packet-level datacenter network simulator.
//!
//! Imports go one way, from the top floor down (`tests/layering.rs` holds the code to it):
//!
//! ```text
//!  api          read a spec, simulate, report: the entry the CLI, the bindings and the bench share
//!  report       a finished simulation as results: summary, flow/port/switch tables, ideal FCT
//!  scenario     the run loop: the whole run's spec, the simulation and its event dispatch
//!  transport    protocols (one folder each, one registry line)
//!  workload     what to send: flow arrivals, sizes, flow lists (read by transports' set-up too)
//!  net          packets, ports, queues and their switch stages, routing
//!  record       what the network and transports write while running: flow log, traces
//!  topology     the fabric as a graph: nodes, links, tiers
//!  engine       the event queue, random streams
//!  ground       time, ids, limits, the spec reader
//! ```
//!
//! A spec (`scenario::spec`) builds a topology graph (`topology`), which builds the network (`net`);
//! the workload (`workload`) starts flows on a transport (`transport`); the event loop
//! (`scenario::run`) moves packets; `report` turns the end state into tables.

// Ground floor.
pub mod ids;
pub mod limits;
pub mod spec_reader;
pub mod time;

pub mod engine;
pub mod topology;

pub mod record;

pub mod net;

pub mod workload;

pub mod transport;

pub mod scenario;

pub mod report;

pub mod api;

/// Large buffers on transparent huge pages (see `engine::huge_pages`): fewer TLB misses per hop.
/// A library that sets the allocator sets it for every program linking it, so this is the
/// `huge-pages` feature, off by default: the Python extension turns it on, the bench binary
/// installs the same allocator itself (`bin/bench.rs`), tests and other programs keep their own.
#[cfg(feature = "huge-pages")]
#[global_allocator]
static ALLOC: engine::huge_pages::HugePageAlloc = engine::huge_pages::HugePageAlloc;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
