//! The module's allocator: free lists by size class for small blocks, in front of Talc.
//!
//! Reading a trace makes and frees tens of small blocks per span (ids, names, attribute
//! lists, JSON values of a line that is read and dropped), and Talc's `allocate` and
//! `deallocate`, which search bins and merge neighbours, were about a seventh of reading OTLP
//! in wasm (`node --cpu-prof` on a build with names, issue 17). Most blocks are small and
//! their sizes repeat, so a block of at most [`SMALL`] bytes is served from a list of freed
//! blocks of its size class, or cut from a slab taken from Talc, and goes back on that list
//! when freed: a few instructions each way. Larger blocks, and any alignment above 16, go to
//! Talc as before. Instructions per warm pass over 5 MB (wasm in Node under callgrind): OTLP
//! -3.3%, Langfuse -4.7%, Agents SDK -4.8%, the span checker -3.9% on mostly flagged rows
//! and -1.1% on mostly ok ones; `pack` of 4 MiB unchanged; peak memory of `check` on 60 MB
//! within 3% either way.
//!
//! A class's free blocks are kept as an array of their addresses, not a list linked through
//! the blocks, and are put back in address order when a check starts ([`Classes::tidy`]).
//! In an instance that checks one trace after another (the page's worker, a program that
//! makes a `Checker` per file), a check freed tens of thousands of blocks in the order it dropped them, and the next check
//! took them in that order: popping a linked list read each block to find the next, each
//! from another cache line, and that load was 88% of the allocator's samples (`perf` over
//! V8's code map). The warm push of a 50 MB Langfuse export slowed from 208 ms on the
//! second check to 250 on the tenth; now it stays at 180 (OTLP at 115). A one-file run
//! (the CLI) sorts nothing: its checker starts with no free blocks.
//!
//! The price: a freed small block is reused only by its own class, never merged or handed
//! back to Talc, so memory held by one burst of small blocks stays with their classes (the
//! module's memory never shrinks anyway), each block is rounded up to a multiple of 16
//! bytes (Talc's own blocks carry a tag and are rounded too), and each carved block has a
//! slot of 4 bytes in its class's array for good.
//!
//! Only for a module without threads: the lists are plain cells, as Talc's wasm allocator
//! is. The allocator is the binary's choice, so it lives here, not in the core.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr;

/// The largest block served by size class.
const SMALL: usize = 512;
/// Size classes are multiples of this, which is also the largest alignment they give.
const STEP: usize = 16;
const CLASSES: usize = SMALL / STEP;
/// Bytes taken from Talc at a time for small blocks.
const SLAB: usize = 64 << 10;

struct State {
    /// The free blocks of each class.
    free: [Stack; CLASSES],
    /// The unused part of the current slab.
    next: *mut u8,
    end: *mut u8,
}

/// The addresses of a class's free blocks, the last freed on top, in an array of their own
/// (from the inner allocator) with a slot for every block of the class carved so far, so a
/// free never needs room it might not get.
struct Stack {
    at: *mut *mut u8,
    /// Free blocks: the first `len` slots.
    len: usize,
    /// Blocks of the class carved so far, free or not: the slots the array has room for.
    carved: usize,
    /// Blocks freed since the class's blocks were last put in address order.
    since: usize,
}

const EMPTY: Stack = Stack {
    at: ptr::null_mut(),
    len: 0,
    carved: 0,
    since: 0,
};

/// `tidy` orders a class's free blocks only once at least this many were freed since the
/// last time, and at least half as many as it holds: a sort of `n` blocks then follows at
/// least `n / 2` frees, a logarithm per free, and a run of small checks sorts nothing.
const TIDY_AFTER: usize = 1024;

/// The fewest slots a class's array is made with.
const MIN_SLOTS: usize = 16;

pub struct Classes<A> {
    inner: A,
    state: UnsafeCell<State>,
}

