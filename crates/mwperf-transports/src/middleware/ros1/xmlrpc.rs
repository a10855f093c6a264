//! The small XML-RPC dialect ROS 1 speaks (master and slave APIs), over HTTP/1.0 on `std::net`.
//!
//! Two peers write it differently, so the parser is lenient where they differ: Python's
//! `xmlrpc.client` (rosmaster, rospy) wraps strings in `<string>` and ints in `<int>`, XmlRpc++
//! (roscpp, e.g. `topic_tools relay`) writes bare `<value>text</value>` strings and `<i4>` ints.
//! Both use `<boolean>`, `<array><data>`, entity escapes, and HTTP bodies sized by
//! Content-Length (headers in any case). Input from the network never panics: every malformed
//! document is an `Err` naming what was wrong, and nesting is capped so no input can exhaust the
//! stack.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// One XML-RPC value (the types ROS uses, plus what a foreign peer may send us).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Double(f64),
    /// Base64 text, kept encoded (ROS only sends it in UDPROS connection headers, which we refuse).
    Base64(String),
    Array(Vec<Value>),
    Struct(Vec<(String, Value)>),
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Deepest nesting of arrays/structs accepted (ROS needs 3).
const MAX_DEPTH: usize = 32;
/// Largest HTTP message read (ROS calls are a few hundred bytes; getSystemState a few KiB).
const MAX_HTTP: usize = 16 << 20;

// ---------------------------------------------------------------------------------------------
// Encoding

pub fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

fn encode_value(v: &Value, out: &mut String) {
    out.push_str("<value>");
    match v {
        // <i4> is what every XML-RPC peer reads; wider values need <i8> (Python reads it too).
        Value::Int(i) if i32::try_from(*i).is_ok() => out.push_str(&format!("<i4>{i}</i4>")),
        Value::Int(i) => out.push_str(&format!("<i8>{i}</i8>")),
        Value::Bool(b) => out.push_str(if *b {
            "<boolean>1</boolean>"
        } else {
            "<boolean>0</boolean>"
        }),
        Value::Str(s) => {
            out.push_str("<string>");
            escape(s, out);
            out.push_str("</string>");
        }
        Value::Double(d) => out.push_str(&format!("<double>{d}</double>")),
        Value::Base64(s) => {
            out.push_str("<base64>");
            escape(s, out);
            out.push_str("</base64>");
        }
        Value::Array(items) => {
            out.push_str("<array><data>");
            for item in items {
                encode_value(item, out);
            }
            out.push_str("</data></array>");
        }
        Value::Struct(members) => {
            out.push_str("<struct>");
            for (name, value) in members {
                out.push_str("<member><name>");
                escape(name, out);
                out.push_str("</name>");
                encode_value(value, out);
                out.push_str("</member>");
            }
            out.push_str("</struct>");
        }
    }
    out.push_str("</value>");
}

pub fn method_call(method: &str, params: &[Value]) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodCall><methodName>");
    escape(method, &mut out);
    out.push_str("</methodName><params>");
    for p in params {
        out.push_str("<param>");
        encode_value(p, &mut out);
        out.push_str("</param>");
    }
    out.push_str("</params></methodCall>\n");
    out
}

pub fn method_response(value: &Value) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodResponse><params><param>");
    encode_value(value, &mut out);
    out.push_str("</param></params></methodResponse>\n");
    out
}

