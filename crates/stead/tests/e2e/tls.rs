//! TLS to PostgreSQL, end to end: the real `stead` binary against a private PostgreSQL
//! that accepts TLS connections only (`hostssl` lines alone), with a certificate for
//! `localhost` and 127.0.0.1 signed by a CA of the test's own, or with the self-signed
//! certificate the PostgreSQL manual tells how to make. What must work works; a
//! certificate that does not verify, a plain connection and a missing TLS offer are
//! refused with exit 74, a message naming the problem, no password, and no server left.

use std::path::Path;

use stead_store::postgres::connect_url;

use crate::harness::*;
use crate::private_pg::PrivatePostgres;

/// `postgres://postgres:secret@HOST:PORT/postgres?QUERY`: the password is there to be
/// left out of every message (the server trusts the test and never asks for it).
fn url(pg: &PrivatePostgres, host: &str, query: &str) -> String {
    format!(
        "postgres://postgres:secret@{host}:{}/postgres?{query}",
        pg.port
    )
}

fn on(url: &str) -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_STORE_URL", url);
    dir
}

fn root(path: &Path) -> String {
    format!("sslrootcert={}", path.display())
}

/// Starts a server on `dir` and runs a job to success through it.
fn serves_and_runs_a_job(dir: &StateDir) {
    let status = dir.status();
    // The ledger is named without its password.
    assert!(
        status["ledger"]
            .as_str()
            .unwrap()
            .starts_with("postgres://postgres:***@"),
        "{status}"
    );
    add_job(dir, "hello", &["--every", "1h"], "echo over-tls");
    let run = json(dir, &["run", "hello", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(
        text(&dir.run(&["logs", &run["id"].to_string()]).stdout),
        "over-tls\n"
    );
}

/// `stead status` fails with exit 74 and starts nothing; its message, without the
/// password, is returned.
fn refused(dir: &StateDir) -> String {
    let out = dir.run(&["status"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{stderr}");
    assert!(!stderr.contains("secret"), "the password leaked: {stderr}");
    wait_until("no server is left running", || dir.server_pids().is_empty());
    stderr
}

/// How many of the server's connections to `pg` are encrypted, asked over a connection
/// verified against `trusted`.
fn stead_tls_sessions(pg: &PrivatePostgres, trusted: &Path) -> i64 {
    let mut client = connect_url(&url(
        pg,
        "localhost",
        &format!("sslmode=verify-full&{}", root(trusted)),
    ))
    .unwrap();
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid)
             WHERE application_name = 'stead' AND ssl",
            &[],
        )
        .unwrap()
        .get(0)
}

/// Connects to `url` and checks, server-side, that the session is encrypted.
fn connects_encrypted(url: &str) {
    let mut client = connect_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let ssl: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ssl, "{url}");
}

#[test]
fn require_encrypts_and_a_job_runs() {
    let (pg, certs) = PrivatePostgres::start_tls();
    let dir = on(&url(&pg, "127.0.0.1", "sslmode=require"));
    serves_and_runs_a_job(&dir);
    assert!(stead_tls_sessions(&pg, &certs.ca) >= 1);
}

#[test]
fn verify_full_with_the_right_ca_works_by_name() {
    let (pg, certs) = PrivatePostgres::start_tls();
    let dir = on(&url(
        &pg,
        "localhost",
        &format!("sslmode=verify-full&{}", root(&certs.ca)),
    ));
    serves_and_runs_a_job(&dir);

    // The certificate's IP address counts as a name; verify-ca checks the chain only,
    // so an address the certificate does not name passes it; the key=value form reads
    // the same options.
    for good in [
        url(
            &pg,
            "127.0.0.1",
            &format!("sslmode=verify-full&{}", root(&certs.ca)),
        ),
        url(
            &pg,
            "127.0.0.2",
            &format!("sslmode=verify-ca&{}", root(&certs.ca)),
        ),
        format!(
            "host=localhost port={} user=postgres dbname=postgres sslmode='verify-full' \
             sslrootcert='{}'",
            pg.port,
            certs.ca.display()
        ),
    ] {
        connects_encrypted(&good);
    }
}

#[test]
fn another_ca_is_refused_and_nothing_starts() {
    let (pg, certs) = PrivatePostgres::start_tls();
    let dir = on(&url(
        &pg,
        "localhost",
        &format!("sslmode=verify-full&{}", root(&certs.other_ca)),
    ));
    let stderr = refused(&dir);
    assert!(
        stderr.contains("certificate verification failed"),
        "{stderr}"
    );
    assert!(stderr.contains("unknown CA"), "{stderr}");
    assert!(
        stderr.contains(&certs.other_ca.display().to_string()),
        "{stderr}"
    );

    // libpq's rule: require with a root file verifies the chain as verify-ca does.
    let dir = on(&url(
        &pg,
        "localhost",
        &format!("sslmode=require&{}", root(&certs.other_ca)),
    ));
    let stderr = refused(&dir);
    assert!(stderr.contains("unknown CA"), "{stderr}");
    assert!(stderr.contains("verifying as verify-ca"), "{stderr}");

    // No sslrootcert: the platform's roots, which do not hold the test's CA either.
    let dir = on(&url(&pg, "localhost", "sslmode=verify-full"));
    let stderr = refused(&dir);
    assert!(stderr.contains("unknown CA"), "{stderr}");
}

#[test]
fn a_plain_connection_is_refused_by_a_tls_only_server() {
    let (pg, _certs) = PrivatePostgres::start_tls();
    let dir = on(&url(&pg, "127.0.0.1", "sslmode=disable"));
    let stderr = refused(&dir);
    assert!(stderr.contains("no pg_hba.conf entry"), "{stderr}");
    assert!(stderr.contains("no encryption"), "{stderr}");
}

/// Under `verify-full` with `trusted`, an address of the server that its certificate
/// does not name, and a host name it lacks reached at an address (libpq's hostaddr), are
/// refused as a name mismatch naming the host.
fn refuses_names_the_certificate_lacks(pg: &PrivatePostgres, trusted: &Path, address: &str) {
    let verify = format!("sslmode=verify-full&{}", root(trusted));
    let by_name = format!(
        "postgres://postgres:secret@db.invalid:{}/postgres?hostaddr=127.0.0.1&{verify}",
        pg.port
    );
    for (url, host) in [
        (url(pg, address, &verify), address),
        (by_name, "db.invalid"),
    ] {
        let stderr = refused(&on(&url));
        assert!(stderr.contains("name mismatch"), "{stderr}");
        assert!(stderr.contains(host), "{stderr}");
    }
}

#[test]
fn verify_full_refuses_a_name_the_certificate_lacks() {
    let (pg, certs) = PrivatePostgres::start_tls();
    refuses_names_the_certificate_lacks(&pg, &certs.ca, "127.0.0.2");
}

#[test]
fn require_refuses_a_server_without_tls() {
    let pg = PrivatePostgres::start();
    for mode in ["require", "verify-full"] {
        let dir = on(&url(&pg, "127.0.0.1", &format!("sslmode={mode}")));
        let stderr = refused(&dir);
        assert!(stderr.contains("does not offer TLS"), "{mode}: {stderr}");
    }
    // prefer, the default, goes on without it.
    let dir = on(&url(&pg, "127.0.0.1", "sslmode=prefer"));
    assert!(dir.status()["epoch"].as_i64() >= Some(1));
}

#[test]
fn an_unreadable_root_file_is_a_configuration_error() {
    let dir = on(
        "postgres://postgres:secret@localhost:1/postgres?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    let out = dir.run(&["status"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.contains("cannot read sslrootcert /nonexistent/ca.pem"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "the password leaked: {stderr}");
    wait_until("no server is left running", || dir.server_pids().is_empty());
}

/// The PostgreSQL manual's self-signed certificate, a CA's naming `localhost` in its
/// Common Name alone, is the whole chain when sslrootcert lists it, as in libpq.
#[test]
fn a_self_signed_certificate_listed_in_sslrootcert_is_trusted() {
    let (pg, certs) = PrivatePostgres::start_self_signed();
    let dir = on(&url(
        &pg,
        "localhost",
        &format!("sslmode=verify-full&{}", root(&certs.cert)),
    ));
    serves_and_runs_a_job(&dir);
    assert!(stead_tls_sessions(&pg, &certs.cert) >= 1);

    // verify-ca, and require with the file (verifying as verify-ca), do not look at the
    // name; the file may list other certificates besides.
    let both = certs.cert.with_file_name("both.crt");
    let pem = [&certs.other, &certs.cert].map(|p| std::fs::read_to_string(p).unwrap());
    std::fs::write(&both, pem.concat()).unwrap();
    for good in [
        url(
            &pg,
            "127.0.0.1",
            &format!("sslmode=verify-ca&{}", root(&certs.cert)),
        ),
        url(
            &pg,
            "127.0.0.2",
            &format!("sslmode=require&{}", root(&certs.cert)),
        ),
        url(
            &pg,
            "localhost",
            &format!("sslmode=verify-full&{}", root(&both)),
        ),
    ] {
        connects_encrypted(&good);
    }
}

#[test]
fn a_listed_self_signed_certificate_must_still_name_the_host() {
    let (pg, certs) = PrivatePostgres::start_self_signed();
    // Its only name is localhost: an address is not one (libpq: "server certificate for
    // "localhost" does not match host name "127.0.0.1"").
    refuses_names_the_certificate_lacks(&pg, &certs.cert, "127.0.0.1");
}

#[test]
fn another_self_signed_certificate_is_refused() {
    let (pg, certs) = PrivatePostgres::start_self_signed();
    for mode in ["verify-full", "verify-ca", "require"] {
        let dir = on(&url(
            &pg,
            "localhost",
            &format!("sslmode={mode}&{}", root(&certs.other)),
        ));
        let stderr = refused(&dir);
        assert!(
            stderr.contains("certificate verification failed"),
            "{mode}: {stderr}"
        );
        assert!(
            stderr.contains("a CA certificate that is not itself trusted"),
            "{mode}: {stderr}"
        );
        assert!(
            stderr.contains(&certs.other.display().to_string()),
            "{mode}: {stderr}"
        );
    }
}
