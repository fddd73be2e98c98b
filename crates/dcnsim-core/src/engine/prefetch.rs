//! Cache-line prefetch hints for the hot path (large fabrics: state that is read a few events from
//! now and is out of cache). Hints only: an address that is stale or out of bounds is harmless,
//! since a prefetch neither faults nor changes anything.

/// Asks the CPU for the cache line holding `p` (no effect off x86_64).
#[inline(always)]
pub fn line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is a hint; it never dereferences the address in a way that faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
