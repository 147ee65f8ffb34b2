//! A loopback `phy::Device` over a fixed ring of packet slots in caller memory.
//!
//! smoltcp's own `phy::Loopback` queues `Vec<u8>`s (it needs `alloc`); this one
//! needs nothing but the slice it is given: `storage` is cut into `SLOTS` equal
//! slots of `storage.len() / SLOTS` bytes, which is also the MTU it reports.
//! Every packet transmitted is received back in FIFO order.
//!
//! This is the seam where a kernel-bypass user plugs in their NIC: `receive`
//! becomes "take the next descriptor from the RX ring" (the RX token reads the
//! packet in place, then returns the buffer to the pool), `transmit` becomes
//! "claim a free TX descriptor" (the TX token fills it in place and rings the
//! doorbell). Nothing else in the loop changes.

use smoltcp::phy::{self, ChecksumCapabilities, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

/// Queue bookkeeping, kept apart from the packet bytes so that an RX token
/// (reading one slot) and its paired TX token (filling another and queueing
/// it) can borrow the device at the same time.
#[derive(Debug, Clone, Copy)]
struct Ring<const SLOTS: usize> {
    /// Slot of the oldest queued packet.
    head: usize,
    /// Packets queued.
    count: usize,
    /// Length of the packet in each slot.
    lens: [usize; SLOTS],
    /// Packets that did not fit their slot (never expected: smoltcp honours the MTU).
    dropped: u64,
}

impl<const SLOTS: usize> Ring<SLOTS> {
    fn tail(&self) -> usize {
        (self.head + self.count) % SLOTS
    }
}

/// An IP-medium loopback device over `SLOTS` packet slots in `storage`.
///
/// One slot is always kept free so that the TX token handed out with an RX
/// token (for an immediate reply such as an ACK) never lands on the slot being
/// read: at most `SLOTS - 1` packets are queued. `SLOTS` must be at least 2.
#[derive(Debug)]
pub struct RingDevice<B, const SLOTS: usize> {
    storage: B,
    mtu: usize,
    ring: Ring<SLOTS>,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const SLOTS: usize> RingDevice<B, SLOTS> {
    /// A device over `storage`; the MTU is `storage.len() / SLOTS`
    /// (at most 65535, the largest IPv4 packet).
    pub fn new(storage: B) -> Self {
        const { assert!(SLOTS >= 2, "a ring device needs at least two slots") };
        let mtu = (storage.as_ref().len() / SLOTS).min(65535);
        RingDevice {
            storage,
            mtu,
            ring: Ring {
                head: 0,
                count: 0,
                lens: [0; SLOTS],
                dropped: 0,
            },
        }
    }

    /// Packets waiting to be received.
    pub fn queued(&self) -> usize {
        self.ring.count
    }

    /// Packets dropped because they were larger than a slot (smoltcp never sends
    /// any: it sizes packets by the MTU this device reports).
    pub fn dropped(&self) -> u64 {
        self.ring.dropped
    }

    /// The slot size, reported to smoltcp as the MTU.
    pub fn mtu(&self) -> usize {
        self.mtu
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const SLOTS: usize> phy::Device for RingDevice<B, SLOTS> {
    type RxToken<'a>
        = RxToken<'a>
    where
        Self: 'a;
    type TxToken<'a>
        = TxToken<'a, SLOTS>
    where
        Self: 'a;

    fn receive(&mut self, _now: Instant) -> Option<(RxToken<'_>, TxToken<'_, SLOTS>)> {
        if self.ring.count == 0 {
            return None;
        }
        let rx_slot = self.ring.head;
        let len = self.ring.lens[rx_slot];
        self.ring.head = (rx_slot + 1) % SLOTS;
        self.ring.count -= 1;
        // At most SLOTS - 1 were queued, so now at most SLOTS - 2 are: the tail
        // slot is neither queued nor the one being read.
        let tx_slot = self.ring.tail();
        let mtu = self.mtu;
        let storage = self.storage.as_mut();
        let (rx, tx) = if rx_slot < tx_slot {
            let (low, high) = storage.split_at_mut(tx_slot * mtu);
            (&low[rx_slot * mtu..][..len], &mut high[..mtu])
        } else {
            let (low, high) = storage.split_at_mut(rx_slot * mtu);
            (&high[..len], &mut low[tx_slot * mtu..][..mtu])
        };
        let tx = TxToken {
            slot: tx,
            at: tx_slot,
            ring: &mut self.ring,
        };
        Some((RxToken { packet: rx }, tx))
    }

    fn transmit(&mut self, _now: Instant) -> Option<TxToken<'_, SLOTS>> {
        if self.ring.count >= SLOTS - 1 {
            return None;
        }
        let at = self.ring.tail();
        let mtu = self.mtu;
        Some(TxToken {
            slot: &mut self.storage.as_mut()[at * mtu..][..mtu],
            at,
            ring: &mut self.ring,
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = self.mtu;
        // The bytes never leave memory: like smoltcp's Loopback (and a NIC with
        // checksum offload), neither compute nor verify checksums.
        caps.checksum = ChecksumCapabilities::ignored();
        caps
    }
}

/// A received packet, read in place from its slot.
#[derive(Debug)]
pub struct RxToken<'a> {
    packet: &'a [u8],
}

impl phy::RxToken for RxToken<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.packet)
    }
}

/// A free slot; consuming it fills the slot and queues the packet.
#[derive(Debug)]
pub struct TxToken<'a, const SLOTS: usize> {
    slot: &'a mut [u8],
    at: usize,
    ring: &'a mut Ring<SLOTS>,
}

