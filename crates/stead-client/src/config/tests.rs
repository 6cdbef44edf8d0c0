//! Reading config.toml and the environment: defaults, each unit form, old keys, and the
//! errors that keep a typo or a bad value from passing unnoticed.

use std::time::Duration;

use stead_protocol::KeepFree;

use super::value::Kind;
use super::*;

/// Loads `toml` (absent: no file) with the variables `env`; the error's text ends up in
/// the returned string with the file's path replaced by `FILE`.
fn load(toml: Option<&str>, env: &[(&str, &str)]) -> Result<Config, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    if let Some(text) = toml {
        std::fs::write(&path, text).unwrap();
    }
    Config::load_with(&path, |name| {
        env.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    })
    .map_err(|e| e.to_string().replace(&path.display().to_string(), "FILE"))
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn defaults_are_the_design_values() {
    let c = load(None, &[]).unwrap();
    assert_eq!(c.timings.lease, secs(30));
    assert_eq!(c.timings.heartbeat, secs(10));
    assert_eq!(c.timings.probe_timeout, Duration::from_millis(500));
    assert_eq!(c.timings.start_timeout, secs(10));
    assert_eq!(c, Config::default());
}

#[test]
fn file_sets_and_env_overrides() {
    let c = load(
        Some("[timings]\nlease_ms = 4000\nheartbeat_ms = 1000\n"),
        &[("STEAD_HEARTBEAT_MS", "500")],
    )
    .unwrap();
    assert_eq!(c.timings.lease, Duration::from_millis(4000));
    assert_eq!(c.timings.heartbeat, Duration::from_millis(500));
    // An empty variable is unset.
    let c = load(
        Some("[timings]\nheartbeat = \"2s\"\n"),
        &[("STEAD_HEARTBEAT_MS", " ")],
    )
    .unwrap();
    assert_eq!(c.timings.heartbeat, secs(2));
}

#[test]
fn every_duration_takes_each_unit_form() {
    let forms = [
        ("2d", secs(2 * 86_400)),
        ("3h", secs(3 * 3_600)),
        ("4m", secs(240)),
        ("5s", secs(5)),
        ("1h30m", secs(5_400)),
        ("1d2h3m4s", secs(93_784)),
        ("750ms", Duration::from_millis(750)),
        ("1ms", Duration::from_millis(1)),
    ];
    let mut durations = 0;
    for setting in SETTINGS {
        let Kind::Duration(span) = &setting.kind else {
            continue;
        };
        durations += 1;
        for (text, want) in forms {
            let mut config = Config::default();
            let read = setting.read_file(&toml::Value::String(text.into()), &mut config);
            match span.most {
                Some(most) if want > most => {
                    assert_eq!(read, Err("it may be at most 2s".into()), "{text}");
                    assert_eq!(config, Config::default());
                }
                _ => {
                    assert_eq!(read, Ok(()), "{} = {text:?}", setting.name());
                    assert_eq!(*(span.field)(&mut config), want, "{}", setting.name());
                }
            }
        }
        let mut config = Config::default();
        let zero = setting.read_file(&toml::Value::String("0".into()), &mut config);
        assert_eq!(zero.is_ok(), span.zero, "{}: {zero:?}", setting.name());
    }
    assert!(durations > 0);
}

#[test]
fn unit_forms_read_through_the_whole_file() {
    let c = load(
        Some(
            "[timings]\nlease = \"1m\"\nheartbeat = \"20s\"\nprobe_timeout = \"250ms\"\n\
             fire_lead = \"0\"\nresume_max_age = \"1d\"\n\
             [http]\nidle_timeout = \"2m\"\n\
             [retention]\nruns_max_age = \"30d\"\nlogs_max_age = \"1h30m\"\n\
             logs_max_total = \"1GB\"\ninterval = \"15m\"\n",
        ),
        &[],
    )
    .unwrap();
    assert_eq!(c.timings.lease, secs(60));
    assert_eq!(c.timings.heartbeat, secs(20));
    assert_eq!(c.timings.probe_timeout, Duration::from_millis(250));
    assert_eq!(c.timings.fire_lead, Duration::ZERO);
    assert_eq!(c.timings.resume_max_age, secs(86_400));
    assert_eq!(c.http.idle_timeout, secs(120));
    assert_eq!(c.retention.runs_max_age, secs(30 * 86_400));
    assert_eq!(c.retention.logs_max_age, secs(5_400));
    assert_eq!(c.retention.logs_max_total, 1_000_000_000);
    assert_eq!(c.retention.interval, secs(900));
}

