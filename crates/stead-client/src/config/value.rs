//! What a setting holds and how its value is read: in its unit-bearing spelling by the
//! command line's own parsers (`30d`, `1GiB`, `5%`), in its old spelling as whole
//! milliseconds or bytes, from the file or from its environment variable.

use std::net::SocketAddr;
use std::time::Duration;

use stead_protocol::KeepFree;
use stead_protocol::units::{format_delay, parse_delay, parse_size};

use super::{Config, LISTEN_FORMS, STORE_URL_FORMS, Setting, listen_address, store_url};

/// What a setting holds, with the field of [`Config`] it sets.
pub(super) enum Kind {
    /// A length of time, as `--retry-delay` takes it.
    Duration(Span),
    /// A size, as `[logs] keep_free` takes one.
    Size {
        field: fn(&mut Config) -> &mut u64,
        /// The key it had before it took units, in whole bytes.
        old: &'static str,
    },
    /// A share of the disk or a size.
    Reserve(fn(&mut Config) -> &mut KeepFree),
    /// A number of runs, at least one; unset, no limit.
    Limit(fn(&mut Config) -> &mut Option<u32>),
    /// An address to listen on.
    Address(fn(&mut Config) -> &mut Option<SocketAddr>),
    Flag(fn(&mut Config) -> &mut bool),
    /// A PostgreSQL URL.
    Url(fn(&mut Config) -> &mut Option<String>),
    /// An absolute path; unset, the platform's own.
    Path(fn(&mut Config) -> &mut Option<std::path::PathBuf>),
}

/// A length of time and its bounds.
pub(super) struct Span {
    pub field: fn(&mut Config) -> &mut Duration,
    /// The key it had before it took units, in whole milliseconds.
    pub old: &'static str,
    /// Whether 0 means something (no delay, nothing resumed) rather than a mistake.
    pub zero: bool,
    pub most: Option<Duration>,
}

/// A setting's old spelling: a whole number of milliseconds or bytes, under the key it had
/// before it took units.
pub(super) struct Old<'a> {
    pub key: &'static str,
    table: &'static str,
    counted: Counted<'a>,
}

enum Counted<'a> {
    Millis(&'a Span),
    Bytes(fn(&mut Config) -> &mut u64),
}

impl Old<'_> {
    /// How messages name it: `[timings] lease_ms`.
    pub fn name(&self) -> String {
        format!("[{}] {}", self.table, self.key)
    }

    /// What the old key accepts.
    pub fn accepts(&self) -> &'static str {
        match self.counted {
            Counted::Millis(_) => "a whole number of milliseconds",
            Counted::Bytes(_) => "a whole number of bytes",
        }
    }

    /// Reads the old key's value from the file.
    pub(super) fn read(&self, value: &toml::Value, config: &mut Config) -> Result<(), String> {
        let n = value
            .as_integer()
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| format!("expected {}", self.accepts()))?;
        self.set(n, config)
    }

    fn set(&self, n: u64, config: &mut Config) -> Result<(), String> {
        match self.counted {
            Counted::Millis(span) => span.set(Duration::from_millis(n), config),
            Counted::Bytes(field) => set_size(field, n, config),
        }
    }
}

