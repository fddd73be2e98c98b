//! ExpressPass's keys: the credit feedback control (alpha, w_init, the variant), credit sizes and
//! jitter, the switches' credit queues, and the retransmission timeout.

use crate::net::packet::LoadBalancing;
use crate::net::pipeline::credit_shaper::CreditShaping;
use crate::spec_reader::{Section, SpecResult};
use crate::time::{from_us, Time};
use crate::transport::parts::keys::{read_classes, read_timeout_us, refuse_source_routing};
use crate::transport::SpecEnv;

/// Which credit feedback control the receivers run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// The authors' ns-2 code: a target loss that shrinks as the rate nears the maximum, w steps of
    /// +0.05, a decrease to the measured rate of credits that got through.
    Code,
    /// The paper's Algorithm 1: a fixed target loss, w moving halfway to w_max, a decrease by the
    /// loss fraction.
    Paper,
}

#[derive(Clone, Debug, PartialEq)]
pub struct XpassConfig {
    /// Initial credit rate as a fraction of the maximum.
    pub alpha: f64,
    pub w_init: f64,
    pub w_min: f64,
    pub w_max: f64,
    pub feedback: Feedback,
    /// Code variant: target loss = (1 - rate / max) x this. Paper variant: the fixed target loss.
    pub target_loss: f64,
    pub min_credit_bytes: u32,
    pub max_credit_bytes: u32,
    /// Inter-credit gap x (1 + U[-jitter, jitter]).
    pub jitter: f64,
    pub early_credit_stop: bool,
    pub credit_queue_credits: u32,
    pub credit_bucket_credits: u32,
    pub timeout: Time,
    pub control_priority: u8,
    pub data_priority: u8,
    pub lb: LoadBalancing,
    /// Largest data frame (the run's MTU on the wire), for the credit rate.
    pub max_frame_bytes: u32,
    /// Adaptive initial rate (the code's AIR, 2018, after the paper): a flow asking for credit
    /// with n < this many packets left starts at alpha x n / this; 0 = off (every flow at alpha).
    pub adaptive_start_packets: u32,
}

impl XpassConfig {
    /// The initial credit rate, as a fraction of the maximum, of a flow with `left` packets to send.
    /// A request always has a packet to send; `left` is floored at 1 so a rate is never zero.
    pub fn initial_fraction(&self, left: u64) -> f64 {
        debug_assert!(left > 0, "a credit request with nothing to send");
        let (n, left) = (self.adaptive_start_packets as u64, left.max(1));
        if left < n {
            self.alpha * left as f64 / n as f64
        } else {
            self.alpha
        }
    }

    pub fn avg_credit_bytes(&self) -> f64 {
        (self.min_credit_bytes + self.max_credit_bytes) as f64 / 2.0
    }

    /// Credit share of a link: one credit per largest data frame.
    pub fn credit_rate_fraction(&self) -> f64 {
        self.avg_credit_bytes() / (self.avg_credit_bytes() + self.max_frame_bytes as f64)
    }

    pub fn shaping(&self) -> CreditShaping {
        let avg = self.avg_credit_bytes();
        CreditShaping {
            rate_fraction: self.credit_rate_fraction(),
            queue_bytes: (avg * self.credit_queue_credits as f64).round() as u64,
            bucket_bytes: (avg * self.credit_bucket_credits as f64).round().max(self.max_credit_bytes as f64) as u64,
        }
    }

