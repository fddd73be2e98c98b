//! The layering, held to the code: every `crate::` path in the library's non-test code points to its
//! own floor or one below (`lib.rs` draws the floors), no two folders import each other (directly or
//! round a longer circle; a folder and its own subfolders excepted: a registry imports its
//! protocols and they import its trait), and no two files of one folder import each other.
//!
//! Unit tests (`#[cfg(test)]` modules and the files only they use) are left out: a test may reach
//! anywhere, as the integration tests in this folder do. There is no allow-list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules by floor, lowest first. A module may import its own floor's or a lower one's.
const FLOORS: &[&[&str]] = &[
    &["ids", "limits", "spec_reader", "time"],
    &["engine"],
    &["topology"],
    &["record"],
    &["net"],
    &["workload"],
    &["transport"],
    &["scenario"],
    &["report"],
    &["api"],
    &["bin"],
];

/// Files compiled only into unit tests.
const TEST_ONLY_FILES: &[&str] = &["tests.rs", "testbed.rs", "handshake_tests.rs"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path: `net/pipeline/pfc.rs` is `[net, pipeline, pfc]`, `net/mod.rs` is `[net]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).expect("a file under src");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The code a build without tests compiles: comments and `#[cfg(test)]` modules removed.
fn library_code(text: &str) -> String {
    let cut = text.find("#[cfg(test)]\nmod ").unwrap_or(text.len());
    text[..cut]
        .lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module paths a file's code names, resolved from `crate::` and `super::` (at most the first three
/// segments: enough to find the file).
fn imports(module: &[String], code: &str) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':') {
            continue;
        }
        let path: Vec<&str> = code[at..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or("")
            .split("::")
            .filter(|s| !s.is_empty())
            .collect();
        let mut base: Vec<String> = if path[0] == "crate" { Vec::new() } else { module.to_vec() };
        let mut rest = &path[..];
        if path[0] == "crate" {
            rest = &path[1..];
        } else {
            // `super` in `a/b.rs` (module a::b) is `a`; in `a/mod.rs` (module a) it is the root.
            let mut supers = 0;
            while rest.first() == Some(&"super") {
                supers += 1;
                rest = &rest[1..];
            }
            base.truncate(base.len().saturating_sub(supers));
        }
        base.extend(rest.iter().take(3).map(|s| s.to_string()));
        if !base.is_empty() {
            found.insert(base);
        }
    }
    found
}

/// The source file a module path lands in: its longest prefix that is a file of the crate.
fn file_of(path: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains_key(p))
}

fn floor_of(top: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&top))
}

struct Crate {
    /// Module path -> file.
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// File module -> the file modules its library code imports.
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

fn read_crate() -> Crate {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    files.retain(|f| !TEST_ONLY_FILES.contains(&f.file_name().unwrap().to_str().unwrap()));
    let modules: BTreeMap<Vec<String>, PathBuf> = files.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        let code = library_code(&std::fs::read_to_string(file).expect("a readable source file"));
        let targets: BTreeSet<Vec<String>> = imports(module, &code)
            .iter()
            .filter_map(|p| file_of(p, &modules))
            .filter(|t| t != module && !t.is_empty())
            .collect();
        edges.insert(module.clone(), targets);
    }
    Crate { modules, edges }
}

/// One circle in `graph`, if there is any (depth-first search; the circle as a list of nodes).
fn find_circle<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn visit<N: Ord + Clone>(
        node: &N,
        graph: &BTreeMap<N, BTreeSet<N>>,
        state: &mut BTreeMap<N, u8>,
        stack: &mut Vec<N>,
    ) -> Option<Vec<N>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|n| n == next).unwrap();
                    return Some(stack[from..].to_vec());
                }
                0 => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(node, graph, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("/")
    }
}

#[test]
fn every_top_level_module_has_a_floor() {
    let c = read_crate();
    let missing: BTreeSet<String> =
        c.modules.keys().filter_map(|m| m.first()).filter(|top| floor_of(top).is_none()).cloned().collect();
    assert!(missing.is_empty(), "modules with no floor in FLOORS (and lib.rs's drawing): {missing:?}");
}

#[test]
fn imports_point_to_the_same_floor_or_below() {
    let c = read_crate();
    let mut upward = Vec::new();
    for (from, targets) in &c.edges {
        let Some(from_floor) = from.first().and_then(|t| floor_of(t)) else { continue };
        for to in targets {
            let to_floor = to.first().and_then(|t| floor_of(t)).expect("every target has a floor");
            if to_floor > from_floor {
                upward.push(format!("{} -> {}", show(from), show(to)));
            }
        }
    }
    assert!(upward.is_empty(), "imports that climb a floor:\n{}", upward.join("\n"));
}

#[test]
fn no_two_folders_import_each_other() {
    let c = read_crate();
    let folder = |m: &Vec<String>| -> Vec<String> {
        let file = &c.modules[m];
        let is_mod = file.file_name().is_some_and(|n| n == "mod.rs");
        if is_mod || m.is_empty() {
            m.clone()
        } else {
            m[..m.len() - 1].to_vec()
        }
    };
    let nested = |a: &Vec<String>, b: &Vec<String>| a.starts_with(b) || b.starts_with(a);
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, targets) in &c.edges {
        let from_dir = folder(from);
        for to in targets {
            let to_dir = folder(to);
            if !nested(&from_dir, &to_dir) {
                graph.entry(from_dir.clone()).or_default().insert(to_dir);
            }
        }
    }
    if let Some(circle) = find_circle(&graph) {
        let names: Vec<String> = circle.iter().map(|m| show(m)).collect();
        panic!("folders that import each other: {}", names.join(" -> "));
    }
}

#[test]
fn no_two_files_of_a_folder_import_each_other() {
    // Between folders the test above holds; inside one, its files (not its `mod.rs`, the folder's
    // face that declares and re-exports them) import one way too.
    let c = read_crate();
    let plain = |m: &Vec<String>| c.modules[m].file_name().is_some_and(|n| n != "mod.rs" && n != "lib.rs");
    let siblings = |a: &Vec<String>, b: &Vec<String>| a.len() == b.len() && a[..a.len() - 1] == b[..b.len() - 1];
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = c
        .edges
        .iter()
        .filter(|(from, _)| plain(from))
        .map(|(from, targets)| {
            (from.clone(), targets.iter().filter(|to| plain(to) && siblings(from, to)).cloned().collect())
        })
        .collect();
    if let Some(circle) = find_circle(&graph) {
        let names: Vec<String> = circle.iter().map(|m| show(m)).collect();
        panic!("files that import each other: {}", names.join(" -> "));
    }
}

#[test]
fn the_reader_sees_imports_it_must_see() {
    // The parser itself: `crate::` and `super::` paths resolve to files, comments do not count.
    let module = vec!["net".to_string(), "port".to_string()];
    let found = imports(&module, "use crate::time::Time;\nuse super::queue::X; // crate::report\n");
    assert!(found.contains(&vec!["time".to_string(), "Time".to_string()]));
    assert!(found.contains(&vec!["net".to_string(), "queue".to_string(), "X".to_string()]));
    let code =
        library_code("use crate::a::B; // crate::report::x\n#[cfg(test)]\nmod tests {\n use crate::report::y;\n}\n");
    assert!(!code.contains("report"), "comments and test modules are not library code");
}