impl Setting {
    /// Its old spelling, still read, if it had one.
    pub(super) fn old(&self) -> Option<Old<'_>> {
        let (key, counted) = match &self.kind {
            Kind::Duration(span) => (span.old, Counted::Millis(span)),
            Kind::Size { field, old } => (*old, Counted::Bytes(*field)),
            _ => return None,
        };
        Some(Old {
            key,
            table: self.table,
            counted,
        })
    }

    /// The key it had before it took units (whole milliseconds or bytes), still read.
    pub fn old_key(&self) -> Option<&'static str> {
        self.old().map(|old| old.key)
    }

    /// What its documented spelling accepts, as the docs and error messages say it.
    pub fn accepts(&self) -> String {
        match &self.kind {
            Kind::Duration(span) => {
                let mut text = "a duration (30s, 15m, 1h30m, 1d, 500ms)".to_string();
                if span.zero {
                    text.push_str(" or 0");
                }
                if let Some(most) = span.most {
                    text.push_str(&format!(", at most {}", format_delay(most)));
                }
                text
            }
            Kind::Size { .. } => "a size (1GiB, 512MiB, 100MB, or bytes)".into(),
            Kind::Reserve(_) => {
                "a share of the disk (5%) or a size (512MiB, 2GiB, 100MB, or bytes)".into()
            }
            Kind::Limit(_) => "a number of runs, at least 1".into(),
            Kind::Address(_) => LISTEN_FORMS.into(),
            Kind::Flag(_) => "true or false".into(),
            Kind::Url(_) => STORE_URL_FORMS.into(),
            Kind::Path(_) => "an absolute path".into(),
        }
    }

    /// Reads its documented key's value from the file into `config`.
    pub(super) fn read_file(&self, value: &toml::Value, config: &mut Config) -> Result<(), String> {
        let text = match value {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => return Err(format!("expected {}", self.accepts())),
        };
        self.read_text(&text, config)
    }

    /// Reads its environment variable: whole milliseconds or bytes, as the variable's
    /// name says, or the documented key's forms.
    pub(super) fn read_env(&self, text: &str, config: &mut Config) -> Result<(), String> {
        let digits = text.trim();
        if let Some(old) = self.old()
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            let n = digits
                .parse()
                .map_err(|_| format!("expected {}", old.accepts()))?;
            return old.set(n, config);
        }
        self.read_text(text, config)
    }

    /// How a value is shown in a message: a URL without its password.
    pub(super) fn shown(&self, text: &str) -> String {
        match self.kind {
            Kind::Url(_) => format!("{:?}", stead_protocol::redact_url(text)),
            _ => format!("{text:?}"),
        }
    }

    /// How a value of the file is shown in a message.
    pub(super) fn shown_toml(&self, value: &toml::Value) -> String {
        match value.as_str() {
            Some(text) => self.shown(text),
            None => value.to_string(),
        }
    }

    fn read_text(&self, text: &str, config: &mut Config) -> Result<(), String> {
        let refused = |reason: Option<String>| {
            let expected = format!("expected {}", self.accepts());
            match reason {
                Some(reason) => format!("{reason}; {expected}"),
                None => expected,
            }
        };
        match &self.kind {
            Kind::Duration(span) => {
                // The command line's parsers refuse a zero duration; where zero means
                // something (no delay, nothing resumed) it is written `0`, in no unit.
                let d = if span.zero && text.trim() == "0" {
                    Duration::ZERO
                } else {
                    parse_delay(text).map_err(|e| refused(Some(e.reason)))?
                };
                span.set(d, config)
            }
            Kind::Size { field, .. } => {
                set_size(*field, parse_size(text).map_err(|_| refused(None))?, config)
            }
            Kind::Reserve(field) => {
                *field(config) = KeepFree::parse(text).map_err(|_| refused(None))?;
                Ok(())
            }
            Kind::Limit(field) => match text.trim().parse::<u32>() {
                Ok(0) => Err(refused(Some("leave it out for no limit".into()))),
                Ok(n) => {
                    *field(config) = Some(n);
                    Ok(())
                }
                Err(_) => Err(refused(None)),
            },
            Kind::Address(field) => {
                *field(config) = Some(listen_address(text).ok_or_else(|| refused(None))?);
                Ok(())
            }
            Kind::Flag(field) => {
                *field(config) = text.trim().parse().map_err(|_| refused(None))?;
                Ok(())
            }
            Kind::Url(field) => {
                *field(config) = Some(store_url(text).ok_or_else(|| refused(None))?);
                Ok(())
            }
            Kind::Path(field) => {
                let path = std::path::Path::new(text.trim());
                if !path.is_absolute() {
                    return Err(refused(None));
                }
                *field(config) = Some(path.to_path_buf());
                Ok(())
            }
        }
    }
}

impl Span {
    fn set(&self, d: Duration, config: &mut Config) -> Result<(), String> {
        if d.is_zero() && !self.zero {
            return Err("it must be greater than zero".into());
        }
        if let Some(most) = self.most
            && d > most
        {
            return Err(format!("it may be at most {}", format_delay(most)));
        }
        *(self.field)(config) = d;
        Ok(())
    }
}

fn set_size(field: fn(&mut Config) -> &mut u64, n: u64, config: &mut Config) -> Result<(), String> {
    if n == 0 {
        return Err("it must be greater than zero".into());
    }
    *field(config) = n;
    Ok(())
}
