//! A network namespace of a test's own: another machine on the network, joined to this
//! one by a veth pair, which a test can cut off.

use std::process::{Command, Stdio};

use crate::harness::run_checked;

/// A network namespace joined to this one by a veth pair on a /30 of its own; removed
/// (with the pair) when dropped, even when the test fails.
pub struct NetNs {
    pub name: String,
    host_end: String,
    /// The namespace's end of the pair.
    inner: String,
    /// This side's address (where a test's server listens for the namespace).
    pub host_ip: String,
    /// The pair's network, `10.231.N.0/30`.
    pub subnet: String,
}

fn ip(args: &[&str]) {
    run_checked(
        Command::new("ip").args(args),
        &format!("ip {args:?} (iproute2: scripts/setup-faults installs it)"),
    );
}

impl NetNs {
    pub fn create() -> Self {
        let tag = std::process::id() % 100_000;
        let subnet = 1 + std::process::id() % 250;
        let inner = format!("stp{tag}n");
        let ns = Self {
            inner: inner.clone(),
            name: format!("stead-p{tag}"),
            host_end: format!("stp{tag}h"),
            host_ip: format!("10.231.{subnet}.1"),
            subnet: format!("10.231.{subnet}.0/30"),
        };
        let inner_ip = format!("10.231.{subnet}.2/30");
        ip(&["netns", "add", &ns.name]);
        ip(&[
            "link",
            "add",
            &ns.host_end,
            "type",
            "veth",
            "peer",
            "name",
            &inner,
        ]);
        ip(&["link", "set", &inner, "netns", &ns.name]);
        ip(&[
            "addr",
            "add",
            &format!("{}/30", ns.host_ip),
            "dev",
            &ns.host_end,
        ]);
        ip(&["link", "set", &ns.host_end, "up"]);
        ip(&[
            "netns", "exec", &ns.name, "ip", "addr", "add", &inner_ip, "dev", &inner,
        ]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", &inner, "up"]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"]);
        ns
    }

    /// The partition: the namespace's packets to the database go nowhere.
    pub fn cut(&self) {
        ip(&["link", "set", &self.host_end, "down"]);
    }

    pub fn heal(&self) {
        ip(&["link", "set", &self.host_end, "up"]);
    }

    /// The namespace's only link to anywhere, down: the namespace has no route out.
    pub fn link_down(&self) {
        self.set_link("down");
    }

    /// The namespace's link, up again.
    pub fn link_up(&self) {
        self.set_link("up");
    }

    fn set_link(&self, state: &str) {
        let inner = ["netns", "exec", &self.name, "ip", "link", "set"];
        ip(&[&inner[..], &[self.inner.as_str(), state]].concat());
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        for args in [
            vec!["netns", "del", self.name.as_str()],
            vec!["link", "del", self.host_end.as_str()],
        ] {
            let _ = Command::new("ip")
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}
