//! How URLs that may carry credentials are shown: a ledger's never with its password, a
//! notifier's never with its credentials or query values.
//!
//! `status`, `hosts` and error messages name a PostgreSQL ledger by its URL, and
//! `notify ls`, the HTTP API and MCP show notifiers' URLs (an ntfy or Slack webhook may
//! carry a token); this is the one place that decides what of them is shown.

/// `url` with any password replaced by `***`, in the URL form (`//user:secret@host`,
/// `?password=secret`) and the key/value form (`password=secret`, quoted or not).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_pairs(url);
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{hosts}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let query: String = match query {
        Some(query) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => "password=***".to_string(),
                    _ => pair.to_string(),
                })
                .collect();
            format!("?{}", pairs.join("&"))
        }
        None => String::new(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

/// A notifier's `url` as shown: its userinfo (`//user:token@`) and every query value
/// (`?token=...`) and fragment replaced by `***`, so a token carried there is never
/// shown. The URL is kept and used as given; this is only what is printed. A token in
/// the path itself (as some webhooks have) cannot be told from the path, and is shown.
pub fn redact_notifier_url(url: &str) -> String {
    let (url, fragment) = match url.split_once('#') {
        Some((url, _)) => (url, "#***"),
        None => (url, ""),
    };
    let (rest, query) = match url.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (url, None),
    };
    let (scheme, rest) = rest.split_once("://").unwrap_or(("", rest));
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((_, hosts)) => format!("***@{hosts}"),
        None => authority.to_string(),
    };
    let query = query.map_or(String::new(), |query| {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) => format!("{key}=***"),
                None if pair.is_empty() => String::new(),
                None => "***".to_string(),
            })
            .collect();
        format!("?{}", pairs.join("&"))
    });
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{authority}{path}{query}{fragment}")
}

/// The key/value form with the value of `password` replaced; a quoted value may hold
/// spaces and escaped quotes, so it is skipped to its closing quote.
fn redact_pairs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("password") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let after_key = from["password".len()..].trim_start();
        let at_word_start = before.is_empty() || before.ends_with(char::is_whitespace);
        match after_key.strip_prefix('=') {
            Some(value) if at_word_start => {
                out.push_str("password=***");
                let value = value.trim_start();
                rest = match value.strip_prefix('\'') {
                    Some(quoted) => {
                        let mut escaped = false;
                        let end = quoted
                            .char_indices()
                            .find(|&(_, c)| {
                                let close = c == '\'' && !escaped;
                                escaped = c == '\\' && !escaped;
                                close
                            })
                            .map_or(quoted.len(), |(i, _)| i + 1);
                        &quoted[end..]
                    }
                    None => &value[value.find(char::is_whitespace).unwrap_or(value.len())..],
                };
            }
            _ => {
                out.push_str("password");
                rest = &from["password".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{redact_notifier_url, redact_url};

    #[test]
    fn a_notifiers_credentials_and_query_values_are_masked() {
        for (url, shown) in [
            (
                "https://ntfy.sh/alerts?auth=tk_secret&x=1",
                "https://ntfy.sh/alerts?auth=***&x=***",
            ),
            (
                "https://user:pa55@hooks.example/in#frag",
                "https://***@hooks.example/in#***",
            ),
            ("https://tok3n@h/x?flag", "https://***@h/x?***"),
            ("http://127.0.0.1:9000/hook", "http://127.0.0.1:9000/hook"),
            ("http://h/a@b", "http://h/a@b"),
        ] {
            assert_eq!(redact_notifier_url(url), shown, "{url}");
        }
    }

    #[test]
    fn passwords_are_redacted_in_both_url_forms() {
        for (url, shown) in [
            (
                "postgres://u:secret@h:5/db?sslmode=disable&password=other",
                "postgres://u:***@h:5/db?sslmode=disable&password=***",
            ),
            ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h", "postgres://h"),
            (
                "host=h password='it\\'s a secret' user=u",
                "host=h password=*** user=u",
            ),
            (
                "host=h password = secret user=u",
                "host=h password=*** user=u",
            ),
            ("password=secret", "password=***"),
            ("host=h mypassword=x", "host=h mypassword=x"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }
}
