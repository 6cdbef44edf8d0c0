//! The dashboard: one page, its style sheet and its script's modules, built into the binary.
//!
//! The page carries no data and needs no token to load; it reads the token from its URL's
//! fragment (which browsers never send to a server) and asks the API for everything.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::App;

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// A module of the dashboard's script: `/assets/js/NAME.js`, built from `assets/js/NAME.js`.
macro_rules! module {
    ($name:literal) => {
        (
            concat!("/assets/js/", $name, ".js"),
            JS,
            include_str!(concat!("assets/js/", $name, ".js")),
        )
    };
}

/// Every file the dashboard is made of: its URL path, its content type and its text. Each
/// one is a route; a new module is one more line. The page loads `js/main.js`, which imports
/// the other modules by relative URL.
const FILES: &[(&str, &str, &str)] = &[
    ("/", HTML, include_str!("assets/index.html")),
    ("/assets/style.css", CSS, include_str!("assets/style.css")),
    module!("main"),
    module!("actions"),
    module!("api"),
    module!("chain"),
    module!("clock"),
    module!("details"),
    module!("dom"),
    module!("hosts"),
    module!("jobs"),
    module!("labels"),
    module!("load"),
    module!("log"),
    module!("model"),
    module!("queues"),
    module!("runs"),
    module!("services"),
    module!("sse"),
    module!("status"),
    module!("steps"),
    module!("time"),
    module!("timeline"),
];

/// Nothing but this server's own files: no inline script, no other origin, no framing.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

pub fn routes() -> Router<App> {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, content_type, body)| {
            router.route(path, get(move || async move { asset(content_type, body) }))
        })
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let headers: [(HeaderName, HeaderValue); 6] = [
        (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        // A new build must never run an old script against its API.
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    (headers, body).into_response()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every module in `assets/js/` is served, and every file served is there.
    #[test]
    fn the_table_serves_every_module_and_only_those() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/request/http/assets/js");
        let on_disk: BTreeSet<String> = std::fs::read_dir(dir)
            .expect("the modules' directory")
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".js"))
            .map(|name| format!("/assets/js/{name}"))
            .collect();
        let served: BTreeSet<String> = FILES
            .iter()
            .filter(|(path, _, _)| path.starts_with("/assets/js/"))
            .map(|(path, _, _)| path.to_string())
            .collect();
        assert_eq!(served, on_disk);
        let paths: BTreeSet<&str> = FILES.iter().map(|(path, _, _)| *path).collect();
        assert_eq!(paths.len(), FILES.len(), "a path is in the table twice");
        for (path, content_type, body) in FILES {
            let ext = path.rsplit('.').next().unwrap();
            let want = match ext {
                "js" => JS,
                "css" => CSS,
                _ => HTML,
            };
            assert_eq!(*content_type, want, "{path}");
            assert!(!body.is_empty(), "{path}");
        }
    }

    /// Each module's relative imports name a module of the table.
    #[test]
    fn every_import_is_served() {
        let served: BTreeSet<&str> = FILES.iter().map(|(path, _, _)| *path).collect();
        for (path, _, body) in FILES.iter().filter(|(_, ct, _)| *ct == JS) {
            for rest in body.split(" from \"").skip(1) {
                let target = &rest[..rest.find('"').unwrap()];
                let name = target
                    .strip_prefix("./")
                    .unwrap_or_else(|| panic!("{path} imports {target}, not a module beside it"));
                let url = format!("/assets/js/{name}");
                assert!(served.contains(url.as_str()), "{path} imports {url}");
            }
        }
    }
}
