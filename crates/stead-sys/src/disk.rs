//! How full a disk is: the free and total bytes of the file system holding a path or an
//! open file (`statvfs`, the same call on both platforms).

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

/// Free bytes (to this user) and the size of the file system holding `file`.
pub fn space_of(file: impl AsFd) -> io::Result<(u64, u64)> {
    Ok(sizes(&rustix::fs::fstatvfs(file)?))
}

/// Free bytes (to this user) and the size of the file system holding `path`.
pub fn space(path: &Path) -> io::Result<(u64, u64)> {
    Ok(sizes(&rustix::fs::statvfs(path)?))
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
    fn a_real_disk_has_room_and_a_size() {
        let dir = tempfile::tempdir().unwrap();
        let (free, total) = space(dir.path()).unwrap();
        assert!(total > 0 && free <= total);
        let file = std::fs::File::open(dir.path()).unwrap();
        assert_eq!(space_of(&file).unwrap().1, total);
    }
}
