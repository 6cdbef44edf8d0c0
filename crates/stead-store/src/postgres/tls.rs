//! TLS to PostgreSQL, with libpq's `sslmode` and `sslrootcert` and their meaning.
//!
//! tokio-postgres's own `Config` parser knows only `sslmode=disable|prefer|require` and
//! refuses keys it does not know, so both options are taken out of the store URL here
//! (URL and `key=value` forms) before the rest goes to `postgres::Config`:
//!
//! | `sslmode`     | encrypted                          | certificate checked                    |
//! |---------------|------------------------------------|----------------------------------------|
//! | `disable`     | never                              | no                                     |
//! | `prefer`      | if the server offers TLS (default) | no                                     |
//! | `require`     | always                             | no; with `sslrootcert`, as `verify-ca` |
//! | `verify-ca`   | always                             | chain, against `sslrootcert`           |
//! | `verify-full` | always                             | chain and host name (DNS or IP SAN)    |
//!
//! `sslrootcert=PATH` is a PEM file of trusted certificates; `sslrootcert=system`, or no
//! `sslrootcert` at all, means the platform's trust store. As in libpq, `system` makes
//! `verify-full` the default mode and refuses a weaker one. (libpq's default file,
//! `~/.postgresql/root.crt`, is not read: the platform store takes its place.)
//!
//! The TLS stack is rustls on its `ring` provider (the default, aws-lc-rs, needs cmake
//! and a C toolchain at build time), connected to tokio-postgres by
//! `tokio-postgres-rustls`, which resolves beside `postgres` 0.19. The platform's roots
//! come from `rustls-native-certs` rather than a compiled-in copy of Mozilla's
//! (`webpki-roots`): a database reached through a company's own CA works once that CA is
//! installed on the host, as libpq's `sslrootcert=system` would, and the roots follow the
//! system's security updates instead of stead's release dates.
//!
//! A self-signed server certificate that the `sslrootcert` file lists is its own chain, as
//! in libpq ([`self_signed`]).
//!
//! A certificate that does not verify is an error naming what failed; no mode other than
//! `prefer` ever falls back to a plain connection.

