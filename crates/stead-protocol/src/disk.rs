//! Room on the disk: how much of the file system holding the run logs stays free
//! (`[logs] keep_free`), and how full the state directory's disk is, as `status` reports
//! it. Run output stops being written below the reserve, so the ledger, on the same disk
//! by default, always has room to record how runs end.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::units::parse_size;

/// The free space kept on the file system holding the run logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeepFree {
    /// This share of the file system's size, at most [`KeepFree::PERCENT_CAP`] bytes.
    Percent(u8),
    /// This many bytes.
    Bytes(u64),
}

impl Default for KeepFree {
    /// 5 % of the file system, at most 4 GiB.
    fn default() -> Self {
        Self::Percent(5)
    }
}

impl KeepFree {
    /// A share never reserves more than this (as journald caps `SystemKeepFree`).
    pub const PERCENT_CAP: u64 = 4 << 30;

    /// The bytes kept free on a file system of `total` bytes.
    pub fn bytes_of(self, total: u64) -> u64 {
        match self {
            Self::Percent(p) => {
                let share = u128::from(total) * u128::from(p) / 100;
                u64::try_from(share)
                    .unwrap_or(u64::MAX)
                    .min(Self::PERCENT_CAP)
            }
            Self::Bytes(b) => b,
        }
    }

    /// `5%`, `0`, `512MiB`, `2GiB`, `100MB`, `65536`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let wrong = || {
            format!(
                "invalid keep_free {text:?}: expected a share of the disk (5%) or a size (512MiB, 2GiB, 100MB, or bytes)"
            )
        };
        if let Some(p) = text.strip_suffix('%') {
            return match p.trim().parse::<u8>() {
                Ok(p) if p < 100 => Ok(Self::Percent(p)),
                _ => Err(wrong()),
            };
        }
        parse_size(text).map(Self::Bytes).map_err(|_| wrong())
    }
}

impl fmt::Display for KeepFree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Percent(p) => write!(f, "{p}%"),
            Self::Bytes(b) => write!(f, "{b} bytes"),
        }
    }
}

/// The disk holding the state directory (and so, by default, the ledger and the logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskSpace {
    /// Bytes free to this user.
    pub free_bytes: u64,
    pub total_bytes: u64,
    /// What `[logs] keep_free` keeps free there: run output stops below it.
    pub reserve_bytes: u64,
}

impl DiskSpace {
    /// A disk of `total` bytes with `free` free, and what `keep_free` reserves there.
    pub fn new(free: u64, total: u64, keep_free: KeepFree) -> Self {
        Self {
            free_bytes: free,
            total_bytes: total,
            reserve_bytes: keep_free.bytes_of(total),
        }
    }

    /// Below the reserve: run output is being dropped.
    pub fn below_reserve(&self) -> bool {
        self.free_bytes < self.reserve_bytes
    }

    /// Within twice the reserve: worth a warning before output starts being dropped.
    pub fn nearly_full(&self) -> bool {
        self.free_bytes < self.reserve_bytes.saturating_mul(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_free_reads_shares_and_sizes() {
        assert_eq!(KeepFree::parse("5%"), Ok(KeepFree::Percent(5)));
        assert_eq!(KeepFree::parse(" 0 "), Ok(KeepFree::Bytes(0)));
        assert_eq!(KeepFree::parse("512MiB"), Ok(KeepFree::Bytes(512 << 20)));
        assert_eq!(KeepFree::parse("2 GiB"), Ok(KeepFree::Bytes(2 << 30)));
        assert_eq!(KeepFree::parse("100MB"), Ok(KeepFree::Bytes(100_000_000)));
        for bad in ["", "100%", "-1", "5 %x", "12XB", "99999999999999999999"] {
            assert!(KeepFree::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_share_is_capped_and_a_size_is_as_given() {
        assert_eq!(KeepFree::Percent(5).bytes_of(6 << 20), 314_572);
        assert_eq!(
            KeepFree::Percent(5).bytes_of(1 << 40),
            KeepFree::PERCENT_CAP
        );
        assert_eq!(KeepFree::Bytes(7).bytes_of(1 << 40), 7);
    }
}
