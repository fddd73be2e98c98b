//! The network-wide packet format every transport shares: MTU, header and control packet sizes.

/// Network-wide packet format, shared by every transport.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Framing {
    /// Wire bytes of a full-sized data packet, headers included.
    pub mtu_bytes: u32,
    /// Header bytes in every data packet (on the wire, counted in `mtu_bytes`).
    pub header_bytes: u32,
    /// Wire bytes of a control packet (ACK, NACK, PULL, credit, trimmed header).
    pub control_bytes: u32,
}

impl Framing {
    /// Application payload of a full-sized packet.
    pub fn mss(&self) -> u32 {
        self.mtu_bytes - self.header_bytes
    }

    /// Wire size of the packet carrying `payload` bytes.
    pub fn wire(&self, payload: u32) -> u32 {
        payload + self.header_bytes
    }
}
