//! The run loop: the spec of a whole run (reading, validation, documentation) and the simulation
//! that builds the network, transports and workload from it and pops events until the end.
pub mod errors;
pub mod options;
pub mod run;
pub mod setup_clock;
pub mod setups;
pub mod spec;

pub use crate::spec_reader::{ParamDoc, SpecError};
pub use errors::RunError;
pub use options::{RunOptions, CANCEL_CHECK_EVENTS};
pub use run::Simulation;
pub use spec::read_spec;

use crate::spec_reader::Section;
use std::cell::RefCell;

/// Everything `dcnsim describe` prints.
pub struct Description {
    pub params: Vec<ParamDoc>,
    pub protocols: Vec<(String, String)>,
    pub topologies: Vec<(String, String)>,
    pub workloads: Vec<(String, String)>,
    pub cdfs: Vec<String>,
    /// The named setups (`setup = NAME`), each with the tables it gives.
    pub setups: &'static [setups::Setup],
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Documents every parameter by running the spec readers in describe mode.
pub fn describe() -> Description {
    let docs = RefCell::new(Vec::new());
    let mut top = Section::describe("", &docs);
    spec::RunSpec::read(&mut top).expect("describe mode never fails");
    let mut params = docs.into_inner();
    // Keep the first description of a key documented by several kinds (per scope: each protocol
    // documents its own keys, with its own defaults).
    let mut seen = std::collections::HashSet::new();
    params.retain(|p| seen.insert((p.path.clone(), p.scope)));
    Description {
        params,
        protocols: pairs(&crate::transport::protocols()),
        topologies: pairs(crate::topology::KINDS),
        workloads: pairs(crate::workload::spec::KINDS),
        cdfs: crate::workload::spec::shipped_cdf_names().into_iter().map(String::from).collect(),
        setups: setups::setups(),
    }
}
