//! The two zlib-rs streams, through libz-rs-sys (zlib-rs's zlib API, with no
//! symbols exported), allocating through `alloc::alloc` with the codec's own
//! `zalloc`/`zfree`: no allocator feature of zlib-rs, so no std.
//!
//! zlib-rs 0.6's own Rust allocator (feature `rust-allocator`) calls
//! `std::alloc` and turns the crate into a std crate, and its `Deflate` /
//! `Inflate` types take no allocator; its zlib API takes one in the stream's
//! `zalloc`/`zfree`/`opaque` fields, as C zlib does. zlib-rs aligns what it
//! asks for itself (it asks `zalloc` for room to do so and keeps the pointer
//! `zalloc` returned, which it hands back to `zfree`), so `zalloc` only has to
//! remember each allocation's size for `dealloc`'s `Layout`: in a header
//! before the pointer it returns.
//!
//! zlib-rs picks its SIMD paths (AVX2 longest-match and window copies, ...)
//! at run time only with its `std` feature (`is_x86_feature_detected!`); this
//! crate's feature `deflate-std` turns it on, and the transport does.

use alloc::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use core::ffi::{c_int, c_uint, c_void};
use core::mem::MaybeUninit;

use libz_rs_sys::{
    Z_BUF_ERROR, Z_DEFAULT_STRATEGY, Z_DEFLATED, Z_OK, Z_STREAM_END, deflate, deflateEnd,
    deflateInit2_, deflateReset, inflate, inflateEnd, inflateGetDictionary, inflateInit2_,
    inflateReset, inflateSetDictionary, z_stream, zlibVersion,
};

pub(super) use libz_rs_sys::Z_SYNC_FLUSH as SYNC_FLUSH;

/// Bytes before each block `zalloc` hands out: the block's full size (a
/// `usize`), padded to the alignment every block gets.
const HEADER: usize = 16;
const _: () = assert!(HEADER >= core::mem::size_of::<usize>() && HEADER.is_power_of_two());

/// zlib's default memory level (the hash table's size), as zlib-rs's
/// `Deflate::new` uses it.
const MEM_LEVEL: c_int = 8;

/// `zalloc`: `items * size` bytes from `alloc::alloc`, after a header that
/// holds the block's full size; null when it overflows or memory is short.
///
/// # Safety
///
/// None beyond the C signature: any arguments are fine.
unsafe extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    let Some(full) = (items as usize)
        .checked_mul(size as usize)
        .and_then(|n| n.checked_add(HEADER))
    else {
        return core::ptr::null_mut();
    };
    let Ok(layout) = Layout::from_size_align(full, HEADER) else {
        return core::ptr::null_mut();
    };
    // SAFETY: `layout` has a nonzero size (at least HEADER).
    let block = unsafe { alloc(layout) };
    if block.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: the block holds at least HEADER bytes and is aligned to HEADER,
    // so a `usize` fits and is aligned at its start; the pointer returned is
    // within the block (HEADER bytes in, `items * size` bytes follow).
    unsafe {
        block.cast::<usize>().write(full);
        block.add(HEADER).cast()
    }
}