impl<const SLOTS: usize> phy::TxToken for TxToken<'_, SLOTS> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        if len > self.slot.len() {
            // Give the stack a scratch-sized view it can fill without running off
            // the slot, and drop the packet: truncating it would corrupt the stream.
            self.ring.dropped += 1;
            return f(self.slot);
        }
        let r = f(&mut self.slot[..len]);
        self.ring.lens[self.at] = len;
        self.ring.count += 1;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::phy::{Device, RxToken as _, TxToken as _};
    use std::vec;
    use std::vec::Vec;

    fn send<const N: usize, const S: usize>(
        dev: &mut RingDevice<[u8; N], S>,
        byte: u8,
        len: usize,
    ) -> bool {
        match dev.transmit(Instant::ZERO) {
            Some(t) => {
                t.consume(len, |b| b.fill(byte));
                true
            }
            None => false,
        }
    }

    #[test]
    fn fifo_with_one_slot_kept_free() {
        let mut dev = RingDevice::<_, 4>::new([0u8; 64]);
        assert_eq!(dev.mtu(), 16);
        assert!(send(&mut dev, 1, 3));
        assert!(send(&mut dev, 2, 16));
        assert!(send(&mut dev, 3, 0));
        assert!(!send(&mut dev, 4, 1), "at most SLOTS - 1 queued");
        assert_eq!(dev.queued(), 3);
        let (rx, tx) = dev.receive(Instant::ZERO).unwrap();
        // Reply while the received packet is still borrowed.
        tx.consume(5, |b| b.fill(9));
        assert_eq!(rx.consume(|p| p.to_vec()), vec![1; 3]);
        let mut got = Vec::new();
        while let Some((rx, _tx)) = dev.receive(Instant::ZERO) {
            got.push(rx.consume(|p| p.to_vec()));
        }
        assert_eq!(got, vec![vec![2; 16], vec![], vec![9; 5]]);
        assert_eq!(dev.dropped(), 0);
    }

    #[test]
    fn reply_slot_never_overwrites_the_packet_being_read() {
        let mut dev = RingDevice::<_, 3>::new([0u8; 30]);
        for round in 0..20u8 {
            assert!(send(&mut dev, round, 10));
            assert!(send(&mut dev, round.wrapping_add(100), 7));
            let (rx, tx) = dev.receive(Instant::ZERO).unwrap();
            tx.consume(10, |b| b.fill(0xEE));
            assert_eq!(rx.consume(|p| p.to_vec()), vec![round; 10]);
            let (rx, _) = dev.receive(Instant::ZERO).unwrap();
            assert_eq!(rx.consume(|p| p.to_vec()), vec![round.wrapping_add(100); 7]);
            let (rx, _) = dev.receive(Instant::ZERO).unwrap();
            assert_eq!(rx.consume(|p| p.to_vec()), vec![0xEE; 10]);
            assert!(dev.receive(Instant::ZERO).is_none());
        }
    }

    #[test]
    fn oversize_packet_is_dropped_not_truncated() {
        let mut dev = RingDevice::<_, 2>::new([0u8; 8]);
        assert!(send(&mut dev, 7, 5));
        assert_eq!(dev.queued(), 0);
        assert_eq!(dev.dropped(), 1);
    }
}
