//! Small parts transports share, each one idea with its own tests: RTT estimation and the RTO
//! ([`rtt`]), how a message is cut into packets ([`message`]), what a receiver holds
//! ([`received`]), a receiver's grant pacer ([`pacer`]), an SRPT chooser ([`srpt`]) and the
//! receiver-driven protocols' silence timers and RESEND requests ([`resend`]).
//! They hold arithmetic and state only; sending packets and setting timers stay with the protocol.

pub mod keys;
pub mod message;
pub mod pacer;
pub mod received;
pub mod resend;
pub mod rtt;
pub mod srpt;

pub use message::MessageLayout;
pub use pacer::ReceiverPacer;
pub use received::{ReceivedBytes, ReceivedSet};
pub use resend::SilenceTimer;
pub use rtt::RttEstimator;
pub use srpt::{srpt_pick, SrptChooser};
