//! Just enough HTTP/1.1 for the mock model server: request parsing with
//! `Content-Length` and chunked bodies (keep-alive needs exact framing, or the
//! next request on the connection is read from the middle of a body), and
//! response framing. Kept free of sockets so the unit tests drive it from
//! byte slices.

use std::io::{self, BufRead, Read};

/// Largest request head (request line + headers) the mock accepts. Agents
/// send a few hundred bytes; anything far larger is not one of them.
const MAX_HEAD: usize = 64 * 1024;
/// Largest body: a long Claude/Gemini conversation with tool definitions is a
/// few hundred KiB; the cap only stops a runaway client.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// `GET`, `POST`, `CONNECT`, …
    pub method: String,
    /// The request target as sent (path and query, or `host:port` for CONNECT).
    pub target: String,
    /// Header names lower-cased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The decoded body (chunked framing removed).
    pub body: Vec<u8>,
}

impl Request {
    /// The first header with this (lower-case) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query string.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// Whether the client asked to close the connection after this request.
    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads one line ending in `\n` (the `\r` is stripped), failing beyond `cap`.
fn read_line<R: BufRead>(r: &mut R, cap: usize) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r
        .by_ref()
        .take(cap as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        return Err(bad("line too long or truncated"));
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| bad("header line is not UTF-8"))
}

/// Reads the next request from a connection. `Ok(None)` is a clean end of the
/// connection before any byte of a new request.
pub(crate) fn read_request<R: BufRead>(r: &mut R) -> io::Result<Option<Request>> {
    // Tolerate blank lines between requests (RFC 9112 §2.2).
    let line = loop {
        match read_line(r, MAX_HEAD)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("malformed request line `{line}`")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("unsupported version `{version}`")));
    }
    let mut headers = Vec::new();
    let mut head_len = line.len();
    loop {
        let Some(h) = read_line(r, MAX_HEAD)? else {
            return Err(bad("connection closed inside the headers"));
        };
        head_len += h.len();
        if head_len > MAX_HEAD {
            return Err(bad("request head too large"));
        }
        if h.is_empty() {
            break;
        }
        let Some((name, value)) = h.split_once(':') else {
            return Err(bad(format!("malformed header `{h}`")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut req = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
    };
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        req.body = read_chunked(r)?;
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad Content-Length `{len}`")))?;
        if len > MAX_BODY {
            return Err(bad("body too large"));
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        req.body = body;
    }
    Ok(Some(req))
}

/// Decodes a chunked body, including the trailer section.
fn read_chunked<R: BufRead>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let Some(size_line) = read_line(r, MAX_HEAD)? else {
            return Err(bad("connection closed inside a chunked body"));
        };
        // Chunk extensions (`;name=value`) carry nothing the mock needs.
        let hex = size_line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(hex, 16)
            .map_err(|_| bad(format!("bad chunk size `{size_line}`")))?;
        if size == 0 {
            // Trailer fields, then the empty line.
            loop {
                match read_line(r, MAX_HEAD)? {
                    None => return Err(bad("connection closed inside the trailer")),
                    Some(l) if l.is_empty() => return Ok(body),
                    Some(_) => {}
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(bad("body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(bad("chunk not followed by CRLF"));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

/// A complete response with `Content-Length` framing. `close` adds
/// `Connection: close`; the caller then closes the socket.
pub(crate) fn response(status: u16, content_type: &str, body: &[u8], close: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        reason(status),
        body.len()
    );
    if content_type == "text/event-stream" {
        out.push_str("Cache-Control: no-cache\r\n");
    }
    out.push_str(if close {
        "Connection: close\r\n\r\n"
    } else {
        "Connection: keep-alive\r\n\r\n"
    });
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn parse_all(raw: &[u8]) -> io::Result<Vec<Request>> {
        let mut r = io::BufReader::new(raw);
        let mut out = Vec::new();
        while let Some(req) = read_request(&mut r)? {
            out.push(req);
        }
        Ok(out)
    }

    #[test]
    fn keep_alive_requests_are_framed_by_content_length() {
        let raw = b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}\
GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
        let reqs = parse_all(raw).unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].method, "POST");
        assert_eq!(reqs[0].path(), "/v1/messages");
        assert_eq!(reqs[0].body, b"{\"a\":1}");
        assert_eq!(reqs[1].method, "GET");
        assert!(reqs[1].body.is_empty());
    }

    #[test]
    fn chunked_body_is_decoded_with_extensions_and_trailer() {
        let raw = b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: y\r\n\r\n\
GET /next HTTP/1.1\r\n\r\n";
        let reqs = parse_all(raw).unwrap();
        assert_eq!(reqs[0].body, b"{\"a\":1}");
        assert_eq!(reqs[1].target, "/next");
    }

    #[test]
    fn connect_has_an_authority_target() {
        let raw = b"CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n";
        let reqs = parse_all(raw).unwrap();
        assert_eq!(reqs[0].method, "CONNECT");
        assert_eq!(reqs[0].target, "github.com:443");
        assert_eq!(reqs[0].header("host"), Some("github.com:443"));
    }

    #[rstest]
    #[case::bad_line(&b"NONSENSE\r\n\r\n"[..])]
    #[case::bad_version(&b"GET / SPDY/3\r\n\r\n"[..])]
    #[case::bad_length(&b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"[..])]
    #[case::short_body(&b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc"[..])]
    #[case::bad_chunk(&b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"[..])]
    #[case::chunk_without_crlf(&b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab"[..])]
    #[case::header_without_colon(&b"GET / HTTP/1.1\r\nbroken\r\n\r\n"[..])]
    fn malformed_requests_are_errors_not_panics(#[case] raw: &[u8]) {
        assert!(parse_all(raw).is_err());
    }

    #[test]
    fn response_carries_length_and_connection_mode() {
        let r =
            String::from_utf8(response(200, "text/event-stream", b"data: x\n\n", true)).unwrap();
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(r.contains("Content-Length: 9\r\n"));
        assert!(r.contains("Connection: close\r\n\r\ndata: x\n\n"));
        let k = String::from_utf8(response(404, "application/json", b"{}", false)).unwrap();
        assert!(k.contains("Connection: keep-alive"));
        assert!(k.starts_with("HTTP/1.1 404 Not Found"));
    }
}