#[test]
fn sizes_take_each_unit_form() {
    for (value, want) in [
        ("\"1GiB\"", 1 << 30),
        ("\"512MiB\"", 512 << 20),
        ("\"3KiB\"", 3 << 10),
        ("\"1TiB\"", 1 << 40),
        ("\"1GB\"", 1_000_000_000),
        ("\"100MB\"", 100_000_000),
        ("\"2kB\"", 2_000),
        ("\"2 GiB\"", 2 << 30),
        ("\"7B\"", 7),
        ("\"65536\"", 65_536),
        ("4096", 4_096),
    ] {
        let c = load(
            Some(&format!("[retention]\nlogs_max_total = {value}\n")),
            &[],
        )
        .unwrap();
        assert_eq!(c.retention.logs_max_total, want, "{value}");
    }
    assert_eq!(
        load(Some("[retention]\nlogs_max_total = \"0GiB\"\n"), &[]).unwrap_err(),
        "invalid [retention] logs_max_total = \"0GiB\" in FILE: it must be greater than zero"
    );
    for bad in ["\"1.5GiB\"", "\"lots\"", "-1", "true"] {
        let err = load(Some(&format!("[retention]\nlogs_max_total = {bad}\n")), &[]).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "invalid [retention] logs_max_total = {bad} in FILE: "
            )),
            "{err}"
        );
        assert!(
            err.ends_with("expected a size (1GiB, 512MiB, 100MB, or bytes)"),
            "{err}"
        );
    }
}

#[test]
fn old_keys_read_whole_milliseconds_and_bytes_as_before() {
    let c = load(
        Some(
            "[timings]\nresume_delay_ms = 0\nfire_lead_ms = 2000\n\
             [http]\nidle_timeout_ms = 1500\n\
             [retention]\nruns_max_age_ms = 86400000\nlogs_max_total_bytes = 4096\n",
        ),
        &[],
    )
    .unwrap();
    assert_eq!(c.timings.resume_delay, Duration::ZERO);
    assert_eq!(c.timings.fire_lead, secs(2));
    assert_eq!(c.http.idle_timeout, Duration::from_millis(1500));
    assert_eq!(c.retention.runs_max_age, secs(86_400));
    assert_eq!(c.retention.logs_max_total, 4096);
    for (file, problem) in [
        (
            "[retention]\nlogs_max_total_bytes = \"1GiB\"\n",
            "invalid [retention] logs_max_total_bytes = \"1GiB\" in FILE: expected a whole \
             number of bytes",
        ),
        (
            "[timings]\nlease_ms = -1\n",
            "invalid [timings] lease_ms = -1 in FILE: expected a whole number of milliseconds",
        ),
        (
            "[retention]\nlogs_max_age_ms = 0\n",
            "invalid [retention] logs_max_age_ms = 0 in FILE: it must be greater than zero",
        ),
        (
            "[timings]\nfire_lead_ms = 2001\n",
            "invalid [timings] fire_lead_ms = 2001 in FILE: it may be at most 2s",
        ),
    ] {
        assert_eq!(load(Some(file), &[]).unwrap_err(), problem);
    }
}

#[test]
fn both_spellings_of_one_setting_are_an_error() {
    let err = load(
        Some("[retention]\nruns_max_age = \"30d\"\nruns_max_age_ms = 1000\n"),
        &[],
    )
    .unwrap_err();
    assert_eq!(
        err,
        "FILE gives both [retention] runs_max_age and [retention] runs_max_age_ms, which are \
         one setting: keep [retention] runs_max_age (it takes units) and remove [retention] \
         runs_max_age_ms"
    );
    let err = load(Some("[timings]\nlease_ms = 4000\nlease = \"4s\"\n"), &[]).unwrap_err();
    assert!(
        err.contains("both [timings] lease and [timings] lease_ms"),
        "{err}"
    );
}

/// Checks that each file is refused with a message that starts as given.
fn refused_as(cases: &[(&str, &str)]) {
    for (file, message) in cases {
        let err = load(Some(file), &[]).unwrap_err();
        assert!(err.starts_with(message), "{file:?}: {err}");
    }
}

#[test]
fn unknown_tables_and_keys_are_errors() {
    refused_as(&[
        (
            "[timings]\nlease_seconds = 3\n",
            "unknown key [timings] lease_seconds in FILE; [timings] takes lease, heartbeat, \
             probe_timeout,",
        ),
        (
            "[timing]\nlease = \"3s\"\n",
            "unknown key timing in FILE; the file holds the tables [timings], [http], [store],",
        ),
        ("lease = \"3s\"\n", "unknown key lease in FILE"),
        (
            "timings = 3\n",
            "invalid timings = 3 in FILE: expected a table, [timings]",
        ),
        // A typo is reported as such even when another value is bad too.
        (
            "[http]\nidle_timeout = \"x\"\nport = 1\n",
            "unknown key [http] port in FILE",
        ),
    ]);
}

