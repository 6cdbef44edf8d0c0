//! How full a disk is: the free and total bytes of the file system holding a path or an
//! open file, and the state directory's disk as `status` and `doctor` report it.

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use stead_protocol::{DiskSpace, KeepFree};

/// Free bytes (to this user) and the size of the file system holding `file`.
pub fn space_of(file: impl AsFd) -> io::Result<(u64, u64)> {
    Ok(sizes(&rustix::fs::fstatvfs(file)?))
}

/// The disk holding `dir`, with what `keep_free` reserves there; `None` when the file
/// system cannot say.
pub fn disk_space(dir: &Path, keep_free: KeepFree) -> Option<DiskSpace> {
    let (free, total) = sizes(&rustix::fs::statvfs(dir).ok()?);
    Some(DiskSpace {
        free_bytes: free,
        total_bytes: total,
        reserve_bytes: keep_free.bytes_of(total),
    })
}

fn sizes(fs: &rustix::fs::StatVfs) -> (u64, u64) {
    let unit = fs.f_frsize.max(1);
    (
        fs.f_bavail.saturating_mul(unit),
        fs.f_blocks.saturating_mul(unit),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_disk_has_room_and_a_reserve() {
        let dir = tempfile::tempdir().unwrap();
        let disk = disk_space(dir.path(), KeepFree::Percent(5)).unwrap();
        assert!(disk.total_bytes > 0 && disk.free_bytes <= disk.total_bytes);
        assert_eq!(
            disk.reserve_bytes,
            KeepFree::Percent(5).bytes_of(disk.total_bytes)
        );
        let file = std::fs::File::open(dir.path()).unwrap();
        assert_eq!(space_of(&file).unwrap().1, disk.total_bytes);
    }
}
