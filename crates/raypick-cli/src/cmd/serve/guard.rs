//! What every request passes through: the `Host` check against DNS rebinding, and the headers
//! that keep the page from being framed, sniffed or made to load anything from elsewhere.
//!
//! DNS rebinding: a page on another site can point its own name at 127.0.0.1 and then talk to a
//! local server as if it were same-origin. The browser still sends that name in `Host`, so a
//! server bound to loopback answers only requests whose `Host` is its own address or `localhost`
//! (with its port, if one is given), and refuses the others with `421 Misdirected Request`. When
//! `--host` binds a non-loopback address the server is meant to be reached by other names, and
//! every `Host` is accepted.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The Content-Security-Policy of every response: the page's own script, style sheet, images and
/// requests (`'self'`; it has no inline script or style), the compilation of its own WebAssembly
/// module (`'wasm-unsafe-eval'`, which allows `WebAssembly.instantiate` and nothing of `eval`),
/// nothing else, and never in a frame.
pub const CSP: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Headers set on every response.
pub const SECURITY_HEADERS: [(&str, &str); 4] = [
    ("x-content-type-options", "nosniff"),
    ("content-security-policy", CSP),
    // For browsers that predate CSP's frame-ancestors.
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
];

/// Which `Host` headers are this server's.
#[derive(Clone, Debug)]
pub enum HostCheck {
    /// Bound to loopback: only these names (lower case, without the port) and this port.
    Names {
        /// `localhost` and the bound address as a URL writes it (`127.0.0.1`, `[::1]`).
        names: Vec<String>,
        /// The bound port.
        port: u16,
    },
    /// Bound to a wider address with `--host`: any name.
    Any,
}

impl HostCheck {
    /// The check for a server listening on `local`.
    pub fn for_address(local: SocketAddr) -> Self {
        if !local.ip().is_loopback() {
            return Self::Any;
        }
        let ip = match local {
            SocketAddr::V4(v4) => v4.ip().to_string(),
            SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        };
        Self::Names {
            names: vec!["localhost".to_owned(), ip],
            port: local.port(),
        }
    }

    /// Whether a request with this `Host` value is for this server.
    pub fn allows(&self, host: &str) -> bool {
        let Self::Names { names, port } = self else {
            return true;
        };
        let host = host.trim().to_ascii_lowercase();
        // `[v6]:port`, `name:port`, or either without the port.
        let (name, given_port) = match host.rsplit_once(':') {
            Some((name, p)) if !p.contains(']') && (name.ends_with(']') || !name.contains(':')) => {
                (name, Some(p))
            }
            _ => (host.as_str(), None),
        };
        let name = name.strip_suffix('.').unwrap_or(name);
        let port_ok = given_port.is_none_or(|p| p.parse::<u16>() == Ok(*port));
        port_ok && names.iter().any(|n| n == name)
    }
}

/// The middleware: refuses requests for other hosts, and sets [`SECURITY_HEADERS`] on every
/// response (refusals and 404s included).
pub async fn guard(State(check): State<Arc<HostCheck>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    let mut response = match host {
        None => (StatusCode::BAD_REQUEST, "no Host header\n").into_response(),
        Some(host) if !check.allows(&host) => (
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "Host {:?} is not this server; it answers to localhost and its own address \
                 (start raypick serve with --host to serve other names)\n",
                host.escape_debug().to_string()
            ),
        )
            .into_response(),
        Some(_) => next.run(request).await,
    };
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_servers_answer_only_to_their_own_names() {
        let v4 = HostCheck::for_address("127.0.0.1:7878".parse().unwrap());
        for good in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST",
            "localhost.:7878",
            "127.0.0.1",
        ] {
            assert!(v4.allows(good), "{good}");
        }
        for bad in [
            "evil.example:7878",
            "127.0.0.1:80",
            "localhost:7879",
            "127.0.0.1.evil.example:7878",
            "localhost@evil.example",
            "[::1]:7878",
            "",
        ] {
            assert!(!v4.allows(bad), "{bad}");
        }
        let v6 = HostCheck::for_address("[::1]:9000".parse().unwrap());
        assert!(v6.allows("[::1]:9000") && v6.allows("localhost:9000"));
        assert!(!v6.allows("[::2]:9000") && !v6.allows("127.0.0.1:9000"));
        let wide = HostCheck::for_address("0.0.0.0:7878".parse().unwrap());
        assert!(wide.allows("anything.example"));
    }
}