pub fn fault_response(code: i64, text: &str) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodResponse><fault>");
    encode_value(
        &Value::Struct(vec![
            ("faultCode".into(), Value::Int(code)),
            ("faultString".into(), Value::str(text)),
        ]),
        &mut out,
    );
    out.push_str("</fault></methodResponse>\n");
    out
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// One tag as the tokenizer sees it.
#[derive(Debug, PartialEq)]
enum Tag<'a> {
    Open(&'a str),
    Close(&'a str),
    /// `<name/>`
    Empty(&'a str),
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

type PResult<T> = Result<T, String>;

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// Skip whitespace, the XML declaration, comments and doctype-like declarations.
    fn skip_misc(&mut self) -> PResult<()> {
        loop {
            let r = self.rest();
            let trimmed = r.trim_start();
            self.pos += r.len() - trimmed.len();
            let (open, close) = if trimmed.starts_with("<?") {
                ("<?", "?>")
            } else if trimmed.starts_with("<!--") {
                ("<!--", "-->")
            } else if trimmed.starts_with("<!") {
                ("<!", ">")
            } else {
                return Ok(());
            };
            match trimmed[open.len()..].find(close) {
                Some(i) => self.pos += open.len() + i + close.len(),
                None => return Err(format!("unterminated '{open}'")),
            }
        }
    }

    /// Read the next tag after optional whitespace.
    fn tag(&mut self) -> PResult<Tag<'a>> {
        self.skip_misc()?;
        let r = self.rest();
        if !r.starts_with('<') {
            return Err(format!(
                "expected a tag at byte {}, found {:?}",
                self.pos,
                r.chars().take(20).collect::<String>()
            ));
        }
        let end = r.find('>').ok_or("unterminated tag")?;
        self.pos += end + 1;
        let inner = &r[1..end];
        if let Some(name) = inner.strip_prefix('/') {
            Ok(Tag::Close(name.trim()))
        } else if let Some(name) = inner.strip_suffix('/') {
            Ok(Tag::Empty(tag_name(name)))
        } else {
            Ok(Tag::Open(tag_name(inner)))
        }
    }

    /// Look at the next tag without consuming it.
    fn peek(&mut self) -> PResult<Tag<'a>> {
        let at = self.pos;
        let t = self.tag();
        self.pos = at;
        t
    }

    fn open(&mut self, name: &str) -> PResult<()> {
        match self.tag()? {
            Tag::Open(n) if n == name => Ok(()),
            t => Err(format!("expected <{name}>, found {t:?}")),
        }
    }

    fn close(&mut self, name: &str) -> PResult<()> {
        match self.tag()? {
            Tag::Close(n) if n == name => Ok(()),
            t => Err(format!("expected </{name}>, found {t:?}")),
        }
    }

    /// Raw text up to the next '<' (not unescaped).
    fn text(&mut self) -> &'a str {
        let r = self.rest();
        let end = r.find('<').unwrap_or(r.len());
        self.pos += end;
        &r[..end]
    }

    /// `<name>text</name>` after its opening tag was read: the unescaped text.
    fn text_then_close(&mut self, name: &str) -> PResult<String> {
        let t = unescape(self.text())?;
        self.close(name)?;
        Ok(t)
    }

    /// A `<value>...</value>` element (the opening tag not yet read).
    fn value(&mut self, depth: usize) -> PResult<Value> {
        if depth > MAX_DEPTH {
            return Err(format!("values nested deeper than {MAX_DEPTH}"));
        }
        match self.tag()? {
            Tag::Empty("value") => return Ok(Value::Str(String::new())),
            Tag::Open("value") => {}
            t => return Err(format!("expected <value>, found {t:?}")),
        }
        // A bare string (no type tag) is the text itself, whitespace included.
        let at = self.pos;
        let text = self.text();
        if self.rest().starts_with("</") {
            self.close("value")?;
            return Ok(Value::Str(unescape(text)?));
        }
        if !text.trim().is_empty() {
            self.pos = at;
            return Err("text mixed with a typed value".into());
        }
        let v = match self.tag()? {
            Tag::Empty("string") => Value::Str(String::new()),
            Tag::Empty("array") => Value::Array(vec![]),
            Tag::Empty("struct") => Value::Struct(vec![]),
            Tag::Empty("base64") => Value::Base64(String::new()),
            Tag::Open(t @ ("i4" | "int" | "i8")) => {
                let s = self.text_then_close(t)?;
                Value::Int(
                    s.trim()
                        .parse()
                        .map_err(|_| format!("<{t}> holds {s:?}, not an integer"))?,
                )
            }
            Tag::Open("boolean") => match self.text_then_close("boolean")?.trim() {
                "1" | "true" => Value::Bool(true),
                "0" | "false" => Value::Bool(false),
                s => return Err(format!("<boolean> holds {s:?}")),
            },
            Tag::Open("double") => {
                let s = self.text_then_close("double")?;
                Value::Double(
                    s.trim()
                        .parse()
                        .map_err(|_| format!("<double> holds {s:?}"))?,
                )
            }
            Tag::Open("string") => Value::Str(self.text_then_close("string")?),
            Tag::Open("base64") => Value::Base64(self.text_then_close("base64")?),
            Tag::Open("array") => {
                let mut items = Vec::new();
                match self.tag()? {
                    Tag::Empty("data") => {}
                    Tag::Open("data") => loop {
                        match self.peek()? {
                            Tag::Close("data") => {
                                self.close("data")?;
                                break;
                            }
                            _ => items.push(self.value(depth + 1)?),
                        }
                    },
                    t => return Err(format!("expected <data> in <array>, found {t:?}")),
                }
                self.close("array")?;
                Value::Array(items)
            }
            Tag::Open("struct") => {
                let mut members = Vec::new();
                loop {
                    match self.tag()? {
                        Tag::Close("struct") => break,
                        Tag::Open("member") => {
                            self.open("name")?;
                            let name = self.text_then_close("name")?;
                            let value = self.value(depth + 1)?;
                            self.close("member")?;
                            members.push((name, value));
                        }
                        t => return Err(format!("expected <member> in <struct>, found {t:?}")),
                    }
                }
                Value::Struct(members)
            }
            t => return Err(format!("unknown value type {t:?}")),
        };
        self.close("value")?;
        Ok(v)
    }

    /// `<params>` with any number of `<param><value>..</value></param>` (or `<params/>`).
    fn params(&mut self) -> PResult<Vec<Value>> {
        let mut out = Vec::new();
        match self.tag()? {
            Tag::Empty("params") => return Ok(out),
            Tag::Open("params") => {}
            t => return Err(format!("expected <params>, found {t:?}")),
        }
        loop {
            match self.tag()? {
                Tag::Close("params") => return Ok(out),
                Tag::Open("param") => {
                    out.push(self.value(0)?);
                    self.close("param")?;
                }
                t => return Err(format!("expected <param>, found {t:?}")),
            }
        }
    }
}

