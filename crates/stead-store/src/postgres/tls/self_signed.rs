//! A self-signed server certificate that `sslrootcert` lists, trusted as libpq trusts it.
//!
//! The PostgreSQL manual's recipe for a server's certificate (`openssl req -new -x509
//! -nodes -subj "/CN=db.example.com" ...`, then `sslrootcert=server.crt` on the client)
//! makes a CA's certificate: `openssl req -x509` sets `basicConstraints CA:TRUE` unless
//! told otherwise. libpq accepts it, because OpenSSL takes a self-signed certificate found
//! among the trusted ones as the whole chain, whatever its basic constraints. webpki
//! refuses any CA's certificate shown as the server's own (`CaUsedAsEndEntity`), so
//! without this a server that `psql` reaches would be refused to stead.
//!
//! [`ListedSelfSigned`] wraps the usual verifier and steps in on that refusal only, for a
//! certificate that is byte for byte one of the `sslrootcert` file's and self-issued (a
//! certificate another CA issued is trusted by OpenSSL through that CA, not on its own).
//! It then checks what OpenSSL still checks of such a certificate, its validity dates and
//! that it may serve TLS (`serverAuth` among its extended key usages and a signing or key
//! exchange key usage, for each extension it has), and, under `verify-full`, libpq's host
//! name rule: the subjectAltNames of the host's kind (DNS name or IP address) if the
//! certificate has any, its Common Name if not. Everything else is refused as the usual
//! verifier refused it, and the handshake's signatures are verified by it, with the
//! certificate's key.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::verify_server_name;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use x509_cert::der::Decode;
use x509_cert::der::oid::db::{rfc4519::CN, rfc5280::ID_KP_SERVER_AUTH};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{ExtendedKeyUsage, KeyUsage, SubjectAltName};
use x509_cert::time::Time;
use x509_cert::{Certificate, TbsCertificate};

/// The usual verifier, and besides it the `sslrootcert` file's self-signed certificates
/// as whole chains.
#[derive(Debug)]
pub(super) struct ListedSelfSigned {
    usual: Arc<dyn ServerCertVerifier>,
    listed: Vec<CertificateDer<'static>>,
    /// `verify-full`: the certificate must name the host.
    check_name: bool,
}

impl ListedSelfSigned {
    pub(super) fn new(
        usual: Arc<dyn ServerCertVerifier>,
        listed: Vec<CertificateDer<'static>>,
        check_name: bool,
    ) -> Self {
        Self {
            usual,
            listed,
            check_name,
        }
    }

    fn lists(&self, cert: &CertificateDer<'_>) -> bool {
        self.listed.iter().any(|l| l.as_ref() == cert.as_ref())
    }
}

impl ServerCertVerifier for ListedSelfSigned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.usual.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(refusal))
                if is_ca_used_as_end_entity(&refusal) && self.lists(end_entity) =>
            {
                let name = self.check_name.then_some(server_name);
                trust_listed(end_entity, name, now)?;
                Ok(ServerCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.usual.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.usual.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.usual.supported_verify_schemes()
    }
}

/// Whether webpki refused a CA's certificate shown as a server's own (rustls passes the
/// reason on as webpki's error, having no variant of its own for it).
pub(super) fn is_ca_used_as_end_entity(refusal: &CertificateError) -> bool {
    matches!(
        refusal,
        CertificateError::Other(other)
            if matches!(
                other.0.downcast_ref::<webpki::Error>(),
                Some(webpki::Error::CaUsedAsEndEntity)
            )
    )
}

/// What OpenSSL checks of a trusted self-signed certificate shown as the whole chain,
/// and, given `name`, libpq's host name check.
fn trust_listed(
    der: &CertificateDer<'_>,
    name: Option<&ServerName<'_>>,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let cert = Certificate::from_der(der).map_err(|_| CertificateError::BadEncoding)?;
    let tbs = &cert.tbs_certificate;
    // A certificate another CA issued is no chain on its own: OpenSSL wants that CA too.
    if tbs.subject != tbs.issuer {
        return Err(CertificateError::UnknownIssuer.into());
    }
    within_dates(tbs, now)?;
    fit_for_a_server(tbs)?;
    match name {
        Some(name) => names(der, tbs, name),
        None => Ok(()),
    }
}

/// webpki looks at the dates before it refuses a CA's certificate; this does not count on
/// that order.
fn within_dates(tbs: &TbsCertificate, now: UnixTime) -> Result<(), CertificateError> {
    let at = |time: Time| UnixTime::since_unix_epoch(time.to_unix_duration());
    let (not_before, not_after) = (at(tbs.validity.not_before), at(tbs.validity.not_after));
    if now < not_before {
        Err(CertificateError::NotValidYetContext {
            time: now,
            not_before,
        })
    } else if now > not_after {
        Err(CertificateError::ExpiredContext {
            time: now,
            not_after,
        })
    } else {
        Ok(())
    }
}

