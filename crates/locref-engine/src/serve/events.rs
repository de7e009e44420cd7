//! Live reload: the `build` event stream (Server-Sent Events), every open stream written by one thread.
//!
//! A stream costs its socket and a pointer to the event being sent (one copy per build, shared by all
//! streams), never a thread. Sockets are non-blocking: a client that stops reading keeps only its place
//! in the event it was sent, and is dropped once its socket has taken nothing for [`STALL`]. A client
//! that closed its end is noticed within a [`TICK`] (its socket reads end-of-file) and its place given
//! back.
//!
//! A client that never reads can still look alive for a long time: the events are small and the
//! kernel's buffers large, so its writes go on succeeding. So at most [`MAX_STREAMS`] are open, and a
//! stream beyond them takes the place of another: one whose writes are stalled, else the oldest. A
//! browser tab whose stream is closed opens another after a second (`retry: 1000`), and the first
//! event of every stream carries the state of the current build, so the tab misses no reload; a client
//! that never reads loses its place to the next stream that comes.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Shared, Slot, Snapshot};

/// At most this many streams are open; one more takes the place of a stalled or the oldest one. A
/// browser holds at most six connections to a host, so this is many tabs of many browsers.
pub const MAX_STREAMS: usize = 64;
/// How often open streams are checked for a closed client, or a stalled write retried.
const TICK: Duration = Duration::from_secs(1);
/// A comment sent this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// A stream whose socket took nothing for this long (its buffer full) is dropped.
pub const STALL: Duration = Duration::from_secs(10);

/// No `Access-Control-Allow-Origin`: the stream carries the diagnostics of unpublished edits, for the
/// pages of this server only.
const HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
    Transfer-Encoding: chunked\r\n\r\n";

/// A connection that asked for the stream, on its way to the events thread.
pub(crate) struct Arrival {
    socket: TcpStream,
    /// The connection's place.
    slot: Slot,
}

/// Hands `socket` (whose request asked for the stream) to the events thread.
pub(super) fn join(shared: &Shared, socket: TcpStream, slot: Slot) {
    if socket.set_nonblocking(true).is_err() {
        return;
    }
    let mut state = shared.state.lock().expect("state lock");
    state.arrivals.push(Arrival { socket, slot });
    shared.changed.notify_all();
}

/// One SSE message as one HTTP chunk, so a client sees it as soon as it is written.
fn chunk(message: &str) -> Arc<[u8]> {
    format!("{:x}\r\n{message}\r\n", message.len())
        .into_bytes()
        .into()
}

/// The `build` event: the generation, a tag per HTML page (so a tab reloads only when its page changed)
/// and the error of a failed build. A page's tag covers its own bytes and the assets every page loads
/// (`/assets/`), so an edit of the stylesheet reloads the open tabs too.
pub(crate) fn build_event(snapshot: &Snapshot) -> String {
    let mut assets: Vec<(&String, &str)> = snapshot
        .files
        .iter()
        .filter(|(path, _)| path.starts_with("/assets/"))
        .map(|(path, file)| (path, file.etag.as_str()))
        .collect();
    assets.sort();
    let assets = blake3::hash(format!("{assets:?}").as_bytes()).to_hex();
    let pages: serde_json::Map<String, serde_json::Value> = snapshot
        .files
        .iter()
        .filter(|(path, _)| path.ends_with(".html"))
        .flat_map(|(path, file)| {
            let tag = serde_json::Value::String(format!("{}-{}", file.etag, &assets[..16]));
            let folder = path
                .strip_suffix("index.html")
                .map(|dir| (dir.to_string(), tag.clone()));
            std::iter::once((path.clone(), tag)).chain(folder)
        })
        .collect();
    let data = serde_json::json!({"generation": snapshot.generation, "pages": pages, "error": snapshot.error});
    format!("event: build\ndata: {data}\n\n")
}

