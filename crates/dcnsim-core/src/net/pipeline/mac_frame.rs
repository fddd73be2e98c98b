//! MAC control frames (PFC's PAUSE and RESUME) on a link: not pooled packets but ids with the top
//! bit set, carried in the link's pipe beside the packets (pool ids stay below 2^28).

use crate::ids::PacketId;
use crate::net::queue::MAX_PRIORITIES;

/// Marks a link entry that is a MAC control frame, not a pooled packet.
const MAC_FRAME: PacketId = 1 << 31;
const RESUME: PacketId = 1 << 3;

#[inline(always)]
pub fn is_mac_frame(id: PacketId) -> bool {
    id & MAC_FRAME != 0
}

pub fn frame(class: usize, pause: bool) -> PacketId {
    debug_assert!(class < MAX_PRIORITIES as usize);
    MAC_FRAME | if pause { 0 } else { RESUME } | class as PacketId
}

/// Whether the frame `id` is a RESUME (otherwise a PAUSE).
pub fn is_resume(id: PacketId) -> bool {
    id & RESUME != 0
}

/// The priority class a frame pauses or resumes.
pub fn class_of(id: PacketId) -> u8 {
    (id & (MAX_PRIORITIES as PacketId - 1)) as u8
}
