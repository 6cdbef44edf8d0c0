//! `/proc/self/smaps`: which mappings' pages a server may let go of once started.

/// Drops the pages of the read-only file mappings (program text, read-only data), then
/// returns the freed heap to the system; the bytes of mappings let go of.
pub fn let_go_of_start() -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mappings = droppable(&smaps);
    for mapping in &mappings {
        // SAFETY: the range is one whole mapping of this process, read-only and backed
        // by a file, with no private (anonymous) page in it: dropping its pages discards
        // nothing that the file does not hold, and a later access maps the same bytes
        // again. A page cannot turn private meanwhile, since nothing may write it.
        unsafe {
            let _ = rustix::mm::madvise(
                mapping.start as *mut std::ffi::c_void,
                mapping.len,
                rustix::mm::Advice::LinuxDontNeed,
            );
        }
    }
    #[cfg(target_env = "gnu")]
    // SAFETY: glibc's malloc_trim only returns free memory of its own heap.
    unsafe {
        libc::malloc_trim(0);
    }
    mappings.iter().map(|m| m.len).sum()
}

/// A mapping whose pages may be dropped.
#[derive(Debug, PartialEq, Eq)]
struct Mapping {
    start: usize,
    len: usize,
}

/// The mappings of `smaps` (the text of `/proc/self/smaps`) that are private, backed by a
/// file, not writable, and hold no anonymous page (so no page relocated or patched in
/// place: the RELRO segment is read-only but written once at load, and is left alone).
fn droppable(smaps: &str) -> Vec<Mapping> {
    let mut found = Vec::new();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        if let Some(header) = header(line) {
            current = header;
            continue;
        }
        if let Some(kb) = line.strip_prefix("Anonymous:")
            && let Some(mapping) = current.take()
            && kb.trim().trim_end_matches("kB").trim() == "0"
        {
            found.push(mapping);
        }
    }
    found
}

/// `Some(..)` for a mapping's header line: `Some(Some(mapping))` when it is a candidate
/// (private, read-only, of a file), `Some(None)` for any other mapping; `None` for a
/// line of fields.
fn header(line: &str) -> Option<Option<Mapping>> {
    let mut fields = line.split_whitespace();
    let range = fields.next()?;
    let (start, end) = range.split_once('-')?;
    let (start, end) = (
        usize::from_str_radix(start, 16).ok()?,
        usize::from_str_radix(end, 16).ok()?,
    );
    let perms = fields.next()?;
    let path = fields.nth(3);
    let candidate = perms.len() == 4
        && perms.starts_with('r')
        && perms.as_bytes()[1] == b'-'
        && perms.ends_with('p')
        && path.is_some_and(|p| p.starts_with('/'))
        && end > start;
    Some(candidate.then_some(Mapping {
        start,
        len: end - start,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c0400000 r--p 00000000 fd:01 123 /usr/bin/steadd
Size:               4096 kB
Rss:                1884 kB
Anonymous:             0 kB
55d0c0400000-55d0c1400000 r-xp 00400000 fd:01 123 /usr/bin/steadd
Size:              16384 kB
Anonymous:             0 kB
55d0c1400000-55d0c1500000 r--p 01400000 fd:01 123 /usr/bin/steadd
Size:               1024 kB
Anonymous:           660 kB
55d0c1500000-55d0c1510000 rw-p 01500000 fd:01 123 /usr/bin/steadd
Anonymous:            64 kB
55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0 [heap]
Anonymous:           528 kB
7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]
Anonymous:             0 kB
7f0000000000-7f0000001000 r-xs 00000000 fd:01 9 /dev/shm/shared
Anonymous:             0 kB
";

    #[test]
    fn only_clean_read_only_private_file_mappings_are_dropped() {
        assert_eq!(
            droppable(SMAPS),
            vec![
                Mapping {
                    start: 0x55d0c0000000,
                    len: 0x400000
                },
                Mapping {
                    start: 0x55d0c0400000,
                    len: 0x1000000
                },
            ]
        );
    }

    #[test]
    fn this_process_still_runs_after_letting_go() {
        let before = std::hint::black_box(format!("{}", 6 * 7));
        let_go_of_start();
        // Code and read-only data come back from the page cache on their next use.
        assert_eq!(format!("{}", 6 * 7), before);
        assert!(droppable(&std::fs::read_to_string("/proc/self/smaps").unwrap()).len() > 1);
    }
}
