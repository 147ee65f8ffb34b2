//! The four single-producer, single-consumer rings an XDP socket shares with
//! the kernel: a power-of-two array of descriptors plus a producer and a
//! consumer index (free-running `u32`s) and a flags word, all in one mapping.
//!
//! Each side keeps cached copies of both indices and touches the shared ones
//! only in batches: a producer reads the consumer index when its cached view
//! says the ring is full, and publishes its own index once per batch
//! ([`Producer::submit`]); a consumer reads the producer index when its cached
//! view is empty, and gives slots back once per batch ([`Consumer::release`]).
//! Publishing is a release store after the descriptors were written; reading
//! is an acquire load before they are read (the kernel pairs them the same way).

use std::io;
use std::os::fd::OwnedFd;
use std::prelude::rust_2024::*;
use std::sync::atomic::{AtomicU32, Ordering};

use super::sys::Mapping;

/// The shared words and descriptors of one ring.
#[derive(Debug)]
struct Shared<T> {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    descs: *mut T,
    mask: u32,
    size: u32,
    _map: Mapping,
}

// SAFETY: the pointers point into `_map`, which moves with the ring; the kernel
// side is synchronized through the atomics.
unsafe impl<T> Send for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// Map the ring of `size` entries at page offset `pgoff` of `fd`, laid out as `off` says.
    fn map(fd: &OwnedFd, off: &libc::xdp_ring_offset, size: u32, pgoff: u64) -> io::Result<Self> {
        if !size.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ring size must be a power of two",
            ));
        }
        let len = off.desc as usize + size as usize * size_of::<T>();
        Self::over(Mapping::ring(fd, len, pgoff)?, off, size)
    }

    /// The ring laid out as `off` says in `map`, which holds at least
    /// `off.desc + size * size_of::<T>()` bytes.
    fn over(map: Mapping, off: &libc::xdp_ring_offset, size: u32) -> io::Result<Self> {
        let words = [off.producer, off.consumer, off.flags];
        if words
            .iter()
            .any(|&w| w % 4 != 0 || w as usize + 4 > map.len())
            || !(off.desc as usize).is_multiple_of(align_of::<T>())
            || off.desc as usize + size as usize * size_of::<T>() > map.len()
        {
            return Err(io::Error::other("XDP ring offsets outside the mapping"));
        }
        let base = map.as_ptr();
        // SAFETY: every offset was checked to lie inside the mapping, suitably
        // aligned, with room for `size` descriptors after `desc`.
        unsafe {
            Ok(Shared {
                producer: base.add(off.producer as usize).cast(),
                consumer: base.add(off.consumer as usize).cast(),
                flags: base.add(off.flags as usize).cast(),
                descs: base.add(off.desc as usize).cast(),
                mask: size - 1,
                size,
                _map: map,
            })
        }
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into the live mapping (see `map`); only accessed atomically.
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    /// Whether the kernel asked to be woken up (`XDP_RING_NEED_WAKEUP`).
    fn needs_wakeup(&self) -> bool {
        // SAFETY: as for `producer`.
        let flags = unsafe { &*self.flags };
        flags.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    fn slot(&self, index: u32) -> *mut T {
        // SAFETY: `index & mask < size`: inside the descriptor array.
        unsafe { self.descs.add((index & self.mask) as usize) }
    }
}

/// The side of a ring where user space writes (fill, TX).
#[derive(Debug)]
pub(crate) struct Producer<T> {
    ring: Shared<T>,
    /// Next slot to write (published up to `submitted`).
    head: u32,
    /// What `producer` holds in shared memory.
    submitted: u32,
    /// The consumer index as last read.
    cached_consumer: u32,
}

impl<T: Copy> Producer<T> {
    pub(crate) fn map(
        fd: &OwnedFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        pgoff: u64,
    ) -> io::Result<Self> {
        Ok(Self::new(Shared::map(fd, off, size, pgoff)?))
    }

    fn new(ring: Shared<T>) -> Self {
        let head = ring.producer().load(Ordering::Relaxed);
        let cached_consumer = ring.consumer().load(Ordering::Acquire);
        Producer {
            ring,
            head,
            submitted: head,
            cached_consumer,
        }
    }

    /// Free slots, re-reading the consumer index only when the cached view is full.
    pub(crate) fn free(&mut self) -> u32 {
        let free = self.ring.size - self.head.wrapping_sub(self.cached_consumer);
        if free > 0 {
            return free;
        }
        self.cached_consumer = self.ring.consumer().load(Ordering::Acquire);
        self.ring.size - self.head.wrapping_sub(self.cached_consumer)
    }

    /// Write `value` into the next slot (not yet visible to the kernel).
    /// Returns false when the ring is full.
    pub(crate) fn push(&mut self, value: T) -> bool {
        if self.free() == 0 {
            return false;
        }
        // SAFETY: the slot is between the consumer and the producer index's
        // next lap: the kernel does not read it until we publish it.
        unsafe { self.ring.slot(self.head).write(value) };
        self.head = self.head.wrapping_add(1);
        true
    }

    /// Slots written and not yet published.
    pub(crate) fn unsubmitted(&self) -> u32 {
        self.head.wrapping_sub(self.submitted)
    }

    /// Publish every slot written so far (one release store).
    pub(crate) fn submit(&mut self) {
        if self.head != self.submitted {
            self.ring.producer().store(self.head, Ordering::Release);
            self.submitted = self.head;
        }
    }

    /// Whether the kernel asked for a wake-up to notice new entries.
    pub(crate) fn needs_wakeup(&self) -> bool {
        self.ring.needs_wakeup()
    }
}

/// The side of a ring where user space reads (RX, completion).
#[derive(Debug)]
pub(crate) struct Consumer<T> {
    ring: Shared<T>,
    /// Next slot to read.
    tail: u32,
    /// What `consumer` holds in shared memory.
    released: u32,
    /// The producer index as last read.
    cached_producer: u32,
}

impl<T: Copy> Consumer<T> {
    pub(crate) fn map(
        fd: &OwnedFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        pgoff: u64,
    ) -> io::Result<Self> {
        Ok(Self::new(Shared::map(fd, off, size, pgoff)?))
    }

    fn new(ring: Shared<T>) -> Self {
        let tail = ring.consumer().load(Ordering::Relaxed);
        Consumer {
            ring,
            tail,
            released: tail,
            cached_producer: tail,
        }
    }

    /// Entries ready, re-reading the producer index only when the cached view is empty.
    pub(crate) fn ready(&mut self) -> u32 {
        let n = self.cached_producer.wrapping_sub(self.tail);
        if n > 0 {
            return n;
        }
        self.cached_producer = self.ring.producer().load(Ordering::Acquire);
        self.cached_producer.wrapping_sub(self.tail)
    }

    /// The next entry, if one is ready. Its slot stays ours until [`release`](Self::release).
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.ready() == 0 {
            return None;
        }
        // SAFETY: the slot lies between our consumer index and the producer index
        // the kernel published (acquire): written, and not rewritten until released.
        let v = unsafe { self.ring.slot(self.tail).read() };
        self.tail = self.tail.wrapping_add(1);
        Some(v)
    }

    /// Give every slot read so far back to the kernel (one release store).
    pub(crate) fn release(&mut self) {
        if self.tail != self.released {
            self.ring.consumer().store(self.tail, Ordering::Release);
            self.released = self.tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of 4 `u64`s in anonymous memory laid out like the kernel's
    /// (producer, consumer, flags, then descriptors), plus a pointer through
    /// which the test plays the kernel's side.
    fn ring() -> (Shared<u64>, *mut u32, *mut u64) {
        let map = Mapping::anonymous(4096).unwrap();
        let base = map.as_ptr();
        let off = libc::xdp_ring_offset {
            producer: 0,
            consumer: 64,
            flags: 128,
            desc: 192,
        };
        let ring = Shared::over(map, &off, 4).unwrap();
        // SAFETY: offsets inside the page just mapped (checked by `over`).
        unsafe { (ring, base.cast(), base.add(192).cast()) }
    }

    /// Read/write one of the shared words: 0 producer, 16 consumer, 32 flags (u32 index).
    fn word(base: *mut u32, i: usize) -> u32 {
        // SAFETY: inside the test's page; no other thread touches it.
        unsafe { base.add(i).read_volatile() }
    }
    fn set_word(base: *mut u32, i: usize, v: u32) {
        // SAFETY: as for `word`.
        unsafe { base.add(i).write_volatile(v) }
    }

    #[test]
    fn producer_publishes_only_on_submit_and_rereads_the_consumer_when_full() {
        let (shared, base, descs) = ring();
        let mut p = Producer::new(shared);
        assert_eq!(p.free(), 4);
        assert!(p.push(10) && p.push(11) && p.push(12));
        assert_eq!(word(base, 0), 0, "nothing visible before submit");
        assert_eq!(p.unsubmitted(), 3);
        p.submit();
        assert_eq!(word(base, 0), 3);
        assert!(p.push(13));
        assert!(!p.push(14), "full: the consumer has taken nothing");
        // The kernel consumes two; the producer sees it once it looks again.
        set_word(base, 16, 2);
        assert!(p.push(14) && p.push(15));
        assert!(!p.push(16));
        p.submit();
        assert_eq!(word(base, 0), 6);
        // Slots 4 and 5 wrapped onto 0 and 1.
        // SAFETY: inside the test's page.
        let got: Vec<u64> = (0..4).map(|i| unsafe { descs.add(i).read() }).collect();
        assert_eq!(got, [14, 15, 12, 13]);
        assert!(!p.needs_wakeup());
        set_word(base, 32, libc::XDP_RING_NEED_WAKEUP);
        assert!(p.needs_wakeup());
    }

    #[test]
    fn consumer_reads_what_was_published_and_releases_in_one_store() {
        let (shared, base, descs) = ring();
        let mut c = Consumer::new(shared);
        assert_eq!(c.pop(), None);
        for i in 0..4 {
            // SAFETY: inside the test's page.
            unsafe { descs.add(i).write(100 + i as u64) };
        }
        set_word(base, 0, 3);
        assert_eq!(c.ready(), 3);
        assert_eq!((c.pop(), c.pop()), (Some(100), Some(101)));
        assert_eq!(word(base, 16), 0, "nothing released before release");
        c.release();
        assert_eq!(word(base, 16), 2);
        assert_eq!(c.pop(), Some(102));
        assert_eq!(c.pop(), None);
        // The producer wraps: slot 3, then slot 0 again.
        // SAFETY: inside the test's page.
        unsafe { descs.write(104) };
        set_word(base, 0, 5);
        assert_eq!((c.pop(), c.pop(), c.pop()), (Some(103), Some(104), None));
        c.release();
        assert_eq!(word(base, 16), 5);
    }

    #[test]
    fn offsets_outside_the_mapping_are_refused() {
        let map = Mapping::anonymous(4096).unwrap();
        let off = libc::xdp_ring_offset {
            producer: 0,
            consumer: 64,
            flags: 128,
            desc: 4096 - 16,
        };
        assert!(Shared::<u64>::over(map, &off, 4).is_err());
    }
}
