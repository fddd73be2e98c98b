//! Flow-size distributions: an empirical CDF (`size cumulative_probability` lines) sampled by
//! inverse transform with one of three interpolation rules. The rule matters: the same file's mean
//! differs by up to 40% between rules, so every shipped file states the rule its source simulator
//! used, and that is the default.

use crate::engine::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// The smallest size whose cumulative probability is >= U (ns-2/OMNeT++ Homa style).
    Step,
    /// Linear in size between consecutive points (HPCC/pFabric style).
    Linear,
    /// Linear in log10(size) between consecutive points (the SIRD simulator).
    LogLinear,
}

impl Interpolation {
    pub const NAMES: &'static [&'static str] = &["step", "linear", "log_linear"];

    pub fn parse(s: &str) -> Option<Interpolation> {
        match s {
            "step" => Some(Interpolation::Step),
            "linear" => Some(Interpolation::Linear),
            "log_linear" | "log-linear" => Some(Interpolation::LogLinear),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Step => "step",
            Interpolation::Linear => "linear",
            Interpolation::LogLinear => "log_linear",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// (size in bytes, cumulative probability), non-decreasing in both, last probability 1.
    pub points: Vec<(f64, f64)>,
    /// The rule the file declares (`sampling=` in its header comment).
    pub declared: Option<Interpolation>,
    /// The mean the file declares under its rule (`mean_bytes=`).
    pub declared_mean: Option<f64>,
}

impl Cdf {
    /// Parses CDF text; `origin` names the file in errors. Errors say which line is wrong.
    pub fn parse(text: &str, origin: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut declared = None;
        let mut declared_mean = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let at = || format!("{origin} line {}", i + 1);
            if let Some(comment) = line.strip_prefix('#') {
                // A header that is present but unreadable is an error, not a silent fallback: the
                // rule changes the mean by tens of percent.
                for word in comment.split(|c: char| c.is_whitespace() || c == ';' || c == ',') {
                    if let Some(v) = word.strip_prefix("sampling=") {
                        declared = Some(Interpolation::parse(v).ok_or_else(|| {
                            format!("{}: unknown sampling rule `{v}` (expected step, linear or log_linear)", at())
                        })?);
                    } else if let Some(v) = word.strip_prefix("mean_bytes=") {
                        let m = v.parse::<f64>().ok().filter(|m| m.is_finite() && *m > 0.0);
                        declared_mean =
                            Some(m.ok_or_else(|| format!("{}: mean_bytes `{v}` is not a positive number", at()))?);
                    }
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(format!("{}: expected `size cumulative_probability`, got `{line}`", at()));
            }
            let size: f64 = fields[0].parse().map_err(|_| format!("{}: size `{}` is not a number", at(), fields[0]))?;
            let p: f64 =
                fields[1].parse().map_err(|_| format!("{}: probability `{}` is not a number", at(), fields[1]))?;
            if !size.is_finite() || size < 0.0 {
                return Err(format!("{}: size {size} must be a non-negative number", at()));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{}: probability {p} is outside [0, 1]", at()));
            }
            if let Some(&(ps, pp)) = points.last() {
                if size < ps {
                    return Err(format!("{}: sizes must not decrease ({size} after {ps})", at()));
                }
                if p < pp {
                    return Err(format!("{}: the CDF is not monotone ({p} after {pp})", at()));
                }
            }
            points.push((size, p));
        }
        let Some(&(_, last)) = points.last() else {
            return Err(format!("{origin}: no data points"));
        };
        if (last - 1.0).abs() > 1e-9 {
            return Err(format!("{origin}: the last cumulative probability must be 1, got {last}"));
        }
        Ok(Cdf { points, declared, declared_mean })
    }

    /// Checks that the rule can be applied (log-linear needs positive sizes).
    pub fn check(&self, rule: Interpolation) -> Result<(), String> {
        if rule == Interpolation::LogLinear {
            if let Some(&(s, p)) = self.points.iter().find(|&&(s, _)| s <= 0.0) {
                return Err(format!(
                    "log_linear interpolation needs every size > 0; this CDF has a size of {s} (at probability {p})"
                ));
            }
        }
        Ok(())
    }

    /// Maps U in [0, 1) to a size (not yet rounded).
    pub fn quantile(&self, u: f64, rule: Interpolation) -> f64 {
        let pts = &self.points;
        // First point whose cumulative probability is >= u.
        let i = pts.partition_point(|&(_, p)| p < u).min(pts.len() - 1);
        if i == 0 || rule == Interpolation::Step {
            return pts[i].0;
        }
        let (x0, p0) = pts[i - 1];
        let (x1, p1) = pts[i];
        if p1 <= p0 || x1 == x0 {
            return x1;
        }
        let f = (u - p0) / (p1 - p0);
        match rule {
            Interpolation::Linear => x0 + f * (x1 - x0),
            Interpolation::LogLinear => 10f64.powf(x0.log10() + f * (x1.log10() - x0.log10())),
            Interpolation::Step => unreachable!(),
        }
    }

    /// A size in whole bytes, at least 1.
    pub fn sample(&self, rng: &mut Rng, rule: Interpolation) -> u64 {
        (self.quantile(rng.uniform(), rule).round() as u64).max(1)
    }

    /// The exact second moment E[X^2] under a rule (for sizing statistical tests).
    pub fn second_moment(&self, rule: Interpolation) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            let ((x0, p0), (x1, p1)) = (w[0], w[1]);
            m += (p1 - p0)
                * match rule {
                    Interpolation::Step => x1 * x1,
                    Interpolation::Linear => (x0 * x0 + x0 * x1 + x1 * x1) / 3.0,
                    Interpolation::LogLinear if x0 == x1 => x1 * x1,
                    Interpolation::LogLinear => (x1 * x1 - x0 * x0) / (2.0 * (x1 / x0).ln()),
                };
        }
        m
    }

    /// The exact mean under a rule (before rounding to whole bytes).
    pub fn mean(&self, rule: Interpolation) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].1; // mass at or below the first point maps to it
        for w in pts.windows(2) {
            let ((x0, p0), (x1, p1)) = (w[0], w[1]);
            let mass = p1 - p0;
            m += mass
                * match rule {
                    Interpolation::Step => x1,
                    Interpolation::Linear => (x0 + x1) / 2.0,
                    Interpolation::LogLinear if x0 == x1 => x1,
                    Interpolation::LogLinear => (x1 - x0) / (x1 / x0).ln(),
                };
        }
        m
    }
}

