//! The discrete-event kernel: picosecond time, the event queue, and random numbers.
pub mod events;
pub mod rng;
pub mod time;
