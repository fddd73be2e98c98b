//! The process's allocator: the system's, but large buffers (the port array, the packet pool, the
//! event arena, routing tables) are aligned to 2 MiB and marked for transparent huge pages.
//!
//! Why: on large fabrics most per-hop reads are TLB misses before they are cache misses. At 3,456
//! hosts the ports alone span 10 MiB, 2,560 pages of 4 KiB, more than the data TLB holds, and under
//! a hypervisor each miss is a two-level page walk. With 2 MiB pages the same ports need five
//! entries. Linux's default (`transparent_hugepage = madvise`) gives huge pages only to memory
//! that asks for them, which is what `madvise(MADV_HUGEPAGE)` does here.
//!
//! Small allocations come from the system allocator's heap as before, but the heap is marked too
//! (as glibc's `glibc.malloc.hugetlb=1` tunable would, which cannot be set from inside a process):
//! the per-port class queues, per-flow state and boxed stages are scattered over it, and with
//! only the large buffers on huge pages the 3,456-host run was no faster. The heap grows in steps
//! of `HEAP_STEP`, so that whole 2 MiB ranges of it are mapped before anything touches them (a
//! huge page is only given to an aligned range the mapping covers entirely and nothing has faulted
//! in yet). Cost: resident memory rounds up to whole 2 MiB pages as it is touched. No effect on
//! results.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Buffers at least this large get huge pages (smaller ones would waste most of a page).
const HUGE_MIN: usize = 1 << 20;
const HUGE_ALIGN: usize = 1 << 21;
/// The heap grows by at least this much at a time (glibc's `M_TOP_PAD`; the default is 128 KiB).
const HEAP_STEP: i32 = 32 << 20;

/// End of the heap range already marked: a small allocation ending beyond it marks the rest.
static HEAP_MARKED: AtomicUsize = AtomicUsize::new(0);

pub struct HugePageAlloc;

#[inline]
fn is_huge(layout: &Layout) -> bool {
    layout.size() >= HUGE_MIN
}

#[inline]
fn huge_layout(layout: &Layout) -> Layout {
    // Size and alignment come from a valid layout; a 2 MiB alignment keeps it valid.
    Layout::from_size_align(layout.size(), layout.align().max(HUGE_ALIGN)).expect("valid layout")
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, size: usize) {
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
    }
    // A hint: where the kernel refuses (THP off), the buffer keeps small pages.
    // SAFETY: madvise only changes how the kernel backs the range; it is mapped memory we own.
    unsafe {
        madvise(ptr, size.next_multiple_of(4096), MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _size: usize) {}

/// A small block at `ptr` ends beyond the marked heap: marks the heap from it to the break. Blocks
/// outside the heap (mapped ones, other threads' arenas) are left alone.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[cold]
#[inline(never)]
fn mark_heap(ptr: *mut u8) {
    const M_TOP_PAD: i32 = -2;
    extern "C" {
        fn sbrk(increment: isize) -> *mut u8;
        fn mallopt(param: i32, value: i32) -> i32;
    }
    let marked = HEAP_MARKED.load(Ordering::Relaxed);
    // SAFETY: `sbrk(0)` only reads the current break; `mallopt` is safe outside malloc's own calls.
    let brk = unsafe { sbrk(0) } as usize;
    let start = (ptr as usize).max(marked) & !4095;
    if (ptr as usize) >= brk || start >= brk {
        return;
    }
    if marked == 0 {
        unsafe { mallopt(M_TOP_PAD, HEAP_STEP) };
    }
    advise_huge(start as *mut u8, brk - start);
    HEAP_MARKED.store(brk, Ordering::Relaxed);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn mark_heap(_ptr: *mut u8) {}

// SAFETY: every block comes from `System` with the layout it is returned with (`huge_layout` is a
// function of the caller's layout, so alloc and dealloc agree).
/// One allocation through `system` (the system allocator's `alloc` or `alloc_zeroed`): a large
/// block aligned and advised for huge pages, a small one marking the heap it grew.
#[inline]
fn place(layout: Layout, system: impl FnOnce(Layout) -> *mut u8) -> *mut u8 {
    if !is_huge(&layout) {
        let p = system(layout);
        if p as usize + layout.size() > HEAP_MARKED.load(Ordering::Relaxed) {
            mark_heap(p);
        }
        return p;
    }
    let p = system(huge_layout(&layout));
    if !p.is_null() {
        advise_huge(p, layout.size());
    }
    p
}

unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's (or its huge-page-aligned) non-zero-size layout.
        place(layout, |l| unsafe { System.alloc(l) })
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        place(layout, |l| unsafe { System.alloc_zeroed(l) })
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_huge(&layout) {
            System.dealloc(ptr, huge_layout(&layout));
        } else {
            System.dealloc(ptr, layout);
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if !is_huge(&layout) && !is_huge(&new_layout) {
            let p = System.realloc(ptr, layout, new_size);
            if p as usize + new_size > HEAP_MARKED.load(Ordering::Relaxed) {
                mark_heap(p);
            }
            return p;
        }
        let p = self.alloc(new_layout);
        if !p.is_null() {
            std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_aligned_for_huge_pages_and_keep_their_contents() {
        let a = HugePageAlloc;
        unsafe {
            let small = Layout::from_size_align(100, 8).unwrap();
            let s = a.alloc(small);
            s.write(7);
            // Growing past the threshold moves it to an aligned block with its contents.
            let l = a.realloc(s, small, 3 << 20);
            assert_eq!(l as usize % HUGE_ALIGN, 0);
            assert_eq!(*l, 7);
            let large = Layout::from_size_align(3 << 20, 8).unwrap();
            // Shrinking below it goes back to an ordinary block.
            let back = a.realloc(l, large, 64);
            assert_eq!(*back, 7);
            a.dealloc(back, Layout::from_size_align(64, 8).unwrap());
        }
    }
}
