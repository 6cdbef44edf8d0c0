//! An HTTP client for the API tests: real requests over loopback TCP to the real server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use serde_json::Value;

use crate::harness::{PATIENCE, StateDir, json};

pub struct Api {
    pub base: String,
    pub token: String,
    agent: ureq::Agent,
}

/// A status, the headers that matter here, and the body.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}), status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The dashboard's files as the server must serve them: each URL path with the source file
/// built into the binary for it. The page, the style sheet, and every module found in
/// `assets/js/` (read from the source tree, so a module missing from the server's table of
/// assets fails the tests that fetch these).
pub fn dashboard_files() -> Vec<(String, PathBuf)> {
    let assets =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../stead-server/src/request/http/assets");
    let mut files = vec![
        ("/".to_string(), assets.join("index.html")),
        ("/assets/style.css".to_string(), assets.join("style.css")),
    ];
    let mut modules: Vec<String> = std::fs::read_dir(assets.join("js"))
        .expect("the dashboard's modules")
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".js"))
        .collect();
    modules.sort();
    assert!(modules.iter().any(|m| m == "main.js"), "{modules:?}");
    for name in modules {
        files.push((format!("/assets/js/{name}"), assets.join("js").join(&name)));
    }
    files
}

impl Api {
    /// The API of `dir`'s server, started by `stead dashboard` (on a free port).
    pub fn start(dir: &StateDir) -> Self {
        let endpoint = json(dir, &["dashboard"]);
        Self::at(
            endpoint["url"].as_str().expect("a URL").to_string(),
            endpoint["token"].as_str().expect("a token").to_string(),
        )
    }

    pub fn at(base: String, token: String) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build()
            .into();
        Self { base, token, agent }
    }

    pub fn get(&self, path: &str) -> Answer {
        self.send("GET", path, Some(&self.token))
    }

    pub fn post(&self, path: &str) -> Answer {
        self.send("POST", path, Some(&self.token))
    }

    /// A POST with `body` as JSON.
    pub fn post_json(&self, path: &str, body: &Value) -> Answer {
        let url = format!("{}{path}", self.base);
        let response = self
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Content-Type", "application/json")
            .send(body.to_string());
        Self::answer(response.unwrap_or_else(|e| panic!("POST {url}: {e}")))
    }

    /// A request with the token (or none), a method and a path.
    pub fn send(&self, method: &str, path: &str, token: Option<&str>) -> Answer {
        let url = format!("{}{path}", self.base);
        let auth = token.map(|t| format!("Bearer {t}"));
        let result = match method {
            "GET" => {
                let mut req = self.agent.get(&url);
                if let Some(auth) = &auth {
                    req = req.header("Authorization", auth);
                }
                req.call()
            }
            "POST" => {
                let mut req = self.agent.post(&url);
                if let Some(auth) = &auth {
                    req = req.header("Authorization", auth);
                }
                req.send_empty()
            }
            "DELETE" => {
                let mut req = self.agent.delete(&url);
                if let Some(auth) = &auth {
                    req = req.header("Authorization", auth);
                }
                req.call()
            }
            other => panic!("no {other} in these tests"),
        };
        Self::answer(result.unwrap_or_else(|e| panic!("{method} {url}: {e}")))
    }

    fn answer(mut response: ureq::http::Response<ureq::Body>) -> Answer {
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = response
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_to_vec()
            .expect("a body");
        Answer {
            status: response.status().as_u16(),
            content_type,
            headers,
            body,
        }
    }

    /// A streaming GET: the body as a reader, for the event stream and followed logs.
    pub fn stream(&self, path: &str) -> (u16, Box<dyn Read + Send>) {
        // A stalled stream fails the test instead of hanging it.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build()
            .into();
        let response = agent
            .get(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.token))
            .call()
            .expect("a streaming answer");
        let status = response.status().as_u16();
        (status, Box::new(response.into_body().into_reader()))
    }

    /// A request written by hand, for headers an HTTP client will not fake (Host).
    pub fn raw(&self, head: &str) -> (u16, String) {
        self.raw_request(&format!("{head}Connection: close\r\n\r\n"), b"")
    }

    /// A whole request written by hand: its head (ending with the blank line), then
    /// `body`.
    pub fn raw_request(&self, head: &str, body: &[u8]) -> (u16, String) {
        let mut stream = TcpStream::connect(self.authority()).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        // A server that refuses the body at its header may close before it is all sent.
        let _ = stream.write_all(body);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
        (status, answer)
    }

    /// A request of any method, with the token and `body` (empty: none), written by hand
    /// (an HTTP client sends some methods only without a body). The answer must carry its
    /// length.
    pub fn any(&self, method: &str, path: &str, body: &str) -> Answer {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n",
            self.authority(),
            self.token
        );
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        let head = format!("{head}Connection: close\r\n\r\n");
        let (status, answer) = self.raw_request(&head, body.as_bytes());
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
        let headers: Vec<(String, String)> = head
            .lines()
            .skip(1)
            .filter_map(|line| line.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let content_type = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        Answer {
            status,
            content_type,
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    /// `host:port` of the server.
    pub fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }
}

/// Server-sent events read from a stream: `(event, data)` pairs.
pub struct Events {
    lines: BufReader<Box<dyn Read + Send>>,
}

impl Events {
    pub fn open(api: &Api) -> Self {
        let (status, body) = api.stream("/api/events");
        assert_eq!(status, 200);
        Self {
            lines: BufReader::new(body),
        }
    }

    /// The next event (keep-alive comments skipped).
    pub fn next(&mut self) -> (String, Value) {
        let (mut event, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            let n = self.lines.read_line(&mut line).expect("the stream reads");
            assert!(n > 0, "the event stream ended");
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if !event.is_empty() {
                    let value = serde_json::from_str(&data).expect("event data is JSON");
                    return (event, value);
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("event:") {
                event = rest.trim().to_string();
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push_str(rest.trim_start());
            }
        }
    }

    /// Reads events until `want` accepts one, returning it.
    pub fn until(&mut self, what: &str, mut want: impl FnMut(&str, &Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            let (event, data) = self.next();
            if want(&event, &data) {
                return data;
            }
        }
    }
}

/// A free loopback port (bound and released; good enough for one test's server).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
