//! One client connection: the hello line, then one response line per request line.
//!
//! A bad line (invalid JSON, over the length limit, not UTF-8) gets an error response and
//! the connection goes on; one client's garbage never affects another's.

use std::sync::Arc;

use stead_protocol::{ErrorBody, ErrorCode, HelloLine, MAX_LINE_BYTES, ResponseEnvelope};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tracing::debug;

use super::dispatch;
use crate::runs::Link;
use crate::shared::Shared;

/// One line read from a client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    /// Longer than the limit; the whole line was skipped.
    TooLong,
    NotUtf8,
    Eof,
}

pub async fn serve(shared: Arc<Shared>, stream: UnixStream) {
    serve_lines(&shared, stream, true, None).await;
}

/// Serves `stream`: a connection through the socket, greeted first, or a monitor's link
/// (`link`: the monitor at its other end, when known), not greeted, since the server
/// that made it is the one serving it.
async fn serve_lines(shared: &Arc<Shared>, stream: UnixStream, greet: bool, link: Option<&Link>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    if greet {
        let hello = HelloLine {
            hello: shared.hello(),
        };
        if write_json(&mut write, &hello).await.is_err() {
            return;
        }
    }
    loop {
        let line = tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            line = read_line(&mut reader) => line,
        };
        let response = match line {
            Ok(Line::Text(text)) if text.trim().is_empty() => continue,
            Ok(Line::Text(text)) => dispatch::handle(shared, &text, link).await,
            Ok(Line::TooLong) => ResponseEnvelope::error(
                None,
                ErrorBody::new(
                    ErrorCode::LineTooLong,
                    format!("request line longer than {MAX_LINE_BYTES} bytes; it was skipped"),
                ),
            ),
            Ok(Line::NotUtf8) => ResponseEnvelope::error(
                None,
                ErrorBody::new(ErrorCode::InvalidJson, "request line is not UTF-8"),
            ),
            Ok(Line::Eof) => return,
            Err(e) => {
                debug!(cause = %e, "connection read failed");
                return;
            }
        };
        if write_json(&mut write, &response).await.is_err() {
            return;
        }
    }
}

/// Serves a monitor's link (its stdout, a socket to this server) as a connection, until
/// the monitor closes it or the server stops. `monitor`: the process at its other end,
/// which may then take further runs over it (`runs::reuse`).
pub fn serve_link(shared: &Arc<Shared>, link: UnixStream, monitor: Option<Link>) {
    let shared = shared.clone();
    tokio::spawn(async move {
        serve_lines(&shared, link, false, monitor.as_ref()).await;
        if let Some(monitor) = monitor {
            shared.runs.monitors.gone(monitor.pid);
        }
    });
}

async fn write_json(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(value).expect("protocol types always serialize");
    bytes.push(b'\n');
    write.write_all(&bytes).await
}

/// Reads up to the next newline, keeping at most [`MAX_LINE_BYTES`]: a longer line is
/// consumed to its end and reported as [`Line::TooLong`] without being buffered whole.
async fn read_line(reader: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // EOF: a final unterminated line is still a request.
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                to_line(buf)
            });
        }
        let (chunk, consumed, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(consumed);
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                to_line(buf)
            });
        }
    }
}

fn to_line(buf: Vec<u8>) -> Line {
    String::from_utf8(buf).map_or(Line::NotUtf8, Line::Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8]) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader).await.unwrap();
            let eof = line == Line::Eof;
            out.push(line);
            if eof {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_across_buffer_boundaries() {
        assert_eq!(
            lines(b"{\"id\":1}\nsecond line\nlast").await,
            vec![
                Line::Text("{\"id\":1}".into()),
                Line::Text("second line".into()),
                Line::Text("last".into()),
                Line::Eof
            ]
        );
    }

    #[tokio::test]
    async fn an_over_long_line_is_skipped_and_reading_goes_on() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nok\n\xff\xfe\n");
        assert_eq!(
            lines(&input).await,
            vec![
                Line::TooLong,
                Line::Text("ok".into()),
                Line::NotUtf8,
                Line::Eof
            ]
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_accepted() {
        let mut input = vec![b'y'; MAX_LINE_BYTES];
        input.push(b'\n');
        let got = lines(&input).await;
        assert!(matches!(&got[0], Line::Text(t) if t.len() == MAX_LINE_BYTES));
    }
}