#[test]
fn a_bad_value_names_the_key_the_file_the_value_and_what_is_accepted() {
    refused_as(&[
        (
            "[retention]\nruns_max_age = \"30x\"\n",
            "invalid [retention] runs_max_age = \"30x\" in FILE: unknown unit \"x\"; write \
             numbers with units d, h, m or s, like 30s, 15m, 1h30m or 1d; expected a duration \
             (30s, 15m, 1h30m, 1d, 500ms)",
        ),
        // A number needs its unit: the old key takes milliseconds.
        (
            "[timings]\nlease = 30\n",
            "invalid [timings] lease = 30 in FILE: 30 has no unit",
        ),
        (
            "[timings]\nlease = \"0\"\n",
            "invalid [timings] lease = \"0\" in FILE: 0 has no unit",
        ),
        (
            "[timings]\nfire_lead = \"3s\"\n",
            "invalid [timings] fire_lead = \"3s\" in FILE: it may be at most 2s",
        ),
        (
            "[timings]\nheartbeat = [1]\n",
            "invalid [timings] heartbeat = [1] in FILE: expected a duration",
        ),
        (
            "[timings]\nheartbeat = \"40s\"\n",
            "invalid timings: [timings] heartbeat (40s) must be shorter than [timings] lease \
             (30s), or the lease lapses between renewals",
        ),
        ("[timings\n", "invalid config file FILE: "),
    ]);
}

#[test]
fn variables_take_the_old_unit_or_the_documented_forms() {
    let in_the_old_unit = [
        ("STEAD_RETENTION_RUNS_MAX_AGE_MS", "86400000"),
        ("STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES", " 4096 "),
        ("STEAD_LEASE_MS", "2000"),
        ("STEAD_HEARTBEAT_MS", "500"),
        ("STEAD_HTTP_IDLE_TIMEOUT_MS", "60000"),
    ];
    let in_units = [
        ("STEAD_RETENTION_RUNS_MAX_AGE_MS", "1d"),
        ("STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES", "4KiB"),
        ("STEAD_LEASE_MS", "2s"),
        ("STEAD_HEARTBEAT_MS", "500ms"),
        ("STEAD_HTTP_IDLE_TIMEOUT_MS", "1m"),
    ];
    for env in [in_the_old_unit, in_units] {
        let c = load(
            Some("[retention]\nruns_max_age = \"30d\"\nlogs_max_total = \"1GiB\"\n"),
            &env,
        )
        .unwrap();
        assert_eq!(c.retention.runs_max_age, secs(86_400), "{env:?}");
        assert_eq!(c.retention.logs_max_total, 4096, "{env:?}");
        assert_eq!(c.timings.lease, secs(2), "{env:?}");
        assert_eq!(c.timings.heartbeat, Duration::from_millis(500), "{env:?}");
        assert_eq!(c.http.idle_timeout, secs(60), "{env:?}");
    }
    for (name, value, problem) in [
        (
            "STEAD_LEASE_MS",
            "soon",
            "invalid STEAD_LEASE_MS=\"soon\" (it sets [timings] lease): expected a number at \
             \"soon\"; write numbers with units d, h, m or s, like 30s, 15m, 1h30m or 1d; \
             expected a duration (30s, 15m, 1h30m, 1d, 500ms)",
        ),
        (
            "STEAD_RETENTION_INTERVAL_MS",
            "0",
            "invalid STEAD_RETENTION_INTERVAL_MS=\"0\" (it sets [retention] interval): it must \
             be greater than zero",
        ),
        (
            "STEAD_LEASE_MS",
            "99999999999999999999",
            "invalid STEAD_LEASE_MS=\"99999999999999999999\" (it sets [timings] lease): \
             expected a whole number of milliseconds",
        ),
    ] {
        assert_eq!(load(None, &[(name, value)]).unwrap_err(), problem);
    }
}

#[test]
fn the_logs_reserve_is_a_share_or_a_size() {
    assert_eq!(
        load(None, &[]).unwrap().logs.keep_free,
        KeepFree::Percent(5)
    );
    let c = load(Some("[logs]\nkeep_free = \"512MiB\"\n"), &[]).unwrap();
    assert_eq!(c.logs.keep_free, KeepFree::Bytes(512 << 20));
    let c = load(
        Some("[logs]\nkeep_free = \"512MiB\"\n"),
        &[("STEAD_LOGS_KEEP_FREE", "1%")],
    )
    .unwrap();
    assert_eq!(c.logs.keep_free, KeepFree::Percent(1));
    let err = load(Some("[logs]\nkeep_free = \"lots\"\n"), &[]).unwrap_err();
    assert_eq!(
        err,
        "invalid [logs] keep_free = \"lots\" in FILE: expected a share of the disk (5%) or a \
         size (512MiB, 2GiB, 100MB, or bytes)"
    );
}

