//! Which machine this is: the id every run row carries, and the host's name.
//!
//! The id is bound to the host, never to the state directory: a ledger copied to another
//! machine must not make that machine believe it started the first one's runs. Linux
//! reads `/etc/machine-id` (or D-Bus's copy); macOS asks the kernel for the hardware
//! UUID (`gethostuuid`). `STEAD_MACHINE_ID` overrides it, so tests can play several
//! machines.

use std::io;

use crate::os;

/// The environment variable that overrides the machine id.
pub const MACHINE_ID_ENV: &str = "STEAD_MACHINE_ID";

/// The environment variable that overrides the host's name.
pub const HOST_NAME_ENV: &str = "STEAD_HOST_NAME";

/// This host's name in a cluster (what `--host` names and `stead hosts` shows):
/// `STEAD_HOST_NAME`, else the system's host name.
pub fn host_name() -> String {
    std::env::var(HOST_NAME_ENV)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned()
        })
}

/// This machine's id.
pub fn machine_id() -> io::Result<String> {
    if let Some(id) = std::env::var(MACHINE_ID_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        return Ok(id.trim().to_string());
    }
    os::host_id()
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_host_has_an_id() {
        let id = super::os::host_id().unwrap();
        assert!(!id.is_empty());
        assert_eq!(id, super::os::host_id().unwrap());
    }
}