    pub fn read(s: &mut Section, env: &SpecEnv) -> SpecResult<XpassConfig> {
        refuse_source_routing(s, env, "expresspass")?;
        let alpha = fraction(s, "alpha", 1.0 / 16.0,
            "[expresspass] initial credit rate as a fraction of the maximum (the paper's sweet spot 1/16, section 6.3; the ns-2 default 0.5)")?;
        let w_init = fraction(s, "w_init", 1.0 / 16.0,
            "[expresspass] initial aggressiveness w of the credit feedback (the paper's sweet spot 1/16; the ns-2 default 0.5)")?;
        let w_min = fraction(s, "w_min", 0.01, "[expresspass] floor of w (the authors' code: 0.01)")?;
        let w_max = fraction(s, "w_max", 0.5, "[expresspass] ceiling of w (the authors' code: 0.5)")?;
        s.ensure(
            w_min <= w_init && w_init <= w_max,
            "w_init",
            format!("must be in [w_min, w_max] = [{w_min}, {w_max}]"),
        )?;
        let fb = s.choice_or("feedback", &["code", "paper"], "code",
            "[expresspass] credit feedback control: code = the authors' ns-2 (dynamic target loss, w steps of 0.05, decrease to the measured credit rate); paper = Algorithm 1 (fixed target loss)")?;
        let feedback = if fb == "code" { Feedback::Code } else { Feedback::Paper };
        let target_default = if feedback == Feedback::Code { 0.125 } else { 0.1 };
        let target_loss = fraction(
            s,
            "target_loss",
            target_default,
            "[expresspass] code: target loss = (1 - rate/max) x this (0.125); paper: the fixed target loss (0.1)",
        )?;
        let adaptive_start_packets = s.u64_or(
            "adaptive_start_packets",
            0,
            "packets",
            "[expresspass] adaptive initial rate (AIR, added to the authors' code in 2018, used by the SIRD paper's runs): a flow with n < this many packets to send starts at alpha x n / this; 0 = off, as the paper's evaluation (the code: 40)",
        )?;
        s.ensure(
            adaptive_start_packets <= 1 << 20,
            "adaptive_start_packets",
            format!("must be at most 1048576, got {adaptive_start_packets}"),
        )?;
        let (min_c, max_c, jitter, ecs, cq, cb) = read_credits(s)?;
        let timeout = read_timeout_us(s, "timeout_us", 100.0,
            "[expresspass] credit-request retry, and the receiver's wait before it NACKs missing data (the evaluation script: 100 us)")?;
        let (data_priority, control_priority) = read_classes(
            s,
            "[expresspass] class of data packets",
            "[expresspass] class of credit requests, credit stops and NACKs (credits have their own queue)",
        )?;
        let lb = match env.load_balancing {
            LoadBalancing::Ecmp => LoadBalancing::Symmetric,
            other => other,
        };
        Ok(XpassConfig {
            alpha,
            w_init,
            w_min,
            w_max,
            feedback,
            target_loss,
            min_credit_bytes: min_c as u32,
            max_credit_bytes: max_c as u32,
            jitter,
            early_credit_stop: ecs,
            credit_queue_credits: cq as u32,
            credit_bucket_credits: cb as u32,
            timeout: from_us(timeout),
            control_priority,
            data_priority,
            lb,
            max_frame_bytes: env.framing.mtu_bytes,
            adaptive_start_packets: adaptive_start_packets as u32,
        })
    }
}

/// Credit sizes, jitter, early credit stop, and the ports' credit queues and buckets.
type CreditKeys = (u64, u64, f64, bool, u64, u64);

fn read_credits(s: &mut Section) -> SpecResult<CreditKeys> {
    let min_c = s.u64_or(
        "min_credit_bytes",
        76,
        "bytes",
        "[expresspass] smallest credit on the wire (credit sizes are uniform in [min, max], section 6: 76-92 B)",
    )?;
    let max_c = s.u64_or("max_credit_bytes", 92, "bytes", "[expresspass] largest credit on the wire")?;
    s.ensure(
        (64..=512).contains(&min_c) && min_c <= max_c && max_c <= 512,
        "max_credit_bytes",
        format!("credit sizes must satisfy 64 <= min_credit_bytes <= max_credit_bytes <= 512, got {min_c}..{max_c}"),
    )?;
    let jitter = s.f64_or(
        "credit_jitter",
        0.1,
        "fraction",
        "[expresspass] inter-credit gap x (1 + U[-j, j]) (the authors' code: 0.1)",
    )?;
    s.ensure((0.0..1.0).contains(&jitter), "credit_jitter", format!("must be in [0, 1), got {jitter}"))?;
    let ecs = s.bool_or(
        "early_credit_stop",
        true,
        "[expresspass] a sender stops credits once the credits of the last RTT cover the packets it has left",
    )?;
    let cq = s.u64_or(
        "credit_queue_credits",
        8,
        "credits",
        "[expresspass] credit queue of every port, in average credits (the paper's evaluation: 8)",
    )?;
    let cb = s.u64_or(
        "credit_bucket_credits",
        2,
        "credits",
        "[expresspass] token bucket depth of every port's credit shaper, in average credits (the evaluation script: 2)",
    )?;
    s.ensure((1..=1000).contains(&cq), "credit_queue_credits", format!("must be in 1..=1000, got {cq}"))?;
    s.ensure((1..=1000).contains(&cb), "credit_bucket_credits", format!("must be in 1..=1000, got {cb}"))?;
    Ok((min_c, max_c, jitter, ecs, cq, cb))
}

fn fraction(s: &mut Section, key: &str, default: f64, doc: &'static str) -> SpecResult<f64> {
    let v = s.f64_or(key, default, "fraction", doc)?;
    s.ensure(v > 0.0 && v <= 1.0, key, format!("must be in (0, 1], got {v}"))?;
    Ok(v)
}
