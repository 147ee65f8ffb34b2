//! Buffers a connection slot lends to the connection it is running, and gets
//! back when that connection is dropped, so that a reconnect reuses the memory
//! the caller handed in once.
//!
//! The codec's connections own their storage (`R: AsMut<[u8]>`), and a dead
//! connection cannot give a `&mut [u8]` back. A [`Region`] is one piece of a
//! slot's arena, held for `'s`; [`Region::lease`] hands out a [`Lease`] over
//! it. The slot keeps one rule, checked in one place (`Slot::rebuild`): the
//! connection holding the previous leases is dropped before new ones are made,
//! so at most one `Lease` of a region is alive at any time.
#![allow(unsafe_code)]

use core::marker::PhantomData;
use core::ptr::NonNull;

/// A piece of a slot's arena, borrowed for `'s`.
#[derive(Debug)]
pub(crate) struct Region<'s> {
    ptr: NonNull<u8>,
    len: usize,
    _arena: PhantomData<&'s mut [u8]>,
}

// SAFETY: a region is the exclusive borrow of its bytes (from the `&'s mut [u8]`
// it was made of); moving it to another thread moves that borrow.
unsafe impl Send for Region<'_> {}

impl<'s> Region<'s> {
    /// Take the region over `mem` for `'s`.
    pub(crate) fn new(mem: &'s mut [u8]) -> Self {
        Region {
            len: mem.len(),
            // A slice's pointer is never null (dangling but aligned when empty).
            ptr: NonNull::from(mem).cast(),
            _arena: PhantomData,
        }
    }

    /// The region's length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Lend the region out.
    ///
    /// # Safety
    ///
    /// No other `Lease` of this region may be alive while the new one is (the
    /// slot drops the connection holding the previous one first).
    pub(crate) unsafe fn lease(&mut self) -> Lease<'s> {
        Lease {
            ptr: self.ptr,
            len: self.len,
            _arena: PhantomData,
        }
    }
}

/// A region lent to a connection as its storage.
#[derive(Debug)]
pub struct Lease<'s> {
    ptr: NonNull<u8>,
    len: usize,
    _arena: PhantomData<&'s mut [u8]>,
}

// SAFETY: a lease is the only live handle to its bytes (Region::lease's contract).
unsafe impl Send for Lease<'_> {}

impl AsRef<[u8]> for Lease<'_> {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` is a live `&'s mut [u8]` (Region::new) and this
        // lease is its only user (Region::lease's contract); `&self` keeps it shared.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsMut<[u8]> for Lease<'_> {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_ref`; `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}