/// The element name of a tag's inside (attributes dropped).
fn tag_name(inner: &str) -> &str {
    inner.split_whitespace().next().unwrap_or("")
}

/// Replace XML entity and character references.
pub fn unescape(text: &str) -> PResult<String> {
    if !text.contains('&') {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after.find(';').filter(|&e| e <= 10).ok_or_else(|| {
            format!(
                "bad entity near {:?}",
                rest[i..].chars().take(12).collect::<String>()
            )
        })?;
        let name = &after[..end];
        let c = match name {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) =
                    name.strip_prefix("#x").or_else(|| name.strip_prefix("#X"))
                {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = name.strip_prefix('#') {
                    dec.parse().ok()
                } else {
                    None
                };
                code.and_then(char::from_u32)
                    .ok_or_else(|| format!("unknown entity &{name};"))?
            }
        };
        out.push(c);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A parsed `<methodCall>`: method name and parameters.
pub fn parse_call(doc: &str) -> PResult<(String, Vec<Value>)> {
    let mut p = Parser::new(doc);
    p.open("methodCall")?;
    p.open("methodName")?;
    let name = p.text_then_close("methodName")?.trim().to_string();
    let params = match p.peek()? {
        Tag::Close("methodCall") => vec![],
        _ => p.params()?,
    };
    p.close("methodCall")?;
    Ok((name, params))
}

/// A parsed `<methodResponse>`: its value, or the fault's text as the error.
pub fn parse_response(doc: &str) -> PResult<Value> {
    let mut p = Parser::new(doc);
    p.open("methodResponse")?;
    if p.peek()? == Tag::Open("fault") {
        p.open("fault")?;
        let v = p.value(0)?;
        let text = match &v {
            Value::Struct(m) => m
                .iter()
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            other => format!("{other:?}"),
        };
        return Err(format!("fault: {text}"));
    }
    let mut params = p.params()?;
    p.close("methodResponse")?;
    if params.is_empty() {
        return Err("response without a value".into());
    }
    Ok(params.swap_remove(0))
}

/// A ROS API result `[code, statusMessage, value]`: Ok(value) when code is 1.
pub fn ros_result(v: Value) -> PResult<Value> {
    match v {
        Value::Array(mut items) if items.len() == 3 => {
            let value = items.pop().expect("three items");
            let msg = items.pop().expect("three items");
            match items[0].as_int() {
                Some(1) => Ok(value),
                Some(code) => Err(format!(
                    "code {code}: {}",
                    msg.as_str().unwrap_or("(no message)")
                )),
                None => Err(format!("result code is {:?}, not an int", items[0])),
            }
        }
        other => Err(format!("expected [code, message, value], got {other:?}")),
    }
}

/// A ROS API result for a slave/master answer.
pub fn ros_ok(value: Value) -> Value {
    Value::Array(vec![Value::Int(1), Value::str(""), value])
}

pub fn ros_err(code: i64, msg: &str) -> Value {
    Value::Array(vec![Value::Int(code), Value::str(msg), Value::Int(0)])
}

// ---------------------------------------------------------------------------------------------
// HTTP

/// Why a call failed: the server could not be reached, or it answered something unusable.
#[derive(Debug)]
pub enum CallError {
    Connect(io::Error),
    Protocol(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Connect(e) => write!(f, "{e}"),
            CallError::Protocol(m) => write!(f, "{m}"),
        }
    }
}

