//! dcnsim-bench: runs spec files and prints, per scenario, wall time, events per second, delivered
//! data packets per wall second and peak memory. Each spec runs in a child process so that peak
//! memory (VmHWM) is that scenario's alone.
//!
//!   cargo run --release -p dcnsim-core --bin dcnsim-bench -- bench/*.toml

use dcnsim_core::api::{run, RunOptions};
use std::process::Command;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run_one(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let spec: toml::Value = toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let spec = serde_json::to_value(spec).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let out = run(&spec, &RunOptions { progress: std::env::var_os("DCNSIM_PROGRESS").is_some(), ..Default::default() })
        .map_err(|e| format!("{path}: {e}"))?;
    let wall = t.elapsed().as_secs_f64();
    let s = &out.summary;
    let events = s["events"].as_u64().unwrap_or(0);
    let pkts = s["data_packets_delivered"].as_u64().unwrap_or(0);
    Ok(format!(
        "{:<44} {:>9.2} {:>12.0} {:>14.0} {:>10.1} {:>10} {:>8.3} {:>9.2}",
        std::path::Path::new(path).file_stem().unwrap().to_string_lossy(),
        wall,
        events as f64 / wall,
        pkts as f64 / wall,
        peak_rss_mib(),
        pkts,
        s["goodput_normalized"].as_f64().unwrap_or(f64::NAN),
        events as f64 / pkts.max(1) as f64,
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        match run_one(&args[1]) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if args.is_empty() {
        eprintln!("usage: dcnsim-bench SPEC.toml [SPEC.toml ...]");
        std::process::exit(2);
    }
    println!(
        "{:<44} {:>9} {:>12} {:>14} {:>10} {:>10} {:>8} {:>9}",
        "scenario", "wall_s", "events/s", "data_pkts/s", "peak_MiB", "data_pkts", "goodput", "ev/pkt"
    );
    let me = std::env::current_exe().expect("own path");
    let mut failed = false;
    for path in &args {
        let out = Command::new(&me).args(["--one", path]).output().expect("spawn bench child");
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