// SAFETY: the module has no threads (this type is only the global allocator of a build
// without the `atomics` target feature, see lib.rs), so the state is never shared between
// threads.
unsafe impl<A: Sync> Sync for Classes<A> {}

impl<A> Classes<A> {
    pub const fn new(inner: A) -> Self {
        Classes {
            inner,
            state: UnsafeCell::new(State {
                free: [EMPTY; CLASSES],
                next: ptr::null_mut(),
                end: ptr::null_mut(),
            }),
        }
    }
}

/// The class of a layout, or `None` when Talc serves it.
#[inline(always)]
fn class(layout: Layout) -> Option<usize> {
    (layout.size() <= SMALL && layout.align() <= STEP)
        .then(|| layout.size().saturating_sub(1) / STEP)
}

impl<A: GlobalAlloc> Classes<A> {
    /// A block of class `c` cut from the slab, taking a new slab when this one is used up
    /// (what is left of the old one, less than a block, is not used), and a slot for it in
    /// the class's array. Null when the inner allocator has no room for either.
    #[cold]
    unsafe fn carve(&self, c: usize) -> *mut u8 {
        let size = (c + 1) * STEP;
        // SAFETY: single-threaded (see the `Sync` impl), and no other borrow of the state
        // is live: the callers hold none while calling here.
        let s = unsafe { &mut *self.state.get() };
        if (s.end as usize) - (s.next as usize) < size {
            // SAFETY: a non-zero size and a power-of-two alignment.
            let slab = unsafe {
                self.inner
                    .alloc(Layout::from_size_align_unchecked(SLAB, STEP))
            };
            if slab.is_null() {
                return slab;
            }
            s.next = slab;
            // SAFETY: within (one past the end of) the slab just allocated.
            s.end = unsafe { slab.add(SLAB) };
        }
        // A slot for the block about to be carved: the array holds
        // `max(MIN_SLOTS, carved.next_power_of_two())` slots, doubled when full.
        let stack = &mut s.free[c];
        let n = stack.carved;
        if n == 0 || (n >= MIN_SLOTS && n.is_power_of_two()) {
            let slots = |k: usize| {
                // SAFETY: a non-zero size (k >= MIN_SLOTS) and a pointer's alignment.
                unsafe {
                    Layout::from_size_align_unchecked(
                        k * size_of::<*mut u8>(),
                        align_of::<*mut u8>(),
                    )
                }
            };
            // SAFETY: the array, when there is one, was allocated by the inner allocator
            // with `slots(n)` (it is full: it has `n` slots).
            let grown = unsafe {
                if n == 0 {
                    self.inner.alloc(slots(MIN_SLOTS))
                } else {
                    self.inner
                        .realloc(stack.at.cast(), slots(n), slots(2 * n).size())
                }
            };
            if grown.is_null() {
                return grown;
            }
            stack.at = grown.cast();
        }
        stack.carved = n + 1;
        let block = s.next;
        // SAFETY: `size` bytes are left in the slab (checked above).
        s.next = unsafe { block.add(size) };
        block
    }
}

impl<A> Classes<A> {
    /// Orders each class's free blocks by address, the lowest taken first: after a check
    /// frees what it held, its blocks are in the order they were dropped, scattered over
    /// the memory, and the next check took them in that order, each from another cache
    /// line and page.
    pub fn tidy(&self) {
        // SAFETY: single-threaded, and no other borrow of the state is live (not called
        // from within the allocator).
        let s = unsafe { &mut *self.state.get() };
        for stack in &mut s.free {
            if stack.since < TIDY_AFTER || stack.since * 2 < stack.len {
                continue;
            }
            stack.since = 0;
            // SAFETY: the first `len` slots are initialized block addresses.
            let free = unsafe { std::slice::from_raw_parts_mut(stack.at, stack.len) };
            // Highest first: a block is taken from the end.
            free.sort_unstable_by(|a, b| b.cmp(a));
        }
    }
}