mod self_signed;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::postgres::config::SslMode;
use ::postgres::{Client, Config};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use stead_protocol::redact_url;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::StoreError;

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Result<Self, String> {
        Ok(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            // libpq's `allow` tries plain first; nothing stead needs it for.
            other => {
                return Err(format!(
                    "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }
}

/// Where trusted certificates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The platform's trust store (`sslrootcert=system`, or none given).
    Platform,
    /// A PEM file (`sslrootcert=PATH`).
    File(PathBuf),
}

/// The TLS options of a store URL, as libpq reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    /// The mode as written (`prefer` when absent).
    pub asked: Mode,
    /// The mode in force: `require` with an `sslrootcert` file verifies as `verify-ca`.
    pub mode: Mode,
    /// `None` when no `sslrootcert` was given.
    pub rootcert: Option<Roots>,
}

impl Options {
    /// Takes `sslmode` and `sslrootcert` out of `url`: the options, and the URL without
    /// them, for `postgres::Config`. A URL that does not parse is returned as it is, for
    /// the PostgreSQL client to name what is wrong with it.
    pub fn extract(url: &str) -> Result<(String, Self), String> {
        let (rest, found) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            take_from_url(url)
        } else {
            take_from_pairs(url)
        };
        let mut sslmode = None;
        let mut sslrootcert = None;
        // The last of repeated keys wins, as in libpq.
        for (key, value) in found {
            match key {
                Key::SslMode => sslmode = Some(value),
                Key::SslRootCert => sslrootcert = Some(value),
            }
        }
        let asked = sslmode.as_deref().map(Mode::parse).transpose()?;
        let rootcert = match sslrootcert.as_deref() {
            None | Some("") => None,
            Some("system") => Some(Roots::Platform),
            Some(path) => Some(Roots::File(PathBuf::from(path))),
        };
        let mode = match (asked, &rootcert) {
            // libpq: with the system's roots, verify-full is the default, and a weaker
            // mode an error (those roots vouch for names, not for a private chain).
            (None, Some(Roots::Platform)) => Mode::VerifyFull,
            (Some(mode), Some(Roots::Platform)) if mode != Mode::VerifyFull => {
                return Err(format!(
                    "sslrootcert=system needs sslmode=verify-full (it is sslmode={})",
                    mode.name()
                ));
            }
            // libpq: "if a root CA file exists, sslmode=require behaves as verify-ca".
            (Some(Mode::Require), Some(Roots::File(_))) => Mode::VerifyCa,
            (asked, _) => asked.unwrap_or(Mode::Prefer),
        };
        Ok((
            rest,
            Self {
                asked: asked.unwrap_or(mode),
                mode,
                rootcert,
            },
        ))
    }

    /// What the messages call this configuration: `sslmode=verify-full, sslrootcert=…`.
    fn context(&self) -> String {
        let mut out = format!("sslmode={}", self.asked.name());
        if self.mode != self.asked {
            out.push_str(&format!(" (verifying as {})", self.mode.name()));
        }
        match &self.rootcert {
            Some(Roots::File(path)) => out.push_str(&format!(", sslrootcert={}", path.display())),
            Some(Roots::Platform) => out.push_str(", sslrootcert=system"),
            None if self.verifies() => out.push_str(", the platform's trusted roots"),
            None => {}
        }
        out
    }

    fn verifies(&self) -> bool {
        matches!(self.mode, Mode::VerifyCa | Mode::VerifyFull)
    }
}

#[derive(Clone, Copy)]
enum Key {
    SslMode,
    SslRootCert,
}

fn key(name: &str) -> Option<Key> {
    match name {
        "sslmode" => Some(Key::SslMode),
        "sslrootcert" => Some(Key::SslRootCert),
        _ => None,
    }
}

/// `postgres://…?a=b&sslmode=x`: the query's TLS parameters, percent-decoded.
fn take_from_url(url: &str) -> (String, Vec<(Key, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let mut found = Vec::new();
    let mut kept = Vec::new();
    for param in query.split('&') {
        let (name, value) = param.split_once('=').unwrap_or((param, ""));
        match key(&percent_decode(name)) {
            Some(k) => found.push((k, percent_decode(value))),
            None => kept.push(param),
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, found)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host=h sslmode='x'`: the TLS pairs, unquoted, read as libpq reads the form (spaces
/// around `=`, single-quoted values, backslash escapes).
fn take_from_pairs(conninfo: &str) -> (String, Vec<(Key, String)>) {
    let bytes = conninfo.as_bytes();
    let mut found = Vec::new();
    let mut rest = String::new();
    let mut copied = 0;
    let mut i = 0;
    let skip_ws = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    loop {
        i = skip_ws(i);
        if i >= bytes.len() {
            break;
        }
        let start = i;
        while i < bytes.len() && bytes[i] != b'=' && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let name = &conninfo[start..i];
        i = skip_ws(i);
        if bytes.get(i) != Some(&b'=') {
            // Malformed: leave it to the PostgreSQL client to say so.
            return (conninfo.to_string(), Vec::new());
        }
        i = skip_ws(i + 1);
        let mut value = Vec::new();
        if bytes.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return (conninfo.to_string(), Vec::new()),
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < bytes.len() => {
                        value.push(bytes[i + 1]);
                        i += 2;
                    }
                    Some(&b) => {
                        value.push(b);
                        i += 1;
                    }
                }
            }
        } else {
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    i += 1;
                }
                value.push(bytes[i]);
                i += 1;
            }
        }
        if let Some(k) = key(name) {
            found.push((k, String::from_utf8_lossy(&value).into_owned()));
            rest.push_str(&conninfo[copied..start]);
            copied = i;
        }
    }
    rest.push_str(&conninfo[copied..]);
    (rest.trim().to_string(), found)
}

/// How a store connects: its TLS options and the connector built from them (trusted
/// roots read once, when the store is opened).
#[derive(Clone)]
pub(crate) struct Tls {
    options: Options,
    connector: MakeRustlsConnect,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.options.context())
    }
}

impl Tls {
    /// The TLS options of `url` and the URL without them; an unusable option or an
    /// unreadable `sslrootcert` is a [`StoreError::LedgerUrl`].
    pub fn from_url(url: &str) -> Result<(String, Self), StoreError> {
        let bad = |detail: String| StoreError::LedgerUrl {
            url: redact_url(url),
            detail,
        };
        let (rest, options) = Options::extract(url).map_err(bad)?;
        let connector = connector(&options).map_err(bad)?;
        Ok((rest, Self { options, connector }))
    }

    /// Sets the TLS mode tokio-postgres negotiates: whether it asks for TLS and whether
    /// it may go on without it. What is checked is the connector's business.
    pub fn configure(&self, config: &mut Config) {
        config.ssl_mode(match self.options.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        });
    }

    pub fn connect(&self, config: &Config) -> Result<Client, ::postgres::Error> {
        config.connect(self.connector.clone())
    }

    /// The failure to connect with this configuration, naming a TLS failure as one.
    pub fn unavailable(&self, ledger: &str, e: &::postgres::Error) -> StoreError {
        StoreError::Unavailable {
            ledger: ledger.to_string(),
            detail: self.describe(e),
        }
    }

    pub fn describe(&self, e: &::postgres::Error) -> String {
        match tls_failure(e) {
            Some(what) => format!("{what} ({})", self.options.context()),
            None => super::describe(e),
        }
    }
}

/// A client connected to `url` (either form, TLS options included) without the store's
/// schema or lease: for tools and tests that read or prepare a database.
pub fn connect_url(url: &str) -> Result<Client, StoreError> {
    let (rest, tls) = Tls::from_url(url)?;
    let mut config: Config = rest.parse().map_err(|e| StoreError::LedgerUrl {
        url: redact_url(url),
        detail: super::describe(&e),
    })?;
    tls.configure(&mut config);
    let ledger = super::location(&config);
    tls.connect(&config)
        .map_err(|e| tls.unavailable(&ledger, &e))
}

/// What went wrong in the TLS layer, if that is where `e` failed.
fn tls_failure(e: &::postgres::Error) -> Option<String> {
    let mut cause = std::error::Error::source(e);
    while let Some(err) = cause {
        // tokio-rustls wraps rustls's error in an io::Error, whose `source` skips it.
        let inner = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        if let Some(tls) = inner
            .and_then(|i| i.downcast_ref::<rustls::Error>())
            .or_else(|| err.downcast_ref::<rustls::Error>())
        {
            return Some(explain(tls));
        }
        if err.to_string() == "server does not support TLS" {
            return Some("the server does not offer TLS, and this sslmode demands it".into());
        }
        cause = inner.or_else(|| err.source());
    }
    None
}

fn explain(e: &rustls::Error) -> String {
    let cert = match e {
        rustls::Error::InvalidCertificate(cert) => cert,
        other => return format!("TLS handshake failed: {other}"),
    };
    let what = match cert {
        CertificateError::UnknownIssuer => {
            "the server's certificate is not signed by a trusted certificate authority \
             (unknown CA)"
                .to_string()
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("the server's certificate does not name this host (name mismatch: {cert})")
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the server's certificate has expired ({cert})")
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            format!("the server's certificate is not valid yet ({cert})")
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            format!("the server's certificate is not one for a TLS server ({cert})")
        }
        ca if self_signed::is_ca_used_as_end_entity(ca) => {
            "the server's certificate is a CA certificate that is not itself trusted (a \
             self-signed certificate must be listed in sslrootcert)"
                .to_string()
        }
        other => format!("the server's certificate was refused ({other})"),
    };
    format!("certificate verification failed: {what}")
}

/// The rustls connector for `options`: its trusted roots read now, so that an unreadable
/// file is refused when the store opens rather than on the first connection.
fn connector(options: &Options) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = verifier(options, &provider)?;
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn verifier(
    options: &Options,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let algorithms = provider.signature_verification_algorithms;
    if !options.verifies() {
        return Ok(Arc::new(NameBlind {
            roots: None,
            algorithms,
        }));
    }
    let (roots, listed) = match &options.rootcert {
        Some(Roots::File(path)) => {
            let (roots, listed) = rootcert_file(path)?;
            (roots, Some(listed))
        }
        Some(Roots::Platform) | None => (platform_roots()?, None),
    };
    let roots = Arc::new(roots);
    let check_name = options.mode == Mode::VerifyFull;
    let usual: Arc<dyn ServerCertVerifier> = if check_name {
        WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| format!("cannot use the trusted certificates: {e}"))?
    } else {
        Arc::new(NameBlind {
            roots: Some(roots),
            algorithms,
        })
    };
    // The platform's store is left as webpki reads it: it holds CAs, not servers'
    // own certificates.
    Ok(match listed {
        Some(certs) => Arc::new(self_signed::ListedSelfSigned::new(usual, certs, check_name)),
        None => usual,
    })
}

/// The certificates of an `sslrootcert` file (at least one), as trusted roots and as
/// they are.
fn rootcert_file(path: &Path) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), String> {
    let pem = std::fs::read(path)
        .map_err(|e| format!("cannot read sslrootcert {}: {e}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("sslrootcert {} is not PEM: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "sslrootcert {} holds no certificate",
            path.display()
        ));
    }
    let mut store = RootCertStore::empty();
    for cert in &certs {
        store.add(cert.clone()).map_err(|e| {
            format!(
                "sslrootcert {} holds an unusable certificate: {e}",
                path.display()
            )
        })?;
    }
    Ok((store, certs))
}

fn platform_roots() -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = store.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(format!(
            "found no trusted certificates in the platform's store{why}: name a file \
             with sslrootcert=PATH"
        ));
    }
    Ok(store)
}

/// `prefer` and `require` (no `roots`): encrypted, the certificate not checked (libpq's
/// meaning); `verify-ca` (`roots`): the chain up to a trusted root, validity dates
/// included, but not the name. Either way the handshake's signatures are verified, so the
/// session is with the certificate's key holder. (`verify-full` is rustls's own
/// verifier.)
#[derive(Debug)]
struct NameBlind {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NameBlind {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(url: &str) -> (String, Options) {
        Options::extract(url).unwrap()
    }

    fn file(path: &str) -> Option<Roots> {
        Some(Roots::File(PathBuf::from(path)))
    }

    #[test]
    fn url_form_options_are_taken_out_and_decoded() {
        let (rest, o) = extract(
            "postgres://u:pw@db:5433/ledger?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20file.pem&connect_timeout=3",
        );
        assert_eq!(
            rest,
            "postgres://u:pw@db:5433/ledger?application_name=x&connect_timeout=3"
        );
        assert_eq!(o.mode, Mode::VerifyFull);
        assert_eq!(o.rootcert, file("/etc/ca file.pem"));

        let (rest, o) = extract("postgresql://db/ledger?sslmode=disable");
        assert_eq!(rest, "postgresql://db/ledger");
        assert_eq!(o.mode, Mode::Disable);
        assert_eq!(o.rootcert, None);
        // What the client parses is left for it: the rest must still parse.
        rest.parse::<Config>().unwrap();
    }

    #[test]
    fn key_value_form_options_are_taken_out_and_unquoted() {
        let (rest, o) = extract(
            "host=db port=5433 sslmode = 'verify-ca' sslrootcert='/etc/my ca\\'s.pem' dbname=ledger",
        );
        assert_eq!(o.mode, Mode::VerifyCa);
        assert_eq!(o.rootcert, file("/etc/my ca's.pem"));
        let config: Config = rest.parse().unwrap();
        assert_eq!(config.get_dbname(), Some("ledger"));
        assert_eq!(config.get_ports(), &[5433]);

        let (rest, o) = extract("host=db sslmode=require");
        assert_eq!(rest, "host=db");
        assert_eq!(o.mode, Mode::Require);
    }

    #[test]
    fn the_default_is_prefer_and_the_last_repeated_key_wins() {
        assert_eq!(extract("postgres://db/ledger").1.mode, Mode::Prefer);
        assert_eq!(extract("host=db").1.mode, Mode::Prefer);
        let (_, o) = extract("host=db sslmode=disable sslmode=verify-full");
        assert_eq!(o.mode, Mode::VerifyFull);
    }

    #[test]
    fn unknown_modes_are_refused() {
        for url in [
            "postgres://db/ledger?sslmode=verify_full",
            "host=db sslmode=allow",
            "host=db sslmode=",
        ] {
            let err = Options::extract(url).unwrap_err();
            assert!(
                err.contains("is not one of disable, prefer"),
                "{url}: {err}"
            );
        }
    }

    #[test]
    fn require_with_a_root_file_verifies_as_verify_ca() {
        let (_, o) = extract("postgres://db/l?sslmode=require&sslrootcert=/ca.pem");
        assert_eq!((o.asked, o.mode), (Mode::Require, Mode::VerifyCa));
        let (_, o) = extract("host=db sslmode=require sslrootcert=/ca.pem");
        assert_eq!(o.mode, Mode::VerifyCa);
        assert!(
            o.context().contains("verifying as verify-ca"),
            "{}",
            o.context()
        );
        // Without one, require only encrypts.
        assert_eq!(extract("host=db sslmode=require").1.mode, Mode::Require);
    }

    #[test]
    fn system_roots_mean_verify_full_and_refuse_weaker_modes() {
        let (_, o) = extract("postgres://db/l?sslrootcert=system");
        assert_eq!(
            (o.mode, o.rootcert),
            (Mode::VerifyFull, Some(Roots::Platform))
        );
        let (_, o) = extract("host=db sslmode=verify-full sslrootcert=system");
        assert_eq!(o.mode, Mode::VerifyFull);
        for mode in ["disable", "prefer", "require", "verify-ca"] {
            let err = Options::extract(&format!("host=db sslmode={mode} sslrootcert=system"))
                .unwrap_err();
            assert!(err.contains("needs sslmode=verify-full"), "{err}");
        }
    }

    #[test]
    fn malformed_key_value_strings_are_left_to_the_client() {
        let (rest, o) = extract("host=db sslmode");
        assert_eq!(rest, "host=db sslmode");
        assert_eq!(o.mode, Mode::Prefer);
        assert!(rest.parse::<Config>().is_err());
    }

    #[test]
    fn an_unreadable_or_empty_root_file_is_a_configuration_error() {
        let err = Tls::from_url(
            "postgres://u:secret@db/l?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        )
        .unwrap_err();
        assert!(matches!(err, StoreError::LedgerUrl { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("cannot read sslrootcert /nonexistent/ca.pem"),
            "{text}"
        );
        assert!(!text.contains("secret"), "{text}");

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = Tls::from_url(&format!(
            "host=db sslmode=verify-ca sslrootcert={}",
            empty.display()
        ))
        .unwrap_err();
        assert!(err.to_string().contains("holds no certificate"), "{err}");
    }

    #[test]
    fn certificate_failures_are_named() {
        let unknown = explain(&rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
        assert!(unknown.contains("unknown CA"), "{unknown}");
        let expired = explain(&rustls::Error::InvalidCertificate(
            CertificateError::Expired,
        ));
        assert!(expired.contains("has expired"), "{expired}");
        let name = explain(&rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName,
        ));
        assert!(name.contains("name mismatch"), "{name}");
        let ca = explain(&rustls::Error::InvalidCertificate(CertificateError::Other(
            rustls::OtherError(Arc::new(webpki::Error::CaUsedAsEndEntity)),
        )));
        assert!(
            ca.contains("a CA certificate that is not itself trusted"),
            "{ca}"
        );
    }
}
