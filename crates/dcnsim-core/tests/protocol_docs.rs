//! Every registered protocol is documented where a user looks for it: a row in the README's protocol
//! table, its own page under docs/protocols/, its variables in docs/tracing.md's flow-state table,
//! and every key its reader reads listed under its name by `dcnsim describe` (and so in
//! docs/parameters.md). Nothing here names a protocol: registering one is enough to be held to it.
use dcnsim_core::transport::protocols;
use std::path::PathBuf;

fn repo_file(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Table rows of `text` whose first cell names protocol `name` (alone or among others).
fn has_row(text: &str, name: &str) -> bool {
    let cell = format!("`{name}`");
    text.lines().filter(|l| l.starts_with('|')).any(|l| l.split('|').nth(1).is_some_and(|c| c.contains(&cell)))
}

#[test]
fn every_protocol_has_a_readme_row_a_page_and_trace_variables() {
    let (readme, tracing) = (repo_file("README.md"), repo_file("docs/tracing.md"));
    let mut missing = Vec::new();
    for (name, _) in protocols() {
        if !has_row(&readme, name) {
            missing.push(format!("{name}: no row in README.md's protocol table"));
        }
        let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../docs/protocols/{name}.md"));
        if !page.exists() {
            missing.push(format!("{name}: no docs/protocols/{name}.md"));
        }
        if !has_row(&tracing, name) {
            missing.push(format!("{name}: no row in docs/tracing.md's flow-state table"));
        }
    }
    assert!(missing.is_empty(), "undocumented protocols:\n{}", missing.join("\n"));
}

/// The parameter reference lists a `[transport]` key under a protocol unless the description's
/// leading `[kinds]` tag leaves that protocol out (python/dcnsim/reference.py). A tag written for
/// the protocols of its day hides the key from every protocol built on the same reader later (DX
/// and HULL lost the window sender's keys that way, RCP and Dart the rate sender's).
#[test]
fn describe_lists_every_key_a_protocol_reads_under_its_name() {
    let d = dcnsim_core::api::describe();
    let mut hidden = Vec::new();
    for (name, _) in protocols() {
        let keys: Vec<_> = d.params.iter().filter(|p| p.scope == Some(name)).collect();
        if keys.is_empty() {
            hidden.push(format!("{name}: no keys documented under its name"));
        }
        for p in keys {
            let Some(tag) = p.doc.strip_prefix('[').and_then(|rest| rest.split_once(']')).map(|t| t.0) else {
                continue;
            };
            if !tag.split(',').any(|k| k.trim() == name) {
                hidden.push(format!("{name}: `{}` is tagged [{tag}]", p.path));
            }
        }
    }
    assert!(hidden.is_empty(), "keys the reference would hide:\n{}", hidden.join("\n"));
}
