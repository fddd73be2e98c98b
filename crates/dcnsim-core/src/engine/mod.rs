//! The discrete-event kernel: picosecond time, the event queue, and random numbers.
pub mod events;
mod far;
pub mod huge_pages;
pub mod prefetch;
pub mod rng;
mod slot_sort;
