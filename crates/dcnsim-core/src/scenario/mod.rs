//! Scenarios: the spec format (reading, validation, documentation) and running a spec to results.
pub mod output;
pub mod reader;
pub mod run;
pub mod setup_clock;
pub mod spec;

pub use output::{RunError, RunOptions, RunOutput};
pub use reader::{ParamDoc, SpecError};
pub use run::{read_spec, run, Simulation};

use reader::Section;
use std::cell::RefCell;

/// Everything `dcnsim describe` prints.
pub struct Description {
    pub params: Vec<ParamDoc>,
    pub protocols: Vec<(String, String)>,
    pub topologies: Vec<(String, String)>,
    pub workloads: Vec<(String, String)>,
    pub cdfs: Vec<String>,
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
    }
}
