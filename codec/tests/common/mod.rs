//! A counting global allocator for the tests that prove "no heap allocation
//! in the loop": it counts the allocations of the calling thread only, so the
//! test harness's own threads do not disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread (the test's own thread;
/// the harness's threads do not disturb the count).
struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // `try_with`: the slot may be gone while the thread is torn down.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: delegates every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours, passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours, passed through.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours, passed through.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread so far. Checks once per call that the counter
/// really counts (a probe allocation must move it), so a test built on it cannot pass
/// because the global allocator was not installed.
pub fn allocs() -> u64 {
    let before = ALLOCS.with(Cell::get);
    drop(std::hint::black_box(Box::new(0u64)));
    assert_eq!(
        ALLOCS.with(Cell::get),
        before + 1,
        "allocation counter is not counting"
    );
    // The probe is not the caller's: take it out again.
    ALLOCS.with(|c| c.set(before));
    before
}
