//! A webhook receiver for the notification tests: a real HTTP server on a loopback port,
//! in a thread of the test, that records every POST it is sent and answers 200. It can
//! be brought down (its port closed, so deliveries are refused) and up again on the same
//! port. It stops with the test: its thread ends when it is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One request as the receiver got it.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// When it arrived.
    pub at: Instant,
}

impl Delivery {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

pub struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Delivery>>>,
    serving: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Receiver {
    /// A receiver listening on a free port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().unwrap().port();
        let mut receiver = Self {
            port,
            got: Arc::default(),
            serving: None,
        };
        receiver.serve(listener);
        receiver
    }

    /// A receiver that is down: it has a port, where nothing listens until [`Self::up`].
    pub fn down() -> Self {
        let mut receiver = Self::start();
        receiver.stop();
        receiver
    }

    /// Listens again on the same port.
    pub fn up(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).expect("the same port again");
        self.serve(listener);
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// What it got so far, in order of arrival.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.got.lock().unwrap().clone()
    }

    /// The bodies of what it got, as JSON.
    pub fn events(&self) -> Vec<Value> {
        self.deliveries().iter().map(Delivery::json).collect()
    }

    fn serve(&mut self, listener: TcpListener) {
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (got, done) = (self.got.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if let Some(delivery) = answer(stream) {
                            got.lock().unwrap().push(delivery);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        self.serving = Some((stop, thread));
    }

    /// Closes its port: deliveries are refused until [`Self::up`].
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.serving.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads one request and answers `200 OK`; `None` when it was not a whole request.
fn answer(mut stream: TcpStream) -> Option<Delivery> {
    stream.set_nonblocking(false).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (k, v) = header.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .ok()?;
    Some(Delivery {
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    })
}