struct Stream {
    socket: TcpStream,
    /// What is being written, and how much of it is out.
    out: Option<(Arc<[u8]>, usize)>,
    /// A newer build than the one being written is to follow.
    behind: bool,
    /// Since when the socket has taken nothing of what is due (its buffer full).
    stalled: Option<Instant>,
    _slot: Slot,
}

impl Stream {
    fn new(arrival: Arrival, snapshot: &Snapshot) -> Stream {
        let first = chunk(&format!("retry: 1000\n{}", build_event(snapshot)));
        Stream {
            socket: arrival.socket,
            out: Some(([HEAD, &first].concat().into(), 0)),
            behind: false,
            stalled: None,
            _slot: arrival.slot,
        }
    }

    /// Writes what is due; `false` when the stream is over (closed, failed or stalled).
    fn pump(&mut self, event: &Arc<[u8]>, keep_alive: Option<&Arc<[u8]>>, now: Instant) -> bool {
        if self.out.is_none() {
            if self.behind {
                self.out = Some((event.clone(), 0));
                self.behind = false;
            } else if let Some(comment) = keep_alive {
                self.out = Some((comment.clone(), 0));
            }
        }
        while let Some((bytes, at)) = &mut self.out {
            match self.socket.write(&bytes[*at..]) {
                Ok(0) => return false,
                Ok(n) => {
                    *at += n;
                    self.stalled = None;
                    if *at == bytes.len() {
                        self.out = self.behind.then(|| (event.clone(), 0));
                        self.behind = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let since = *self.stalled.get_or_insert(now);
                    return now.duration_since(since) < STALL && self.open();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.open()
    }

    /// Whether the client still has its end open. It sends nothing after its request; what it does send
    /// is dropped.
    fn open(&mut self) -> bool {
        let mut scratch = [0u8; 512];
        match self.socket.read(&mut scratch) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) => matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ),
        }
    }
}

/// The events thread: waits for a build, an arriving stream or a tick, then writes what is due.
pub(super) fn run(shared: Arc<Shared>) {
    let keep_alive_comment = chunk(": keep-alive\n\n");
    let mut streams: Vec<Stream> = Vec::new();
    let mut generation = None;
    let mut event = chunk("");
    let mut keep_alive_at = Instant::now() + KEEP_ALIVE;
    loop {
        let (snapshot, arrivals) = {
            let state = shared.state.lock().expect("state lock");
            // With no stream open, only a build or an arrival is worth waking for.
            let wait = if streams.is_empty() {
                Duration::from_secs(3600)
            } else {
                TICK
            };
            let (mut state, _) = shared
                .changed
                .wait_timeout_while(state, wait, |s| {
                    Some(s.snapshot.generation) == generation && s.arrivals.is_empty()
                })
                .expect("state lock");
            (state.snapshot.clone(), std::mem::take(&mut state.arrivals))
        };
        let now = Instant::now();
        if Some(snapshot.generation) != generation {
            generation = Some(snapshot.generation);
            event = chunk(&build_event(&snapshot));
            for stream in &mut streams {
                stream.behind = true;
            }
        }
        streams.extend(arrivals.into_iter().map(|a| Stream::new(a, &snapshot)));
        let keep_alive = (now >= keep_alive_at).then(|| {
            keep_alive_at = now + KEEP_ALIVE;
            &keep_alive_comment
        });
        // Newcomers get their head and first event before any place is taken back, so a tab whose
        // stream is closed at once still reconnects as an event stream says.
        streams.retain_mut(|stream| stream.pump(&event, keep_alive, now));
        while streams.len() > MAX_STREAMS {
            streams.remove(victim(&streams));
        }
    }
}

/// The stream that gives its place to a newer one: the one stalled longest, else the oldest (streams
/// are kept in the order they came).
fn victim(streams: &[Stream]) -> usize {
    streams
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.stalled.map(|since| (since, i)))
        .min()
        .map_or(0, |(_, i)| i)
}
