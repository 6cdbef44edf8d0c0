//! Giving back the memory a process's start touched and will not touch again.
//!
//! Starting runs code that is never run again, and the kernel maps pages around every
//! page of it that was touched: most of a fresh server's resident set is program text and
//! read-only data it will not read again. On Linux the server drops the pages of its
//! clean, read-only file mappings (`MADV_DONTNEED` on the mappings `/proc/self/smaps`
//! shows without an anonymous page) and returns its freed heap (`malloc_trim`). Nothing
//! is lost: the pages stay in the page cache and are mapped again by a minor fault when
//! used. macOS has no equivalent worth its risk (its file-backed pages are already
//! reclaimed under pressure); there this does nothing.

use crate::os;

/// Drops the pages of read-only file mappings and returns freed heap to the system;
/// the number of bytes of mappings let go of.
pub fn let_go_of_start() -> usize {
    os::let_go_of_start()
}