/// OpenSSL's `sslserver` purpose: an extended key usage that allows `serverAuth`, and a
/// key usage that allows signing or key exchange, when the certificate restricts them.
fn fit_for_a_server(tbs: &TbsCertificate) -> Result<(), CertificateError> {
    let undecodable = |_| CertificateError::BadEncoding;
    if let Some((_, ExtendedKeyUsage(purposes))) =
        tbs.get::<ExtendedKeyUsage>().map_err(undecodable)?
        && !purposes.contains(&ID_KP_SERVER_AUTH)
    {
        return Err(CertificateError::InvalidPurpose);
    }
    if let Some((_, usage)) = tbs.get::<KeyUsage>().map_err(undecodable)?
        && !(usage.digital_signature() || usage.key_encipherment() || usage.key_agreement())
    {
        return Err(CertificateError::InvalidPurpose);
    }
    Ok(())
}

/// libpq's rule: the subjectAltNames of the host's kind decide when there are any (then
/// webpki matches them); otherwise the first Common Name, matched as libpq matches it.
fn names(
    der: &CertificateDer<'_>,
    tbs: &TbsCertificate,
    host: &ServerName<'_>,
) -> Result<(), rustls::Error> {
    let alt_names = tbs
        .get::<SubjectAltName>()
        .map_err(|_| CertificateError::BadEncoding)?
        .map(|(_, SubjectAltName(names))| names)
        .unwrap_or_default();
    let by_address = matches!(host, ServerName::IpAddress(_));
    let of_the_hosts_kind = alt_names.iter().any(|name| match name {
        GeneralName::DnsName(_) => !by_address,
        GeneralName::IpAddress(_) => by_address,
        _ => false,
    });
    if of_the_hosts_kind {
        return verify_server_name(&ParsedCertificate::try_from(der)?, host);
    }
    let common_name = tbs
        .subject
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|attribute| attribute.oid == CN)
        .map(|attribute| attribute.value.value());
    match common_name {
        Some(cn) if cn_matches(cn, &host.to_str()) => Ok(()),
        _ => Err(CertificateError::NotValidForNameContext {
            expected: host.to_owned(),
            presented: common_name
                .map(|cn| format!("CommonName({:?})", String::from_utf8_lossy(cn)))
                .into_iter()
                .collect(),
        }
        .into()),
    }
}

