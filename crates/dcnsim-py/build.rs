//! Computes the build id: a hash of everything that decides a simulation's results (the core's
//! sources, the Cargo manifests and the lock file), so the results store can tell runs made by
//! another build of the core from this one's. Also records the git commit the build was made from,
//! with "-dirty" when the work tree had changes to tracked files when it was compiled (provenance
//! only: a commit that changes no source keeps the build id).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// 64-bit FNV-1a: deterministic, dependency-free; collisions are not a concern between builds.
struct Fnv(u64);

impl Fnv {
    fn new(offset: u64) -> Self {
        Fnv(offset)
    }

    fn feed(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The files the id covers, as (path relative to the workspace with '/' separators, path).
fn hashed_files(workspace: &Path) -> Vec<(String, PathBuf)> {
    let core = workspace.join("crates/dcnsim-core");
    let mut files = Vec::new();
    rust_files(&core.join("src"), &mut files);
    for name in ["crates/dcnsim-core/Cargo.toml", "Cargo.toml", "Cargo.lock"] {
        files.push(workspace.join(name));
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter(|path| path.is_file())
        .map(|path| {
            let relative = path.strip_prefix(workspace).unwrap_or(&path);
            let parts: Vec<String> =
                relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            (parts.join("/"), path)
        })
        .collect();
    named.sort();
    named
}

fn build_id(workspace: &Path) -> Option<String> {
    let files = hashed_files(workspace);
    if !files.iter().any(|(name, _)| name.ends_with(".rs")) {
        return None; // the core's sources are not beside this crate
    }
    let (mut low, mut high) = (Fnv::new(0xcbf2_9ce4_8422_2325), Fnv::new(0x6c62_272e_07bb_0142));
    for (name, path) in &files {
        let contents = fs::read(path).ok()?;
        for hash in [&mut low, &mut high] {
            hash.feed(name.as_bytes());
            hash.feed(&[0]);
            hash.feed(&(contents.len() as u64).to_le_bytes());
            hash.feed(&contents);
        }
    }
    Some(format!("{:016x}{:016x}", low.0, high.0))
}

fn git(workspace: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(workspace).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn git_state(workspace: &Path) -> String {
    let Some(commit) = git(workspace, &["rev-parse", "--short=12", "HEAD"]) else { return "unknown".into() };
    let dirty = git(workspace, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    }
}

/// The git files whose change means another commit: HEAD and the branch it names (absent outside a
/// git work tree; a packed ref is not watched).
fn git_files(workspace: &Path) -> Vec<PathBuf> {
    let mut names = vec!["HEAD".to_string()];
    names.extend(git(workspace, &["rev-parse", "--symbolic-full-name", "HEAD"]).filter(|r| r.starts_with("refs/")));
    names
        .iter()
        .filter_map(|name| git(workspace, &["rev-parse", "--git-path", name]))
        .map(|path| workspace.join(path)) // relative to the work tree, or absolute (a linked work tree)
        .filter(|path| path.is_file())
        .collect()
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.join("../..");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    // Without the core's sources (a packaged crate), the id falls back to the version: such
    // builds cannot be told apart, and the store says their runs are of an unknown build.
    let id = build_id(&workspace).unwrap_or_else(|| format!("unknown-{version}"));
    println!("cargo:rustc-env=DCNSIM_BUILD_ID={id}");
    println!("cargo:rustc-env=DCNSIM_BUILD_GIT={}", git_state(&workspace));
    for path in ["crates/dcnsim-core/src", "crates/dcnsim-core/Cargo.toml", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    // A new commit changes the recorded commit, not the id (the dirty flag is as of the last build).
    for path in git_files(&workspace) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