/// `http://host:port[/path]` → (host, port, path).
pub fn split_uri(uri: &str) -> Option<(&str, u16, &str)> {
    let rest = uri.strip_prefix("http://")?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = hostport.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    Some((host, port.parse().ok()?, path))
}

/// Call `method` on the XML-RPC server at `uri`, waiting at most `timeout` per step.
pub fn call(
    uri: &str,
    method: &str,
    params: &[Value],
    timeout: Duration,
) -> Result<Value, CallError> {
    let (host, port, path) = split_uri(uri)
        .ok_or_else(|| CallError::Protocol(format!("'{uri}' is not an http://host:port/ URI")))?;
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(CallError::Connect)?
        .next()
        .ok_or_else(|| {
            CallError::Connect(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host} resolves to nothing"),
            ))
        })?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(CallError::Connect)?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(timeout))
        .map_err(CallError::Connect)?;
    s.set_write_timeout(Some(timeout))
        .map_err(CallError::Connect)?;
    let body = method_call(method, params);
    let request = format!("POST {path} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: mwperf\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    s.write_all(request.as_bytes())
        .map_err(CallError::Connect)?;
    let (head, body) =
        read_http(&mut s).map_err(|e| CallError::Protocol(format!("{method} at {uri}: {e}")))?;
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(CallError::Protocol(format!(
            "{method} at {uri}: HTTP status '{status}'"
        )));
    }
    parse_response(&body).map_err(|e| CallError::Protocol(format!("{method} at {uri}: {e}")))
}

/// Read one HTTP message (request or response): (head, body). The body is sized by
/// Content-Length when given, else it runs to the end of the stream.
pub fn read_http(s: &mut impl Read) -> Result<(String, String), String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return Err("HTTP header longer than 64 KiB".into());
        }
        let n = read_some(s, &mut chunk)?;
        if n == 0 {
            return Err(format!(
                "connection closed after {} bytes, before the HTTP header ended",
                buf.len()
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length = head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())
            .flatten()
    });
    let mut body = buf[head_end + 4..].to_vec();
    match length {
        Some(n) if n > MAX_HTTP => return Err(format!("HTTP body of {n} bytes is too large")),
        Some(n) => {
            while body.len() < n {
                let got = read_some(s, &mut chunk)?;
                if got == 0 {
                    return Err(format!(
                        "connection closed after {} of {n} body bytes",
                        body.len()
                    ));
                }
                body.extend_from_slice(&chunk[..got]);
            }
            body.truncate(n);
        }
        None => loop {
            let got = read_some(s, &mut chunk)?;
            if got == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..got]);
            if body.len() > MAX_HTTP {
                return Err("HTTP body too large".into());
            }
        },
    }
    let body = String::from_utf8(body).map_err(|_| "HTTP body is not UTF-8".to_string())?;
    Ok((head, body))
}

