//! What libproc and sysctl tell of processes: start identities, the tree below a
//! process, a process's environment.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::procs::{Proc, marker_entry};

/// From `<sys/proc_info.h>`.
const PROC_UID_ONLY: u32 = 4;
const PROC_PPID_ONLY: u32 = 6;
/// `pbi_status` of a process that has exited and waits to be reaped.
const SZOMB: u32 = 5;
/// launchd, which adopts every orphan.
const LAUNCHD: i32 = 1;

fn bsdinfo(pid: i32) -> io::Result<Option<libc::proc_bsdinfo>> {
    // SAFETY: proc_bsdinfo is plain data; all zeroes is a valid value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a writable buffer of exactly `size` bytes for PROC_PIDTBSDINFO.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if n == size {
        return Ok(Some(info));
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ESRCH) | Some(0) | None => Ok(None),
        _ => Err(err),
    }
}

fn proc_of(pid: i32, info: &libc::proc_bsdinfo) -> Proc {
    Proc {
        pid,
        parent: info.pbi_ppid as i32,
        group: info.pbi_pgid as i32,
        started: info
            .pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
        zombie: info.pbi_status == SZOMB,
    }
}

pub fn process(pid: i32) -> Option<Proc> {
    bsdinfo(pid).ok().flatten().map(|info| proc_of(pid, &info))
}

pub fn start_identity(pid: u32) -> io::Result<Option<String>> {
    let Ok(pid) = i32::try_from(pid) else {
        return Ok(None);
    };
    Ok(bsdinfo(pid)?
        .filter(|info| info.pbi_status != SZOMB)
        .map(|info| {
            format!(
                "darwin:{}.{:06}",
                info.pbi_start_tvsec, info.pbi_start_tvusec
            )
        }))
}

/// The pids `proc_listpids` lists for `kind` and `arg`, in a buffer grown until they fit.
/// (`proc_listchildpids` is this call with `PROC_PPID_ONLY`; this one answers in bytes on
/// every release.)
fn list(kind: u32, arg: u32) -> Vec<i32> {
    let mut capacity = 256usize;
    loop {
        let mut pids = vec![0 as libc::pid_t; capacity];
        let size = std::mem::size_of_val(pids.as_slice()) as libc::c_int;
        // SAFETY: `pids` is writable for `size` bytes.
        let bytes = unsafe { libc::proc_listpids(kind, arg, pids.as_mut_ptr().cast(), size) };
        let Ok(bytes) = usize::try_from(bytes) else {
            return Vec::new();
        };
        let n = bytes / std::mem::size_of::<libc::pid_t>();
        if n < capacity || capacity >= 1 << 20 {
            pids.truncate(n.min(capacity));
            pids.retain(|&pid| pid > 0);
            return pids;
        }
        capacity *= 4;
    }
}

fn children(pid: i32) -> Vec<i32> {
    list(PROC_PPID_ONLY, pid as u32)
}

/// The processes below each of `roots` (the roots left out), zombies walked through but
/// not returned.
fn below(roots: &[i32], seen: &mut HashSet<i32>, found: &mut Vec<Proc>) {
    let mut next: Vec<i32> = roots.iter().flat_map(|&root| children(root)).collect();
    while let Some(pid) = next.pop() {
        if !seen.insert(pid) {
            continue;
        }
        let Some(p) = process(pid) else { continue };
        if !p.zombie {
            found.push(p);
        }
        next.extend(children(pid));
    }
}

pub fn descendants(root: i32, marker: &str) -> Vec<Proc> {
    let mut seen = HashSet::from([root]);
    let mut found = Vec::new();
    below(&[root], &mut seen, &mut found);
    if marker.is_empty() {
        return found;
    }
    // Orphans launchd adopted: this user's, carrying the run's marker.
    let entry = marker_entry(marker);
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let adopted: Vec<Proc> = list(PROC_UID_ONLY, uid)
        .into_iter()
        .filter(|pid| !seen.contains(pid))
        .filter_map(process)
        .filter(|p| p.parent == LAUNCHD && !p.zombie && environment_has(p.pid, &entry))
        .collect();
    let roots: Vec<i32> = adopted.iter().map(|p| p.pid).collect();
    seen.extend(&roots);
    found.extend(adopted);
    below(&roots, &mut seen, &mut found);
    found
}

/// The program `pid` runs, by its path (`proc_pidpath`).
pub fn executable(pid: i32) -> Option<PathBuf> {
    let mut path = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: `path` is writable for the length given.
    let n = unsafe { libc::proc_pidpath(pid, path.as_mut_ptr().cast(), path.len() as u32) };
    let n = usize::try_from(n).ok().filter(|&n| n > 0)?;
    path.truncate(n);
    Some(PathBuf::from(OsString::from_vec(path)))
}

/// Whether `entry` (`NAME=VALUE`) is in the environment of `pid` (one of this user's),
/// read with `KERN_PROCARGS2`: the argument count, the executable's path, the arguments
/// and then the environment, each NUL-terminated.
fn environment_has(pid: i32, entry: &str) -> bool {
    let Some(area) = procargs(pid) else {
        return false;
    };
    crate::procargs::environment(&area).contains(&entry.as_bytes())
}

fn procargs(pid: i32) -> Option<Vec<u8>> {
    let mut argmax = [0u8; std::mem::size_of::<libc::c_int>()];
    sysctl(&mut [libc::CTL_KERN, libc::KERN_ARGMAX], &mut argmax)?;
    let argmax = usize::try_from(libc::c_int::from_ne_bytes(argmax)).ok()?;
    let mut area = vec![0u8; argmax];
    let size = sysctl(&mut [libc::CTL_KERN, libc::KERN_PROCARGS2, pid], &mut area)?;
    area.truncate(size);
    Some(area)
}

/// Reads the value of `mib` into `out`; how many bytes it took.
fn sysctl(mib: &mut [libc::c_int], out: &mut [u8]) -> Option<usize> {
    let mut size = out.len();
    // SAFETY: `out` is writable for `size` bytes and `mib` holds `mib.len()` names.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            out.as_mut_ptr().cast(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then_some(size.min(out.len()))
}
