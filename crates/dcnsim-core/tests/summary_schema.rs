//! The summary's schema (`report::summary::summary_schema`) describes the summary that runs write:
//! every field it lists is there, and every part of the summary is in it.
mod common;
use common::*;
use dcnsim_core::api::summary_schema;

const RUN: &str = "setup = \"dctcp-ndp-paper\"\nseed = 1\nduration_us = 300.0\n\
    [topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 10.0\n\
    [[workload]]\nkind = \"permutation\"\nsize_bytes = 100000\n\
    [[workload]]\nkind = \"collective\"\ncollective = \"ring_allreduce\"\nranks = 4\nsize_bytes = 40000\n";

/// The values at a schema path (`{key}`: every key of a table, `[{key}]`: every item of a list).
fn values_at<'a>(v: &'a serde_json::Value, path: &str) -> Vec<&'a serde_json::Value> {
    let mut at = vec![v];
    for seg in path.replace("[{key}]", ".[{key}]").split('.') {
        at = match seg {
            "{key}" => at.iter().flat_map(|v| v.as_object().into_iter().flat_map(|m| m.values())).collect(),
            "[{key}]" => at.iter().flat_map(|v| v.as_array().into_iter().flatten()).collect(),
            key => at.iter().filter_map(|v| v.get(key)).collect(),
        };
    }
    at
}

#[test]
fn every_field_of_the_schema_is_in_the_summary_and_every_part_in_the_schema() {
    let out = run_checked(&spec(RUN));
    let schema = summary_schema();
    for f in &schema {
        assert!(!values_at(&out.summary, &f.path).is_empty(), "{} is not in the summary", f.path);
    }
    for key in out.summary.as_object().unwrap().keys() {
        assert!(schema.iter().any(|f| f.path.split(['.', '[']).next() == Some(key)), "{key} is not in the schema");
    }
    let counters = schema.iter().find(|f| f.path == "window_counts.transport.{key}").unwrap();
    assert_eq!(counters.column, "transport_{key}");
    assert!(values_at(&out.summary, &counters.path).len() >= 2, "the window's transport counters");
}
