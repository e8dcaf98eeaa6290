//! Accepting connections within bounds: at most [`MAX_CONNECTIONS`] open at once, each closed when
//! it takes longer than [`HEADER_TIMEOUT`] to send a request's headers (idle keep-alive
//! connections included), and, when the limit is reached, the oldest connection that is not in
//! the middle of a request is closed to make room for the new one.
//!
//! Why evict rather than wait: a client that opens many connections and sends nothing (or a
//! header a byte at a time) would otherwise hold every slot, and each new visitor would wait
//! behind all of them until the timeout freed the slots. With eviction a new connection is served
//! at once as long as any slot is idle; only when every slot is busy with a request is the new
//! connection answered `503` and closed. No route reads a request body, so a body that never
//! arrives holds nothing: the handler answers without it and the connection is then closed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;
use tower_service::Service;

/// Connections open at once: far below the usual 1,024 open files of a process, far above the six
/// a browser opens per site.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a connection may take to send a request's headers, counted from when it is ready for
/// the next request (so an idle keep-alive connection is closed after this long too).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// What the accept loop knows of one open connection.
struct Conn {
    id: u64,
    /// True while a request is being answered: such a connection is never evicted.
    busy: Arc<AtomicBool>,
    abort: AbortHandle,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Conns {
    open: Mutex<VecDeque<Conn>>,
    next_id: AtomicU64,
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Conn>> {
        // A panic while the lock was held leaves a list that is still a list.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes room for one more connection: `false` when every open connection is busy.
    fn make_room(&self) -> bool {
        let mut open = self.lock();
        if open.len() < MAX_CONNECTIONS {
            return true;
        }
        match open.iter().position(|c| !c.busy.load(Ordering::SeqCst)) {
            Some(oldest_idle) => {
                if let Some(conn) = open.remove(oldest_idle) {
                    conn.abort.abort();
                }
                true
            }
            None => false,
        }
    }

    fn remove(&self, id: u64) {
        self.lock().retain(|c| c.id != id);
    }
}

/// Marks a connection busy for as long as it lives (one request).
struct Busy(Arc<AtomicBool>);

impl Busy {
    fn enter(flag: &Arc<AtomicBool>) -> Self {
        flag.store(true, Ordering::SeqCst);
        Self(Arc::clone(flag))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Serves `app` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let conns = Arc::new(Conns::default());
    tokio::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        if !conns.make_room() {
            refuse_busy(stream);
            continue;
        }
        spawn_connection(&conns, stream, app.clone());
    }
}

fn spawn_connection(conns: &Arc<Conns>, stream: TcpStream, app: Router) {
    let id = conns.next_id.fetch_add(1, Ordering::SeqCst);
    let busy = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&busy);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let guard = Busy::enter(&flag);
        let mut app = app.clone();
        async move {
            let response = app.call(request.map(Body::new)).await;
            drop(guard);
            response
        }
    });
    // Registered before the task can finish and remove itself.
    let mut open = conns.lock();
    let task = {
        let conns = Arc::clone(conns);
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            // An error here is the client's (it went away, or sent a bad request).
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
            conns.remove(id);
        })
    };
    open.push_back(Conn {
        id,
        busy,
        abort: task.abort_handle(),
    });
}

/// Every connection is busy with a request: answer 503 at once (best effort: one non-blocking
/// write) and close.
fn refuse_busy(stream: TcpStream) {
    const BODY: &str = "busy: too many connections, retry shortly\n";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nretry-after: 1\r\n{}\r\n{BODY}",
        BODY.len(),
        super::guard::SECURITY_HEADERS
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect::<String>()
    );
    let _ = stream.try_write(response.as_bytes());
}

/// Errors of `accept` that concern one connection are skipped; others (out of file descriptors)
/// get a pause, so the loop does not spin.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        eprintln!("raypick serve: accept failed: {error}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