fn read_some(s: &mut impl Read, chunk: &mut [u8]) -> Result<usize, String> {
    loop {
        match s.read(chunk) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Answer one HTTP request with an XML document (HTTP/1.0: the connection closes after it).
pub fn write_http_response(s: &mut impl Write, body: &str) -> io::Result<()> {
    let msg = format!("HTTP/1.0 200 OK\r\nServer: mwperf\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    s.write_all(msg.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_its_own_encoding() {
        let v = Value::Array(vec![
            Value::Int(1),
            Value::Int(-7_000_000_000),
            Value::Bool(true),
            Value::str("a <b> & 'c' \"d\""),
            Value::str(""),
            Value::Double(1.5),
            Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])]),
            Value::Struct(vec![("k".into(), Value::Int(3))]),
        ]);
        assert_eq!(parse_response(&method_response(&v)).unwrap(), v);
        let (name, params) =
            parse_call(&method_call("requestTopic", &[Value::str("/n"), v.clone()])).unwrap();
        assert_eq!(name, "requestTopic");
        assert_eq!(params, vec![Value::str("/n"), v]);
    }

    #[test]
    fn reads_xmlrpcpp_style_bare_strings_and_i4() {
        // As roscpp's XmlRpc++ writes a requestTopic call and its answer.
        let call = "<?xml version=\"1.0\"?>\r\n<methodCall><methodName>requestTopic</methodName>\r\n<params><param><value>/relay_1</value></param><param><value>/mwperf/x/ping</value></param><param><value><array><data><value><array><data><value>TCPROS</value></data></array></value></data></array></value></param></params></methodCall>\r\n";
        let (name, p) = parse_call(call).unwrap();
        assert_eq!(name, "requestTopic");
        assert_eq!(p[0], Value::str("/relay_1"));
        assert_eq!(
            p[2],
            Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])])
        );
        let resp = "<?xml version=\"1.0\"?>\r\n<methodResponse><params><param>\r\n\t<value><array><data><value><i4>1</i4></value><value></value><value><array><data><value>TCPROS</value><value>127.0.0.1</value><value><i4>41234</i4></value></data></array></value></data></array></value>\r\n</param></params></methodResponse>\r\n";
        let v = ros_result(parse_response(resp).unwrap()).unwrap();
        assert_eq!(
            v,
            Value::Array(vec![
                Value::str("TCPROS"),
                Value::str("127.0.0.1"),
                Value::Int(41234)
            ])
        );
    }

    #[test]
    fn reads_python_style_with_whitespace_and_entities() {
        let resp = "<?xml version='1.0'?>\n<methodResponse>\n<params>\n<param>\n<value><array><data>\n<value><int>1</int></value>\n<value><string>Registered [/a] as publisher of [/t] &amp; &lt;ok&gt; &#65;&#x42;</string></value>\n<value><array><data>\n</data></array></value>\n</data></array></value>\n</param>\n</params>\n</methodResponse>\n";
        let v = parse_response(resp).unwrap();
        let items = v.as_array().unwrap();
        assert_eq!(
            items[1].as_str().unwrap(),
            "Registered [/a] as publisher of [/t] & <ok> AB"
        );
        assert_eq!(ros_result(v).unwrap(), Value::Array(vec![]));
        assert_eq!(parse_response("<methodResponse><params><param><value><boolean>1</boolean></value></param></params></methodResponse>").unwrap(), Value::Bool(true));
        assert_eq!(parse_response("<methodResponse><params><param><value><string/></value></param></params></methodResponse>").unwrap(), Value::str(""));
        assert_eq!(parse_response("<methodResponse><params><param><value><array><data/></array></value></param></params></methodResponse>").unwrap(), Value::Array(vec![]));
    }

    #[test]
    fn faults_and_ros_codes_are_errors() {
        let e = parse_response(&fault_response(-1, "no such method")).unwrap_err();
        assert!(e.contains("no such method"), "{e}");
        let e = ros_result(Value::Array(vec![
            Value::Int(-1),
            Value::str("bad topic"),
            Value::Int(0),
        ]))
        .unwrap_err();
        assert!(e.contains("bad topic"), "{e}");
        assert!(ros_result(Value::Int(1)).is_err());
    }

    #[test]
    fn malformed_documents_are_errors_not_panics() {
        let deep = "<value><array><data>".repeat(100);
        let mut cases: Vec<String> = vec![
            "".into(),
            "<".into(),
            "<methodResponse>".into(),
            "<methodResponse><params><param><value><i4>x</i4></value></param></params></methodResponse>".into(),
            "<methodResponse><params><param><value><boolean>2</boolean></value></param></params></methodResponse>".into(),
            "<methodResponse><params><param><value>a &bogus; b</value></param></params></methodResponse>".into(),
            "<methodResponse><params><param><value>&#xFFFFFFFF;</value></param></params></methodResponse>".into(),
            "<methodResponse><params><param><value>&amp</value></param></params></methodResponse>".into(),
            "<methodResponse><params><param><value>x<i4>1</i4></value></param></params></methodResponse>".into(),
            "<methodResponse><params></params></methodResponse>".into(),
            "<methodCall><methodName>x</methodName><params><param><value><struct><member><value/></member></struct></value></param></params></methodCall>".into(),
            "<?xml never ends".into(),
            "<!-- never ends".into(),
            format!("<methodResponse><params><param>{deep}"),
            "<methodResponse><params><param><value><i4>99999999999999999999999</i4></value></param></params></methodResponse>".into(),
            "\u{1F600}<methodCall>\u{e9}".into(),
        ];
        // Every prefix of a valid document is malformed too (never a panic on a char boundary).
        let valid = method_call(
            "publisherUpdate",
            &[
                Value::str("/m\u{e9}"),
                Value::Array(vec![Value::str("http://h:1/")]),
            ],
        );
        cases.extend(valid.char_indices().map(|(i, _)| valid[..i].to_string()));
        for c in &cases {
            assert!(parse_response(c).is_err(), "accepted {c:?}");
            let _ = parse_call(c);
        }
    }

    #[test]
    fn http_bodies_by_length_and_to_the_end() {
        let mut with_len: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloEXTRA";
        assert_eq!(read_http(&mut with_len).unwrap().1, "hello");
        let mut to_end: &[u8] = b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\nwhole body";
        assert_eq!(read_http(&mut to_end).unwrap().1, "whole body");
        let mut short: &[u8] = b"HTTP/1.0 200 OK\r\nContent-Length: 50\r\n\r\nabc";
        assert!(read_http(&mut short).is_err());
        let mut huge: &[u8] = b"POST / HTTP/1.0\r\nContent-Length: 999999999999\r\n\r\n";
        assert!(read_http(&mut huge).is_err());
        let mut no_head: &[u8] = b"garbage without end";
        assert!(read_http(&mut no_head).is_err());
    }

    #[test]
    fn uris() {
        assert_eq!(
            split_uri("http://127.0.0.1:11311/"),
            Some(("127.0.0.1", 11311, "/"))
        );
        assert_eq!(split_uri("http://host:1"), Some(("host", 1, "/")));
        assert_eq!(split_uri("http://host/"), None);
        assert_eq!(split_uri("https://host:1/"), None);
        assert_eq!(split_uri("http://:1/"), None);
        assert_eq!(split_uri("http://h:99999/"), None);
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;

    /// Random byte edits of valid documents: parsing may fail, never panic.
    #[test]
    fn mutated_documents_never_panic() {
        let docs = [
            method_call(
                "requestTopic",
                &[
                    Value::str("/a"),
                    Value::str("/t"),
                    Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])]),
                ],
            ),
            method_response(&Value::Array(vec![
                Value::Int(1),
                Value::str("a&b"),
                Value::Array(vec![Value::str("TCPROS"), Value::str("h"), Value::Int(5)]),
            ])),
            fault_response(-1, "x"),
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let doc = &docs[(next() % docs.len() as u64) as usize];
            let mut b = doc.as_bytes().to_vec();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                match next() % 3 {
                    0 => b[i] = (next() & 0xff) as u8,
                    1 => {
                        b.remove(i);
                    }
                    _ => b.insert(i, b"<>&/;#x"[(next() % 7) as usize]),
                }
            }
            let text = String::from_utf8_lossy(&b);
            let _ = parse_call(&text);
            let _ = parse_response(&text);
        }
    }
}