/// The CDFs that ship with dcnsim (embedded in the binary).
pub const SHIPPED: &[(&str, &str)] = &[
    ("alistorage", include_str!("../../data/workloads/alistorage.cdf")),
    ("datamining", include_str!("../../data/workloads/datamining.cdf")),
    ("datamining_xpass", include_str!("../../data/workloads/datamining_xpass.cdf")),
    ("fb_cachefollower", include_str!("../../data/workloads/fb_cachefollower.cdf")),
    ("fb_cachefollower_xpass", include_str!("../../data/workloads/fb_cachefollower_xpass.cdf")),
    ("fb_hadoop", include_str!("../../data/workloads/fb_hadoop.cdf")),
    ("fb_hadoop_w4", include_str!("../../data/workloads/fb_hadoop_w4.cdf")),
    ("fb_keyvalue_w1", include_str!("../../data/workloads/fb_keyvalue_w1.cdf")),
    ("fb_webserver", include_str!("../../data/workloads/fb_webserver.cdf")),
    ("fb_webserver_ndp", include_str!("../../data/workloads/fb_webserver_ndp.cdf")),
    ("fb_webserver_xpass", include_str!("../../data/workloads/fb_webserver_xpass.cdf")),
    ("google_rpc_w3", include_str!("../../data/workloads/google_rpc_w3.cdf")),
    ("google_search_w2", include_str!("../../data/workloads/google_search_w2.cdf")),
    ("imc10", include_str!("../../data/workloads/imc10.cdf")),
    ("imc10_pbfs", include_str!("../../data/workloads/imc10_pbfs.cdf")),
    ("websearch", include_str!("../../data/workloads/websearch.cdf")),
    ("websearch_pfabric", include_str!("../../data/workloads/websearch_pfabric.cdf")),
    ("websearch_w5", include_str!("../../data/workloads/websearch_w5.cdf")),
];

pub fn shipped(name: &str) -> Option<Cdf> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(n, text)| Cdf::parse(text, n).expect("shipped CDFs are valid"))
}

/// Whether a `cdf = ...` value names a file rather than a shipped CDF.
pub fn is_path(value: &str) -> bool {
    value.contains('/') || value.ends_with(".cdf")
}

