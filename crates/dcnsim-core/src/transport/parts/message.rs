//! How a message of `size` bytes is cut into packets: every packet carries a full MSS of payload
//! except the last, which carries the rest. Packet `i` starts at byte `i * MSS`.

use crate::transport::Framing;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageLayout {
    size_bytes: u64,
    packets: u64,
    mss: u32,
    header_bytes: u32,
    last_payload: u32,
}

impl MessageLayout {
    /// Layout of a message of `size_bytes` (at least 1) under `framing`.
    pub fn new(size_bytes: u64, framing: Framing) -> MessageLayout {
        assert!(size_bytes > 0, "a message has at least one byte");
        let mss = framing.mss();
        debug_assert!(mss > 0);
        let packets = size_bytes.div_ceil(mss as u64);
        let last_payload = (size_bytes - (packets - 1) * mss as u64) as u32;
        MessageLayout { size_bytes, packets, mss, header_bytes: framing.header_bytes, last_payload }
    }

    #[inline]
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Number of packets.
    #[inline]
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Index of the last packet.
    #[inline]
    pub fn last_packet(&self) -> u64 {
        self.packets - 1
    }

    #[inline]
    pub fn is_last(&self, i: u64) -> bool {
        i + 1 == self.packets
    }

    /// Payload bytes of packet `i`.
    #[inline]
    pub fn payload(&self, i: u64) -> u32 {
        debug_assert!(i < self.packets, "packet {i} of {}", self.packets);
        if self.is_last(i) {
            self.last_payload
        } else {
            self.mss
        }
    }

    /// Bytes packet `i` occupies on the wire, headers included.
    #[inline]
    pub fn wire_bytes(&self, i: u64) -> u32 {
        self.payload(i) + self.header_bytes
    }

    /// Wire bytes of packets `[a, b)` (0 when `a >= b`).
    #[inline]
    pub fn wire_bytes_of(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        debug_assert!(b <= self.packets);
        let full = (self.mss + self.header_bytes) as u64;
        let mut w = (b - a) * full;
        if b == self.packets {
            w -= (self.mss - self.last_payload) as u64;
        }
        w
    }

    /// Byte offset of the first payload byte of packet `i`.
    #[inline]
    pub fn offset(&self, i: u64) -> u64 {
        debug_assert!(i <= self.packets);
        i * self.mss as u64
    }

    /// The packet holding byte `offset`.
    #[inline]
    pub fn packet_at(&self, offset: u64) -> u64 {
        debug_assert!(offset < self.size_bytes);
        offset / self.mss as u64
    }

    /// Payload bytes of a full packet.
    #[inline]
    pub fn mss(&self) -> u32 {
        self.mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing() -> Framing {
        Framing { mtu_bytes: 1500, header_bytes: 60, control_bytes: 64 }
    }

    #[test]
    fn payloads_sum_to_the_size_and_only_the_last_is_short() {
        for size in [1u64, 1439, 1440, 1441, 2880, 100_000, 1_000_003] {
            let m = MessageLayout::new(size, framing());
            assert_eq!(m.packets(), size.div_ceil(1440));
            let sum: u64 = (0..m.packets()).map(|i| m.payload(i) as u64).sum();
            assert_eq!(sum, size, "size {size}");
            for i in 0..m.last_packet() {
                assert_eq!(m.payload(i), 1440);
                assert_eq!(m.wire_bytes(i), 1500);
                assert!(!m.is_last(i));
            }
            assert!(m.is_last(m.last_packet()));
            assert!(m.payload(m.last_packet()) >= 1);
            assert_eq!(m.offset(m.last_packet()) + m.payload(m.last_packet()) as u64, size);
        }
    }

    #[test]
    fn wire_bytes_of_a_range_is_the_sum_of_its_packets() {
        let m = MessageLayout::new(10_000, framing());
        for a in 0..=m.packets() {
            for b in 0..=m.packets() {
                let sum: u64 = (a..b).map(|i| m.wire_bytes(i) as u64).sum();
                assert_eq!(m.wire_bytes_of(a, b), sum, "[{a}, {b})");
            }
        }
        assert_eq!(m.wire_bytes_of(0, m.packets()), 10_000 + 7 * 60);
    }

    #[test]
    fn offsets_map_back_to_packets() {
        let m = MessageLayout::new(5000, framing());
        for i in 0..m.packets() {
            assert_eq!(m.packet_at(m.offset(i)), i);
            assert_eq!(m.packet_at(m.offset(i) + m.payload(i) as u64 - 1), i);
        }
    }

    #[test]
    #[should_panic(expected = "at least one byte")]
    fn an_empty_message_is_refused() {
        MessageLayout::new(0, framing());
    }
}