// SAFETY: a small block is `(class + 1) * 16` bytes at a 16-byte-aligned address (slabs are
// 16-aligned and every class a multiple of 16), so it fits any layout of its class; it is
// handed out once until freed (free lists and the slab never overlap: a block is on a list
// only after `dealloc`). Every other layout goes to the inner allocator unchanged, and
// `dealloc` and `realloc` tell the two apart by the layout, which the caller must give as
// it was allocated.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Classes<A> {
    // Never inlined: at every allocation site of the module the fast path took 97 KB more
    // wasm (20 KB gzipped) for no measurable gain over a call.
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(c) = class(layout) else {
            // SAFETY: the caller's layout, passed on.
            return unsafe { self.inner.alloc(layout) };
        };
        // SAFETY: single-threaded; the borrow ends before `carve` takes its own.
        let stack = unsafe { &mut (*self.state.get()).free[c] };
        if stack.len == 0 {
            // SAFETY: as above.
            return unsafe { self.carve(c) };
        }
        stack.len -= 1;
        // SAFETY: the first `len` slots hold free blocks of this class (`dealloc`).
        unsafe { stack.at.add(stack.len).read() }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(c) = class(layout) else {
            // SAFETY: allocated by the inner allocator with this layout.
            return unsafe { self.inner.dealloc(block, layout) };
        };
        // SAFETY: single-threaded. The block was carved for this class, which gave it a slot,
        // and is not free now, so fewer than `carved` blocks are: slot `len` is in the array.
        unsafe {
            let stack = &mut (*self.state.get()).free[c];
            debug_assert!(stack.len < stack.carved);
            stack.at.add(stack.len).write(block);
            stack.len += 1;
            stack.since += 1;
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's alignment, already valid.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(layout), class(new)) {
            // The block already has room for the new size.
            (Some(a), Some(b)) if a == b => block,
            // Talc can often grow or shrink in place.
            // SAFETY: the caller's block and layout, passed on.
            (None, None) => unsafe { self.inner.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: `new` is a valid layout of non-zero size (the caller's contract).
                let moved = unsafe { self.alloc(new) };
                if !moved.is_null() {
                    // SAFETY: both blocks hold at least the smaller size, and are distinct.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// A live block: where, its layout, and the byte it was filled with.
    struct Live {
        at: *mut u8,
        layout: Layout,
        fill: u8,
    }

    fn check(b: &Live) {
        assert_eq!(b.at as usize % b.layout.align(), 0, "{:?}", b.layout);
        // SAFETY: the block is live and `layout.size()` bytes long.
        let bytes = unsafe { std::slice::from_raw_parts(b.at, b.layout.size()) };
        assert!(
            bytes.iter().all(|&x| x == b.fill),
            "{:?} overwritten",
            b.layout
        );
    }

    fn fill(b: &Live) {
        // SAFETY: as in `check`.
        unsafe { ptr::write_bytes(b.at, b.fill, b.layout.size()) };
    }

    /// Thousands of blocks of every class, both sides of [`SMALL`], alignments up to 64,
    /// freed and grown or shrunk in a scrambled order: every block keeps its alignment and its
    /// bytes (no two live blocks overlap), and `realloc` keeps the common prefix.
    #[wasm_bindgen_test]
    fn blocks_never_overlap_and_keep_their_bytes() {
        let a = Classes::new(System);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut live: Vec<Live> = Vec::new();
        for step in 0..20_000u32 {
            // Free blocks put in address order now and then, between any two steps.
            if next(500) == 0 {
                a.tidy();
            }
            match next(10) {
                0..=4 => {
                    let size = match next(4) {
                        0 => 1 + next(16),
                        1 => 1 + next(SMALL as u64),
                        2 => SMALL as u64 - 8 + next(16),
                        _ => 1 + next(4 * SMALL as u64),
                    } as usize;
                    let align = 1 << next(7);
                    let layout = Layout::from_size_align(size, align).unwrap();
                    // SAFETY: a non-zero size.
                    let at = unsafe { a.alloc(layout) };
                    assert!(!at.is_null());
                    let b = Live {
                        at,
                        layout,
                        fill: step as u8,
                    };
                    fill(&b);
                    live.push(b);
                }
                5..=7 if !live.is_empty() => {
                    let b = live.swap_remove(next(live.len() as u64) as usize);
                    check(&b);
                    // SAFETY: allocated by `a` with this layout, freed once.
                    unsafe { a.dealloc(b.at, b.layout) };
                }
                8 | 9 if !live.is_empty() => {
                    let i = next(live.len() as u64) as usize;
                    check(&live[i]);
                    let old = live[i].layout;
                    let size = 1 + next(3 * SMALL as u64) as usize;
                    // SAFETY: allocated by `a` with `old`; a non-zero new size.
                    let at = unsafe { a.realloc(live[i].at, old, size) };
                    assert!(!at.is_null());
                    let moved = Live {
                        at,
                        layout: Layout::from_size_align(size, old.align()).unwrap(),
                        fill: live[i].fill,
                    };
                    // SAFETY: the common prefix was copied.
                    let kept = unsafe { std::slice::from_raw_parts(at, old.size().min(size)) };
                    assert!(kept.iter().all(|&x| x == moved.fill));
                    fill(&moved);
                    live[i] = moved;
                }
                _ => {}
            }
        }
        live.iter().for_each(check);
        for b in live {
            // SAFETY: as above.
            unsafe { a.dealloc(b.at, b.layout) };
        }
    }

    /// After `tidy`, a class's free blocks are handed out lowest address first, each once;
    /// fewer than [`TIDY_AFTER`] frees since the last order leave the order as it is.
    #[wasm_bindgen_test]
    fn tidy_hands_out_free_blocks_in_address_order() {
        let a = Classes::new(System);
        let l = Layout::from_size_align(40, 8).unwrap();
        let n = 3 * TIDY_AFTER;
        // SAFETY: a non-zero size; each block freed once with its layout, then taken again.
        unsafe {
            let mut blocks: Vec<*mut u8> = (0..n).map(|_| a.alloc(l)).collect();
            // Freed in a scrambled order.
            let mut order: Vec<usize> = (0..n).collect();
            let mut seed = 7u64;
            for i in (1..n).rev() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (seed >> 33) as usize % (i + 1));
            }
            for &i in &order {
                a.dealloc(blocks[i], l);
            }
            a.tidy();
            let again: Vec<*mut u8> = (0..n).map(|_| a.alloc(l)).collect();
            blocks.sort_unstable();
            assert_eq!(again, blocks);
            // A few frees: no reordering (the last freed is taken first).
            let (x, y) = (again[5], again[3]);
            a.dealloc(x, l);
            a.dealloc(y, l);
            a.tidy();
            assert_eq!((a.alloc(l), a.alloc(l)), (y, x));
        }
    }

    /// A freed small block is the next one handed out for its class, and only for it.
    #[wasm_bindgen_test]
    fn freed_blocks_are_reused_by_their_class() {
        let a = Classes::new(System);
        let l24 = Layout::from_size_align(24, 8).unwrap();
        let l32 = Layout::from_size_align(32, 16).unwrap();
        let l33 = Layout::from_size_align(33, 1).unwrap();
        // SAFETY: non-zero sizes; each block freed once with its layout.
        unsafe {
            let x = a.alloc(l24);
            a.dealloc(x, l24);
            // 24 and 32 bytes are one class (17..=32).
            assert_eq!(a.alloc(l32), x);
            assert_ne!(a.alloc(l33), x);
            // Growing within the class keeps the block; past it, the block moves.
            assert_eq!(a.realloc(x, l32, 20), x);
            let y = a.realloc(x, Layout::from_size_align(20, 16).unwrap(), 40);
            assert_ne!(y, x);
            assert_eq!(a.alloc(l24), x);
        }
    }
}
