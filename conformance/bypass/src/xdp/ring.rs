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
        let map = Mapping::ring(fd, len, pgoff)?;
        let base = map.as_ptr();
        // SAFETY: the kernel's offsets lie inside the mapping it sized for this ring
        // (`desc + size * entry` is its length); the words are 4-byte aligned.
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
        let ring = Shared::map(fd, off, size, pgoff)?;
        let head = ring.producer().load(Ordering::Relaxed);
        let cached_consumer = ring.consumer().load(Ordering::Acquire);
        Ok(Producer {
            ring,
            head,
            submitted: head,
            cached_consumer,
        })
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
        let ring = Shared::map(fd, off, size, pgoff)?;
        let tail = ring.consumer().load(Ordering::Relaxed);
        Ok(Consumer {
            ring,
            tail,
            released: tail,
            cached_producer: tail,
        })
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