#[test]
fn the_hosts_default_queue_limit_is_off_unless_set_and_never_zero() {
    assert_eq!(load(None, &[]).unwrap().queues.default_parallel, None);
    let c = load(Some("[queues]\ndefault_parallel = 4\n"), &[]).unwrap();
    assert_eq!(c.queues.default_parallel, Some(4));
    let c = load(
        Some("[queues]\ndefault_parallel = 4\n"),
        &[("STEAD_QUEUES_DEFAULT_PARALLEL", "2")],
    )
    .unwrap();
    assert_eq!(c.queues.default_parallel, Some(2));
    assert_eq!(
        load(Some("[queues]\ndefault_parallel = 0\n"), &[]).unwrap_err(),
        "invalid [queues] default_parallel = 0 in FILE: leave it out for no limit; expected \
         a number of runs, at least 1"
    );
    assert_eq!(
        load(None, &[("STEAD_QUEUES_DEFAULT_PARALLEL", "many")]).unwrap_err(),
        "invalid STEAD_QUEUES_DEFAULT_PARALLEL=\"many\" (it sets [queues] default_parallel): \
         expected a number of runs, at least 1"
    );
}

#[test]
fn retention_has_defaults_a_section_and_env_overrides() {
    let r = load(None, &[]).unwrap().retention;
    assert_eq!(r.runs_max_age, secs(400 * 86400));
    assert_eq!(r.logs_max_age, secs(30 * 86400));
    assert_eq!(r.logs_max_total, 1 << 30);
    let r = load(
        Some("[retention]\nlogs_max_total_bytes = 4096\ninterval_ms = 60000\n"),
        &[("STEAD_RETENTION_INTERVAL_MS", "250")],
    )
    .unwrap()
    .retention;
    assert_eq!(r.logs_max_total, 4096);
    assert_eq!(r.interval, Duration::from_millis(250));
}

#[test]
fn the_store_url_is_postgres_and_its_password_is_never_shown() {
    let c = load(
        Some("[store]\nurl = \"postgres://stead@db.lan/stead\"\n"),
        &[],
    )
    .unwrap();
    assert_eq!(
        c.store_url.as_deref(),
        Some("postgres://stead@db.lan/stead")
    );
    let c = load(None, &[("STEAD_STORE_URL", "postgresql://h/db")]).unwrap();
    assert_eq!(c.store_url.as_deref(), Some("postgresql://h/db"));
    let err = load(Some("[store]\nurl = \"mysql://me:secret@db/x\"\n"), &[]).unwrap_err();
    assert!(!err.contains("secret"), "{err}");
    assert_eq!(
        err,
        "invalid [store] url = \"mysql://me:***@db/x\" in FILE: expected a postgres:// URL \
         (such as postgres://stead@db.lan/stead)"
    );
    let err = load(None, &[("STEAD_STORE_URL", "mysql://me:secret@db/x")]).unwrap_err();
    assert!(!err.contains("secret"), "{err}");
    assert!(
        err.starts_with("invalid STEAD_STORE_URL=\"mysql://me:***@db/x\""),
        "{err}"
    );
}

#[test]
fn http_listens_on_loopback_unless_remote_is_allowed() {
    let c = load(Some("[http]\nlisten = \"localhost:8765\"\n"), &[]).unwrap();
    assert_eq!(c.http.listen, Some("127.0.0.1:8765".parse().unwrap()));
    let c = load(Some("[http]\nlisten = \"[::1]:0\"\n"), &[]).unwrap();
    assert_eq!(c.http.listen, Some("[::1]:0".parse().unwrap()));
    assert_eq!(load(None, &[]).unwrap().http.listen, None);

    let err = load(Some("[http]\nlisten = \"0.0.0.0:8765\"\n"), &[]).unwrap_err();
    assert!(
        err.starts_with("invalid HTTP setting: the HTTP API listens on loopback addresses only"),
        "{err}"
    );
    let c = load(
        Some("[http]\nlisten = \"0.0.0.0:8765\"\nallow_remote = true\n"),
        &[],
    )
    .unwrap();
    assert!(c.http.allow_remote);

    let err = load(Some("[http]\nlisten = \"8765\"\n"), &[]).unwrap_err();
    assert_eq!(
        err,
        "invalid [http] listen = \"8765\" in FILE: expected IP:PORT, [IPv6]:PORT or \
         localhost:PORT, such as 127.0.0.1:8765"
    );
    let err = load(Some("[http]\nallow_remote = \"yes\"\n"), &[]).unwrap_err();
    assert!(err.ends_with("expected true or false"), "{err}");
    let err = load(Some("[http]\nport = 1\n"), &[]).unwrap_err();
    assert!(err.starts_with("unknown key [http] port in FILE"), "{err}");
}
