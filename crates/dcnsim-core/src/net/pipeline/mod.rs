//! What an egress port does to a packet, as a pipeline of stages, each in its own file and
//! configured from the spec (`[queue]` per port role, `[switch]` per switch):
//!
//! ```text
//!  arrival ─► admission ─► marking on ─► class queue ─► scheduler ─► dequeue stage ─► wire
//!             drop-tail     enqueue      (per class;    strict,      marking on dequeue,
//!             trimming                   the ingress    WRR, DRR     INT stamp,
//!             shared buffer              is known)                   buffer release (PFC resume)
//!               └─ PFC pause upstream
//! ```
//!
//! Stages are chosen per port by plain enums and flags in `QueueConfig`, matched where they run;
//! no trait objects on the packet path. A port whose configuration has no dequeue stage skips it
//! with one test. Switch-side timers (`Event::SwitchTimer`) serve stages that need one: the PFC
//! deadlock check, the RCP rate update (`rcp`). On arrival at a switch, before admission, Dart's
//! deflection (`deflection`, `[switch] iofd`) may change the egress port, and the PB-FS postcard
//! stage (`postcard`, `[switch] postcards`) keeps per-port arrival history and may send a
//! CC-postcard to the sender. ExpressPass's credit shaper (`credit_shaper`) keeps credits in a
//! token-bucket-served queue of their own beside the class queues. HULL's phantom queue
//! (`phantom`) and RCP's rate stamp (`rcp`) run in the dequeue stage. A stage's own per-packet data
//! (deflection tokens, the PBT mark) rides in the packet's [`marks::StageMarks`].

pub mod admission;
pub mod credit_shaper;
pub mod deadlock;
pub mod deflection;
pub mod dequeue;
pub mod mac_frame;
pub mod marking;
pub mod marks;
pub mod pfc;
pub mod postcard;
pub mod scheduler;
pub mod setup;
pub mod shared_buffer;
pub mod stage;
pub mod stages;
pub mod switch_spec;
pub mod trim;

pub use switch_spec::SwitchConfig;