/// `zfree`: give back a block `zalloc` handed out.
///
/// # Safety
///
/// `ptr` is null or a pointer `zalloc` returned and not yet freed.
unsafe extern "C" fn zfree(_opaque: *mut c_void, ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` is HEADER bytes into a block `zalloc` allocated with
    // `Layout::from_size_align(full, HEADER)`, `full` stored at its start.
    unsafe {
        let block = ptr.cast::<u8>().sub(HEADER);
        let full = block.cast::<usize>().read();
        dealloc(block, Layout::from_size_align_unchecked(full, HEADER));
    }
}

/// A stream with the codec's allocator and nothing else set.
fn new_stream() -> z_stream {
    z_stream {
        zalloc: Some(zalloc),
        zfree: Some(zfree),
        opaque: core::ptr::null_mut(),
        ..z_stream::default()
    }
}

/// An init that failed. With the parameters clamped to what zlib takes (the
/// callers do), the only failure left is memory: treated as `Vec` treats it.
fn init_failed(code: c_int) -> ! {
    debug_assert_eq!(
        code,
        libz_rs_sys::Z_MEM_ERROR,
        "zlib init refused its parameters"
    );
    handle_alloc_error(Layout::new::<z_stream>())
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<ZDeflate>();
    send_sync::<ZInflate>();
};

/// What one call did: input bytes used, output bytes made, zlib's code.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    /// Input bytes consumed.
    pub used: usize,
    /// Output bytes written (initialized) at the start of the output.
    pub made: usize,
    /// zlib's return code (`Z_OK`, `Z_STREAM_END`, `Z_BUF_ERROR`, or an error).
    pub code: c_int,
}

impl Step {
    /// No error: `Z_OK`, `Z_STREAM_END`, or `Z_BUF_ERROR` (no progress
    /// possible, which is not an error).
    pub fn ok(&self) -> bool {
        matches!(self.code, Z_OK | Z_STREAM_END | Z_BUF_ERROR)
    }

    /// The stream ended (a BFINAL block).
    pub fn ended(&self) -> bool {
        self.code == Z_STREAM_END
    }
}

/// Point `s` at `input` and `out` (each up to `c_uint::MAX` bytes), run `f`,
/// count what moved and clear the pointers again.
fn run(
    s: &mut z_stream,
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    f: impl FnOnce(&mut z_stream) -> c_int,
) -> Step {
    let avail_in = input.len().min(c_uint::MAX as usize) as c_uint;
    let avail_out = out.len().min(c_uint::MAX as usize) as c_uint;
    s.next_in = input.as_ptr();
    s.avail_in = avail_in;
    s.next_out = out.as_mut_ptr().cast();
    s.avail_out = avail_out;
    let code = f(s);
    let step = Step {
        used: (avail_in - s.avail_in) as usize,
        made: (avail_out - s.avail_out) as usize,
        code,
    };
    s.next_in = core::ptr::null();
    s.avail_in = 0;
    s.next_out = core::ptr::null_mut();
    s.avail_out = 0;
    step
}

/// A raw DEFLATE compressor.
pub(super) struct ZDeflate {
    s: z_stream,
}

impl ZDeflate {
    /// Level 0..=9, window bits 9..=15 (raw DEFLATE: no zlib header).
    pub fn new(level: u8, window_bits: u8) -> Self {
        let mut s = new_stream();
        // SAFETY: `s` is a fresh stream with zalloc/zfree set; the version
        // and size are the library's own.
        let code = unsafe {
            deflateInit2_(
                &mut s,
                c_int::from(level.min(9)),
                Z_DEFLATED,
                -c_int::from(window_bits.clamp(9, 15)),
                MEM_LEVEL,
                Z_DEFAULT_STRATEGY,
                zlibVersion(),
                core::mem::size_of::<z_stream>() as c_int,
            )
        };
        if code != Z_OK {
            init_failed(code);
        }
        ZDeflate { s }
    }

    /// Compress from `input` into `out` with zlib's `flush`.
    pub fn compress(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>], flush: c_int) -> Step {
        // SAFETY: the stream was initialized by `new`; `run` points it at
        // `input` (read) and `out` (written, possibly uninitialized) with
        // their lengths, and clears the pointers before they go out of scope.
        run(&mut self.s, input, out, |s| unsafe { deflate(s, flush) })
    }

    /// Start a new stream (forget the window).
    pub fn reset(&mut self) {
        // SAFETY: the stream was initialized by `new`.
        unsafe { deflateReset(&mut self.s) };
    }
}

#[cfg(test)]
impl ZDeflate {
    /// Preset the window (right after a reset): tests build streams whose
    /// later parts refer back across a BFINAL block, as a sender that keeps
    /// its context does. False on a zlib error.
    pub fn set_dictionary(&mut self, dict: &[u8]) -> bool {
        let Ok(len) = c_uint::try_from(dict.len()) else {
            return false;
        };
        // SAFETY: the stream was initialized by `new`; `dict` is valid for
        // `len` bytes and only read.
        unsafe { libz_rs_sys::deflateSetDictionary(&mut self.s, dict.as_ptr(), len) == Z_OK }
    }
}

// SAFETY: the stream owns its state (allocated by `zalloc`, reachable only through
// `s`); the pointers are only used inside `&mut self` calls (next_in/next_out are cleared
// after each), and zalloc/zfree are plain functions over the global allocator. zlib-rs
// makes the same promise for its own `DeflateStream`.
unsafe impl Send for ZDeflate {}
// SAFETY: `&ZDeflate` gives access to nothing (every method takes `&mut self`).
unsafe impl Sync for ZDeflate {}

impl Drop for ZDeflate {
    fn drop(&mut self) {
        // SAFETY: the stream was initialized by `new` and is ended once.
        unsafe { deflateEnd(&mut self.s) };
    }
}

/// A raw DEFLATE decompressor.
pub(super) struct ZInflate {
    s: z_stream,
}

impl ZInflate {
    /// Window bits 8..=15 (raw DEFLATE: no zlib header).
    pub fn new(window_bits: u8) -> Self {
        let mut s = new_stream();
        // SAFETY: `s` is a fresh stream with zalloc/zfree set; the version
        // and size are the library's own.
        let code = unsafe {
            inflateInit2_(
                &mut s,
                -c_int::from(window_bits.clamp(8, 15)),
                zlibVersion(),
                core::mem::size_of::<z_stream>() as c_int,
            )
        };
        if code != Z_OK {
            init_failed(code);
        }
        ZInflate { s }
    }

    /// Decompress from `input` into `out` with zlib's `flush`.
    pub fn decompress(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>], flush: c_int) -> Step {
        // SAFETY: as in `ZDeflate::compress`.
        run(&mut self.s, input, out, |s| unsafe { inflate(s, flush) })
    }

    /// Start a new stream with the same window bits.
    pub fn reset(&mut self) {
        // SAFETY: the stream was initialized by `new`.
        unsafe { inflateReset(&mut self.s) };
    }

    /// Bytes inflated since the stream was made or last reset (for tests: how far a
    /// stream went).
    #[cfg(test)]
    pub fn total_out(&self) -> usize {
        self.s.total_out as usize
    }

    /// Copy the window (the last up to 2^window_bits bytes inflated) into `out`, which
    /// must hold at least that many; returns how many were copied.
    pub fn get_dictionary(&self, out: &mut [u8; 1 << 15]) -> usize {
        let mut len: c_uint = 0;
        // SAFETY: the stream was initialized by `new`; `out` is writable for 32768
        // bytes, the most a window (at most 15 bits) holds, and `len` is a valid
        // pointer to write the length to.
        unsafe { inflateGetDictionary(&self.s, out.as_mut_ptr(), &mut len) };
        (len as usize).min(out.len())
    }

    /// Preset the window (right after a reset); false on a zlib error.
    pub fn set_dictionary(&mut self, dict: &[u8]) -> bool {
        let Ok(len) = c_uint::try_from(dict.len()) else {
            return false;
        };
        // SAFETY: the stream was initialized by `new`; `dict` is valid for
        // `len` bytes and only read.
        unsafe { inflateSetDictionary(&mut self.s, dict.as_ptr(), len) == Z_OK }
    }
}

// SAFETY: as for `ZDeflate`.
unsafe impl Send for ZInflate {}
// SAFETY: as for `ZDeflate`.
unsafe impl Sync for ZInflate {}

impl Drop for ZInflate {
    fn drop(&mut self) {
        // SAFETY: the stream was initialized by `new` and is ended once.
        unsafe { inflateEnd(&mut self.s) };
    }
}
