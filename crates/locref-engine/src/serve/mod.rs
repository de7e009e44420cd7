//! The dev server: serves the last good build from memory over HTTP/1.1, with live reload.
//!
//! One thread owns the salsa database and rebuilds; it publishes each good build as an immutable
//! [`Snapshot`] swapped in whole, so a request never sees half of one build and half of another. Request
//! threads only read the current snapshot. The server is bounded whatever clients do: a fixed set of
//! threads ([`server`]: one for connections, a pool of workers; [`events`]: one for every live-reload
//! stream), request heads of at most [`http::MAX_HEAD`] bytes, answers that share the snapshot's bytes
//! (a slow client's answer is no copy), and capped connections and streams.
//!
//! It is fair to its clients too: no worker ever waits for a client (what a socket does not take at once
//! is finished by the connections thread as it drains), timers count a client's progress (a head whole
//! in time, an answer taken), and at the caps a newcomer takes the place of an idle, slow or stalled
//! connection (or stream) rather than being refused, so sockets held open by one client cannot starve
//! another ([`server`] and [`events`] say in what order).
//!
//! The live-reload script is injected only into the HTML this server sends, never into built files.
//! The live-reload stream carries the diagnostics of edits not yet published, so it is for this
//! server's own pages only: a request from another origin is refused 403, and its answers, unlike the
//! site's, carry no `Access-Control-Allow-Origin`.

mod events;
mod http;
mod server;
mod site;

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

pub use events::{MAX_STREAMS, STALL};
pub use server::{DevServer, HEAD_TIMEOUT, MAX_CONNECTIONS, WRITE_TIMEOUT, start};
pub use site::{ApiError, RELOAD_SCRIPT_PATH};

use crate::publish::Stamped;
use crate::session::{Outcome, Session};
use crate::watch::print_report;

pub use crate::site::DetailRoute;

/// An immutable build as served.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Increases with every published build (good or failed).
    pub generation: u64,
    pub files: HashMap<String, Stamped>,
    pub detail_routes: Vec<DetailRoute>,
    /// Headers sent with every page, as `_headers` gives them to a static host (the CSP).
    pub page_headers: Vec<(String, String)>,
    /// The diagnostics of the last build when it failed (shown as an overlay); the files are then those of
    /// the last good build.
    pub error: Option<String>,
}

/// The state shared by the builder, the request threads and the events thread.
#[derive(Default)]
pub struct Shared {
    state: Mutex<State>,
    /// Signalled on a publish and on a stream's arrival (what the events thread waits for).
    changed: Condvar,
}

#[derive(Default)]
struct State {
    snapshot: Arc<Snapshot>,
    /// Connections that asked for the event stream, not yet taken by the events thread.
    arrivals: Vec<events::Arrival>,
}

/// One of a bounded number of places (connections), given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// A place if fewer than `max` are taken.
    fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(count.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Shared {
    pub fn new() -> Arc<Shared> {
        Arc::new(Shared::default())
    }

    pub fn current(&self) -> Arc<Snapshot> {
        self.state.lock().expect("state lock").snapshot.clone()
    }

    /// Publishes a good build (sharing the publisher's bytes, not copying them); open pages are told,
    /// and reload when their own page changed.
    pub fn publish<'a>(
        &self,
        site: impl IntoIterator<Item = &'a Stamped>,
        detail_routes: Vec<DetailRoute>,
        page_headers: Vec<(String, String)>,
    ) {
        let files = site
            .into_iter()
            .map(|f| (f.path.clone(), f.clone()))
            .collect();
        let mut state = self.state.lock().expect("state lock");
        let generation = state.snapshot.generation + 1;
        state.snapshot = Arc::new(Snapshot {
            generation,
            files,
            detail_routes,
            page_headers,
            error: None,
        });
        self.changed.notify_all();
    }

    /// Publishes a failed build: the files stay those of the last good build; the error is shown.
    pub(crate) fn publish_error(&self, diagnostics: String) {
        let mut state = self.state.lock().expect("state lock");
        let previous = state.snapshot.clone();
        state.snapshot = Arc::new(Snapshot {
            generation: previous.generation + 1,
            files: previous.files.clone(),
            detail_routes: previous.detail_routes.clone(),
            page_headers: previous.page_headers.clone(),
            error: Some(diagnostics),
        });
        self.changed.notify_all();
    }
}

/// The path of the live-reload event stream.
pub(crate) const LIVE_RELOAD_PATH: &str = "/__livereload";

/// Runs `locref serve`: binds the server, then watches the project and publishes every build from memory
/// (with the server's own address as base URL; nothing is written to disk).
pub fn run(
    root: &Path,
    bind: &str,
    port: u16,
    host: Option<&str>,
    site: &'static crate::site::Site,
) -> io::Result<()> {
    let root = root.canonicalize()?;
    let shared = Shared::new();
    let server = start(bind, port, host, shared.clone(), 4)?;
    let base = format!("http://{}", server.address);
    let mut announced = false;
    crate::watch::run_with(
        &root,
        |root| {
            let mut session = Session::in_memory(root, site)?;
            session.project.set_base_url(Some(base.clone()));
            Ok(session)
        },
        |session, report| {
            print_report(report);
            match &report.outcome {
                Outcome::Built(_) => {
                    let db = &session.project.db;
                    shared.publish(
                        session.site().values(),
                        (site.detail_routes)(db),
                        (site.page_headers)(db),
                    )
                }
                Outcome::Invalid(diagnostics) => {
                    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
                    shared.publish_error(text.join("\n"));
                }
                Outcome::IoError(message) | Outcome::Internal(message) => {
                    shared.publish_error(message.clone())
                }
                Outcome::Unchanged => {}
            }
            if !announced {
                announced = true;
                println!("serving {base}/ (live reload on)");
            }
        },
    )
}