/// libpq's match of a Common Name: the host itself, ignoring ASCII case, or a wildcard
/// `*.rest` standing for one more label (`db.rest`, not `a.db.rest`).
fn cn_matches(cn: &[u8], host: &str) -> bool {
    let host = host.as_bytes();
    if cn.eq_ignore_ascii_case(host) {
        return true;
    }
    match cn.strip_prefix(b"*") {
        Some(rest) if rest.len() > 1 && rest[0] == b'.' && host.len() > rest.len() => {
            let (label, tail) = host.split_at(host.len() - rest.len());
            tail.eq_ignore_ascii_case(rest) && !label.contains(&b'.')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rustls::pki_types::pem::PemObject;

    use super::super::{Options, verifier};
    use super::*;

    fn testdata(file: &str) -> String {
        format!(
            "{}/src/postgres/tls/testdata/{file}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn cert(file: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_file(testdata(file)).unwrap()
    }

    /// A time within the test certificates' dates (2026 to 2126).
    fn in_their_time() -> UnixTime {
        UnixTime::since_unix_epoch(Duration::from_secs(1_900_000_000)) // 2030
    }

    /// Verifies the server certificate `shown` as stead does under `sslmode`, with
    /// `listed` as `sslrootcert`, connecting to `host`.
    fn verify(
        shown: &str,
        sslmode: &str,
        listed: &str,
        host: &str,
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let (_, options) = Options::extract(&format!(
            "host={host} sslmode={sslmode} sslrootcert={}",
            testdata(listed)
        ))
        .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let host = ServerName::try_from(host.to_string()).unwrap();
        verifier(&options, &provider)
            .unwrap()
            .verify_server_cert(&cert(shown), &[], &host, &[], now)
            .map(|_| ())
    }

    fn accepted(shown: &str, sslmode: &str, listed: &str, host: &str) {
        if let Err(e) = verify(shown, sslmode, listed, host, in_their_time()) {
            panic!("{shown} under {sslmode} with {listed} for {host}: {e}");
        }
    }

    fn refusal(shown: &str, sslmode: &str, listed: &str, host: &str) -> CertificateError {
        match verify(shown, sslmode, listed, host, in_their_time()) {
            Err(rustls::Error::InvalidCertificate(e)) => e,
            other => panic!("{shown} under {sslmode} with {listed} for {host}: {other:?}"),
        }
    }

    fn is_name_mismatch(e: &CertificateError) -> bool {
        matches!(e, CertificateError::NotValidForNameContext { .. })
    }

    #[test]
    fn the_manuals_certificate_listed_in_sslrootcert_is_its_own_chain() {
        let listed = "self-signed.crt";
        // Without this verifier, webpki's refusal stands.
        assert!(is_ca_used_as_end_entity(&refusal(
            listed,
            "verify-full",
            "other.crt",
            "localhost"
        )));
        accepted(listed, "verify-full", listed, "localhost");
        accepted(listed, "verify-full", listed, "LocalHost");
        // verify-ca, and require with a root file (verifying as verify-ca), ignore names.
        accepted(listed, "verify-ca", listed, "127.0.0.2");
        accepted(listed, "require", listed, "db.invalid");
    }

    #[test]
    fn under_verify_full_it_must_still_name_the_host() {
        let listed = "self-signed.crt";
        for host in ["127.0.0.1", "db.invalid", "localhost.example"] {
            let e = refusal(listed, "verify-full", listed, host);
            assert!(is_name_mismatch(&e), "{host}: {e:?}");
            assert!(e.to_string().contains(host), "{e}");
        }
    }

    #[test]
    fn names_are_matched_by_libpqs_rule() {
        // subjectAltNames of the host's kind decide; the Common Name (localhost) does not.
        accepted("sans.crt", "verify-full", "sans.crt", "db.example");
        accepted("sans.crt", "verify-full", "sans.crt", "127.0.0.1");
        for host in ["localhost", "127.0.0.2"] {
            let e = refusal("sans.crt", "verify-full", "sans.crt", host);
            assert!(is_name_mismatch(&e), "{host}: {e:?}");
        }
        // No subjectAltName of the host's kind: the Common Name speaks, for an address too.
        accepted(
            "address-in-cn.crt",
            "verify-full",
            "address-in-cn.crt",
            "127.0.0.1",
        );
        accepted(
            "address-in-cn.crt",
            "verify-full",
            "address-in-cn.crt",
            "db.example",
        );
        let e = refusal(
            "address-in-cn.crt",
            "verify-full",
            "address-in-cn.crt",
            "127.0.0.2",
        );
        assert!(is_name_mismatch(&e), "{e:?}");
        // A wildcard stands for one label.
        accepted(
            "wildcard.crt",
            "verify-full",
            "wildcard.crt",
            "db.example.test",
        );
        accepted(
            "wildcard.crt",
            "verify-full",
            "wildcard.crt",
            "DB.Example.TEST",
        );
        for host in ["a.db.example.test", "example.test", "dbexample.test"] {
            let e = refusal("wildcard.crt", "verify-full", "wildcard.crt", host);
            assert!(is_name_mismatch(&e), "{host}: {e:?}");
        }
    }

    #[test]
    fn only_a_listed_self_signed_certificate_is_its_own_chain() {
        for sslmode in ["verify-full", "verify-ca"] {
            // Another self-signed certificate, with the same name.
            let e = refusal("self-signed.crt", sslmode, "other.crt", "localhost");
            assert!(is_ca_used_as_end_entity(&e), "{sslmode}: {e:?}");
            // A CA's certificate another CA issued is trusted through that CA only.
            let e = refusal("issued-ca.crt", sslmode, "issued-ca.crt", "localhost");
            assert_eq!(e, CertificateError::UnknownIssuer, "{sslmode}");
        }
    }

    #[test]
    fn a_listed_certificate_must_be_fit_for_a_tls_server() {
        for unfit in ["client-only.crt", "ca-key-usage.crt"] {
            for sslmode in ["verify-full", "verify-ca"] {
                let e = refusal(unfit, sslmode, unfit, "localhost");
                assert_eq!(e, CertificateError::InvalidPurpose, "{unfit} {sslmode}");
            }
        }
    }

    #[test]
    fn a_listed_certificate_is_trusted_within_its_dates_only() {
        let listed = cert("self-signed.crt");
        let at = |secs| UnixTime::since_unix_epoch(Duration::from_secs(secs));
        let (before, after) = (at(946_684_800), at(7_258_118_400)); // 2000, 2200
        trust_listed(&listed, None, in_their_time()).unwrap();
        let not_yet = trust_listed(&listed, None, before).unwrap_err();
        assert!(
            matches!(
                not_yet,
                rustls::Error::InvalidCertificate(CertificateError::NotValidYetContext { .. })
            ),
            "{not_yet:?}"
        );
        let expired = trust_listed(&listed, None, after).unwrap_err();
        assert!(
            matches!(
                expired,
                rustls::Error::InvalidCertificate(CertificateError::ExpiredContext { .. })
            ),
            "{expired:?}"
        );
        // So is it through the whole verifier.
        for now in [before, after] {
            let refused = verify(
                "self-signed.crt",
                "verify-full",
                "self-signed.crt",
                "localhost",
                now,
            );
            assert!(refused.is_err(), "{now:?}");
        }
    }
}