/// A CDF by shipped name or file path (relative paths are relative to the working directory).
pub fn load(value: &str) -> Result<Cdf, String> {
    if is_path(value) {
        let text = std::fs::read_to_string(value).map_err(|e| format!("cannot read {value}: {e}"))?;
        return Cdf::parse(&text, value);
    }
    shipped(value).ok_or_else(|| {
        let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown CDF \"{value}\"; shipped: {} (or give a path containing '/' or ending in .cdf)",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_cdf_matches_its_declared_mean() {
        for (name, _) in SHIPPED {
            let cdf = shipped(name).unwrap();
            let rule = cdf.declared.unwrap_or_else(|| panic!("{name} declares no sampling rule"));
            let declared = cdf.declared_mean.unwrap_or_else(|| panic!("{name} declares no mean"));
            let exact = cdf.mean(rule);
            assert!((exact / declared - 1.0).abs() < 0.005, "{name}: analytic mean {exact} vs declared {declared}");
            // Sampled mean within 1% of the declared mean, with enough samples that 1% is at least
            // three standard errors (heavy tails such as datamining need tens of millions).
            let cv = (cdf.second_moment(rule) / (exact * exact) - 1.0).sqrt();
            let n = ((cv / 0.0033).powi(2) as usize).clamp(1_000_000, 40_000_000);
            let mut rng = Rng::seed_from(17);
            let sampled = (0..n).map(|_| cdf.sample(&mut rng, rule) as f64).sum::<f64>() / n as f64;
            assert!((sampled / declared - 1.0).abs() < 0.01, "{name}: sampled mean {sampled} vs declared {declared}");
        }
    }

    #[test]
    fn log_linear_interpolates_in_log_space() {
        let cdf = Cdf::parse("100 0\n10000 1\n", "t").unwrap();
        assert!((cdf.quantile(0.5, Interpolation::LogLinear) - 1000.0).abs() < 1e-6);
        assert!((cdf.quantile(0.5, Interpolation::Linear) - 5050.0).abs() < 1e-6);
        assert_eq!(cdf.quantile(0.5, Interpolation::Step), 10000.0);
        let mut rng = Rng::seed_from(1);
        let mut v: Vec<u64> = (0..100_001).map(|_| cdf.sample(&mut rng, Interpolation::LogLinear)).collect();
        v.sort();
        assert!((v[50_000] as f64 / 1000.0 - 1.0).abs() < 0.01, "median {}", v[50_000]);
        assert!((cdf.mean(Interpolation::LogLinear) - 9900.0 / 100f64.ln()).abs() < 1e-9);
        // Second moments check against numeric integration of the quantile function.
        for rule in [Interpolation::Linear, Interpolation::LogLinear, Interpolation::Step] {
            let n = 200_000;
            let num: f64 =
                (0..n).map(|i| cdf.quantile((i as f64 + 0.5) / n as f64, rule).powi(2)).sum::<f64>() / n as f64;
            assert!((num / cdf.second_moment(rule) - 1.0).abs() < 1e-3, "{rule:?}");
        }
    }

    #[test]
    fn step_hits_points_with_their_probabilities() {
        let cdf = Cdf::parse("10 0.25\n20 0.75\n30 1\n", "t").unwrap();
        assert_eq!(cdf.mean(Interpolation::Step), 10.0 * 0.25 + 20.0 * 0.5 + 30.0 * 0.25);
        assert_eq!(cdf.quantile(0.1, Interpolation::Linear), 10.0);
    }

    #[test]
    fn malformed_cdfs_are_rejected_with_the_line() {
        let cases = [
            ("", "no data points"),
            ("10 0.5\n", "must be 1"),
            ("10 0.5\n5 1\n", "line 2: sizes must not decrease"),
            ("10 0.5\n20 0.4\n30 1\n", "line 2: the CDF is not monotone"),
            ("10 1.5\n", "outside [0, 1]"),
            ("ten 0.5\n", "is not a number"),
            ("10 0.5 7\n", "expected `size cumulative_probability`"),
            ("-3 1\n", "non-negative"),
            ("inf 1\n", "non-negative"),
            ("10 nan\n", "outside [0, 1]"),
            ("# sampling=cubic\n10 1\n", "line 1: unknown sampling rule `cubic`"),
            ("# x\n# mean_bytes=big\n10 1\n", "line 2: mean_bytes `big`"),
        ];
        for (text, msg) in cases {
            let e = Cdf::parse(text, "f.cdf").unwrap_err();
            assert!(e.starts_with("f.cdf") && e.contains(msg), "{text:?}: {e}");
        }
        let h = Cdf::parse("# w: x; sampling=log_linear; mean_bytes=12.5 (other rule 3)\n1 0\n10 1\n", "h").unwrap();
        assert_eq!((h.declared, h.declared_mean), (Some(Interpolation::LogLinear), Some(12.5)));
        let zero = Cdf::parse("0 0\n10 1\n", "z").unwrap();
        assert!(zero.check(Interpolation::LogLinear).is_err());
    }
}
