//! Fresh memory mapped in bulk before it is first written.
//!
//! A large vector from the allocator is fresh anonymous memory: the kernel maps each 4 KiB page
//! on its first write, one page fault each. A scene load writes about 27 MB into such memory for
//! the conference room (the meshes, the trees, the triangle blocks), about 6,800 faults, which
//! in a process that has not touched that memory before cost about as much as the rest of the
//! load. [`populate`] asks Linux to map a range's pages in one call (`madvise` with
//! `MADV_POPULATE_WRITE`, Linux 5.14): the same zeroed pages, without a trap per page. Callers
//! populate the piece of a vector a thread is about to fill, so the mapping is spread over the
//! cores as the fill is.
//!
//! Memory the allocator hands out again is usually mapped already (glibc keeps freed blocks of
//! up to 32 MiB in its heap), and populating it would only walk its page tables: a loop of
//! conference loads in one process ran 15 % slower so. So the first page of each piece is looked
//! up first (`mincore`, one page) and a piece whose first page is mapped is left alone.
//!
//! It changes timing only, never contents: the pages hold what they held (zeros, for fresh
//! memory). Where the call is unknown (another OS, an older kernel, a page size the 4 KiB
//! rounding below does not meet) nothing is done or the kernel refuses the call, and the pages
//! fault in one at a time as before.

/// Maps the whole 4 KiB pages inside `elements` ahead of their first write (see the module docs).
pub(crate) fn populate<T>(elements: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = elements.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(elements);
        // Whole pages only: a page the slice shares with other data is left to fault as usual.
        let first = start.next_multiple_of(PAGE);
        let last = end & !(PAGE - 1);
        if last > first && !resident(first) {
            // SAFETY: `[first, last)` lies inside `elements`, memory this call borrows mutably,
            // so no other reference sees it while the kernel maps it; `MADV_POPULATE_WRITE`
            // maps pages without changing their contents, and on failure (an older kernel:
            // EINVAL; a page size larger than 4 KiB: EINVAL) it does nothing, which needs no
            // handling.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_POPULATE_WRITE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = elements;
}

/// Whether the page at `page` (4 KiB-aligned, inside memory the caller borrows) is mapped
/// already: memory the allocator hands out again usually is, and populating it would only walk
/// its page tables.
#[cfg(target_os = "linux")]
fn resident(page: usize) -> bool {
    let mut flags = 0u8;
    // SAFETY: `mincore` reads the page tables of the one page at `page`, which lies inside a
    // slice the caller borrows, and writes one byte (one page) to `flags`, a live local.
    let done = unsafe { libc::mincore(page as *mut libc::c_void, 4096, &mut flags) };
    done == 0 && flags & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::populate;

    /// Contents are unchanged, for fresh memory and for memory already written, aligned or not.
    #[test]
    fn populating_keeps_contents() {
        let mut fresh = bytemuck::zeroed_vec::<u32>(1 << 20);
        populate(&mut fresh);
        assert!(fresh.iter().all(|&x| x == 0));
        let mut written: Vec<u32> = (0..(1u32 << 18) + 3).collect();
        populate(&mut written[1..]);
        populate(&mut written[..0]);
        assert!(written.iter().enumerate().all(|(i, &x)| x == i as u32));
    }

    /// After the call, the pages are mapped (Linux 5.14 and later): what `populate` is for.
    #[cfg(target_os = "linux")]
    #[test]
    fn populated_pages_are_mapped() {
        let mut fresh = bytemuck::zeroed_vec::<u8>(8 << 20);
        let page = (fresh.as_ptr() as usize).next_multiple_of(4096);
        let last = (fresh.as_ptr() as usize + fresh.len() - 1) & !4095;
        populate(&mut fresh);
        assert!(super::resident(page) && super::resident(last - 4096));
    }
}
