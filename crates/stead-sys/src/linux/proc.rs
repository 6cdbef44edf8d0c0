//! What `/proc` tells of processes: start identities, the tree below a process, the
//! argument area.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::procs::Proc;

/// Parses a `/proc/PID/stat` line after the last `)`: the command name (field 2) may hold
/// anything, spaces and parentheses included.
pub(super) fn parse(pid: i32, stat: &str) -> Option<Proc> {
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    // Fields 6 to 21 lie between the group (5) and the start time (22).
    let started = fields.nth(16)?.parse().ok()?;
    Some(Proc {
        pid,
        parent,
        group,
        started,
        zombie: state == "Z" || state == "X",
    })
}

fn read(pid: i32) -> io::Result<Option<Proc>> {
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(e),
    };
    parse(pid, &stat).map(Some).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unreadable /proc/{pid}/stat"),
        )
    })
}

pub fn process(pid: i32) -> Option<Proc> {
    read(pid).ok().flatten()
}

pub fn start_identity(pid: u32) -> io::Result<Option<String>> {
    let Some(p) = read(pid as i32)? else {
        return Ok(None);
    };
    if p.zombie {
        return Ok(None);
    }
    Ok(Some(format!(
        "linux:{}:{}",
        crate::identity::boot_id()?,
        p.started
    )))
}

/// The children of `pid`, from its threads' `children` lists; `None` where the kernel
/// keeps none (no thread has the file). A thread that ends between the listing and the
/// read has no children left to tell of: it is passed over, not taken for a kernel
/// without the lists (which would cost a read of every process's `stat`).
fn children(pid: i32) -> Option<Vec<i32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut found = Vec::new();
    let mut listed = false;
    for task in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        listed = true;
        found.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    listed.then_some(found)
}

/// The live descendants of `root`: through the `children` lists (a run that left nothing
/// costs a read or two), or, without them, through every process's parent link. A zombie
/// is not looked into: whatever it had was handed to the subreaper as it exited. The
/// marker is not needed here: the subreaper keeps orphans below.
pub fn descendants(root: i32, _marker: &str) -> Vec<Proc> {
    let Some(first) = children(root) else {
        return descendants_of(root, &all());
    };
    let mut found = Vec::new();
    let mut next = first;
    while let Some(pid) = next.pop() {
        let Some(p) = process(pid).filter(|p| !p.zombie) else {
            continue;
        };
        found.push(p);
        next.extend(children(pid).unwrap_or_default());
    }
    found
}

fn all() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(process)
        .collect()
}

/// The program `pid` runs, by the path it was started from: a file replaced or removed
/// since (an upgrade) still reads as that path.
pub fn executable(pid: i32) -> Option<PathBuf> {
    let link = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let raw = link.into_os_string().into_vec();
    let path = raw.strip_suffix(b" (deleted)").map(<[u8]>::to_vec);
    Some(PathBuf::from(OsString::from_vec(path.unwrap_or(raw))))
}

/// The live descendants of `root`, found by following parent links down from it.
pub(super) fn descendants_of(root: i32, procs: &[Proc]) -> Vec<Proc> {
    let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.parent).or_default().push(p);
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            next.push(child.pid);
            if !child.zombie {
                found.push(**child);
            }
        }
    }
    found
}

/// The argument area, from fields 48 and 49 of `/proc/self/stat` (arg_start and
/// arg_end), counted after the command name's closing parenthesis from field 3.
pub fn argument_area() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let start = fields.get(48 - 3)?.parse::<usize>().ok()?;
    let end = fields.get(49 - 3)?.parse::<usize>().ok()?;
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_name() {
        let line = "42 (a) b (c) S 7 41 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 9876 1 1";
        assert_eq!(
            parse(42, line),
            Some(Proc {
                pid: 42,
                parent: 7,
                group: 41,
                started: 9876,
                zombie: false
            })
        );
        let zombie = "4242 (evil) name) Z 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert!(parse(4242, zombie).is_some_and(|p| p.zombie && p.started == 987654));
        assert_eq!(parse(1, "nonsense"), None);
    }

    #[test]
    fn descendants_are_found_through_every_generation_and_zombies_are_left_alone() {
        let p = |pid, parent, zombie| Proc {
            pid,
            parent,
            group: pid,
            started: 1,
            zombie,
        };
        let procs = [
            p(10, 1, false),  // the monitor
            p(11, 10, true),  // the command's leader, exited and unreaped
            p(12, 10, false), // re-parented to the monitor after a double fork
            p(13, 12, false), // its child
            p(14, 1, false),  // a stranger
            p(15, 14, false), // a stranger's child
        ];
        let mut found: Vec<i32> = descendants_of(10, &procs).iter().map(|p| p.pid).collect();
        found.sort();
        assert_eq!(found, [12, 13]);
    }
}
