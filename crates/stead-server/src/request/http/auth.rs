//! Who may talk to the HTTP API: the bearer token, and the Host and Origin rules.
//!
//! The token is the lock; the header rules are the second bolt for the one attacker a
//! loopback port cannot keep out, a web page open in the user's own browser. Such a page
//! can aim requests at 127.0.0.1 (cross-site requests) or at a name of its own that it
//! re-points at 127.0.0.1 (DNS rebinding). The first carries the page's `Origin` (and
//! `Sec-Fetch-Site: cross-site`); the second carries the attacker's name in `Host`. Either
//! is refused before the token is even looked at.

use std::net::SocketAddr;

use sha2::{Digest, Sha256};

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 403: the Host header names someone else (or is missing).
    Host(String),
    /// 403: the request comes from a page of another origin.
    Origin(String),
    /// 401: no `Authorization: Bearer` header, or a wrong token.
    Token(&'static str),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Host(host) => write!(
                f,
                "refused: Host {host:?} is not this server's address (a DNS-rebinding page would look like this); use the URL `stead dashboard` prints"
            ),
            Refusal::Origin(origin) => write!(
                f,
                "refused: a request from {origin:?}, a page of another origin, may not drive stead"
            ),
            Refusal::Token(why) => write!(
                f,
                "{why}: send `Authorization: Bearer TOKEN` with the token from the state directory's http-token file (or `stead dashboard --json`)"
            ),
        }
    }
}

/// The rules for one listening address.
#[derive(Debug, Clone)]
pub struct Guard {
    hosts: Vec<String>,
    allow_remote: bool,
    token_digest: [u8; 32],
}

impl Guard {
    pub fn new(addr: SocketAddr, allow_remote: bool, token: &str) -> Self {
        let port = addr.port();
        let mut hosts = vec![format!("localhost:{port}")];
        hosts.push(match addr.ip() {
            std::net::IpAddr::V4(ip) => format!("{ip}:{port}"),
            std::net::IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        });
        if addr.ip().is_unspecified() {
            hosts.push(format!("127.0.0.1:{port}"));
            hosts.push(format!("[::1]:{port}"));
        }
        Self {
            hosts,
            allow_remote,
            token_digest: digest(token),
        }
    }

    /// The Host and Origin rules. `fetch_site` is the `Sec-Fetch-Site` header.
    pub fn check_site(
        &self,
        host: Option<&str>,
        origin: Option<&str>,
        fetch_site: Option<&str>,
    ) -> Result<(), Refusal> {
        let host = host.unwrap_or_default();
        let known = self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host));
        // With remote access allowed any name may reach it, but a request without one is
        // still refused.
        let remote_ok = self.allow_remote && !host.is_empty();
        if !known && !remote_ok {
            return Err(Refusal::Host(host.to_string()));
        }
        if let Some(origin) = origin {
            // Same origin means the page this server served, at the address it was asked on.
            let expected = format!("http://{host}");
            if !origin.eq_ignore_ascii_case(&expected) {
                return Err(Refusal::Origin(origin.to_string()));
            }
        }
        if fetch_site.is_some_and(|site| site.eq_ignore_ascii_case("cross-site")) {
            return Err(Refusal::Origin(
                origin.unwrap_or("another site").to_string(),
            ));
        }
        Ok(())
    }

    /// The bearer token rule, given the `Authorization` header.
    pub fn check_token(&self, authorization: Option<&str>) -> Result<(), Refusal> {
        let Some(value) = authorization else {
            return Err(Refusal::Token("missing token"));
        };
        // The scheme's name is case-insensitive (RFC 9110, 11.1).
        let token = value
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token)
            .ok_or(Refusal::Token(
                "the Authorization header is not a Bearer token",
            ))?;
        // Comparing digests takes the same time wherever the guess first differs.
        if digest(token.trim()) == self.token_digest {
            Ok(())
        } else {
            Err(Refusal::Token("wrong token"))
        }
    }
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

#[cfg(test)]
mod tests {

    use super::*;

    const TOKEN: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn guard(addr: &str, remote: bool) -> Guard {
        Guard::new(addr.parse().unwrap(), remote, TOKEN)
    }

    #[test]
    fn only_this_servers_host_names_pass() {
        let g = guard("127.0.0.1:8765", false);
        for host in ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765"] {
            assert_eq!(g.check_site(Some(host), None, None), Ok(()), "{host}");
        }
        for host in [
            "evil.example:8765",
            "127.0.0.1:8766",
            "127.0.0.1",
            "localhost",
            "",
        ] {
            assert!(
                matches!(g.check_site(Some(host), None, None), Err(Refusal::Host(_))),
                "{host}"
            );
        }
        assert!(matches!(
            g.check_site(None, None, None),
            Err(Refusal::Host(_))
        ));
        let v6 = guard("[::1]:9000", false);
        assert_eq!(v6.check_site(Some("[::1]:9000"), None, None), Ok(()));
        assert!(v6.check_site(Some("127.0.0.1:9000"), None, None).is_err());
    }

    #[test]
    fn other_origins_and_cross_site_fetches_are_refused() {
        let g = guard("127.0.0.1:8765", false);
        let host = Some("127.0.0.1:8765");
        assert_eq!(
            g.check_site(host, Some("http://127.0.0.1:8765"), Some("same-origin")),
            Ok(())
        );
        for origin in [
            "http://evil.example",
            "http://127.0.0.1:9999",
            "http://localhost:8765",
            "https://127.0.0.1:8765",
            "null",
        ] {
            assert!(
                matches!(
                    g.check_site(host, Some(origin), None),
                    Err(Refusal::Origin(_))
                ),
                "{origin}"
            );
        }
        assert!(matches!(
            g.check_site(host, None, Some("cross-site")),
            Err(Refusal::Origin(_))
        ));
        // `same-site` is another port on this machine: its Origin is what tells.
        assert_eq!(g.check_site(host, None, Some("none")), Ok(()));
    }

    #[test]
    fn remote_mode_accepts_any_host_but_still_checks_origin() {
        let g = guard("0.0.0.0:8765", true);
        assert_eq!(g.check_site(Some("box.lan:8765"), None, None), Ok(()));
        assert_eq!(
            g.check_site(Some("box.lan:8765"), Some("http://box.lan:8765"), None),
            Ok(())
        );
        assert!(
            g.check_site(Some("box.lan:8765"), Some("http://evil.example"), None)
                .is_err()
        );
        assert!(g.check_site(None, None, None).is_err());
    }

    #[test]
    fn the_token_must_match_exactly() {
        let g = guard("127.0.0.1:1", false);
        // The scheme's name in any case; the token itself exactly.
        for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
            assert_eq!(g.check_token(Some(&format!("{scheme} {TOKEN}"))), Ok(()));
        }
        for header in [
            Some(format!("Bearer {}", TOKEN.to_uppercase())),
            None,
            Some(TOKEN.to_string()),
            Some(format!("Basic {TOKEN}")),
            Some(format!("Bearer {}", &TOKEN[1..])),
            Some("Bearer ".to_string()),
        ] {
            assert!(
                matches!(g.check_token(header.as_deref()), Err(Refusal::Token(_))),
                "{header:?}"
            );
        }
    }
}
