//! The connections, on a fixed set of threads whatever the clients do.
//!
//! One thread (mio) owns every connection but those a worker is answering and the event streams. It
//! accepts, reads request heads without blocking (at most [`MAX_HEAD`] bytes each: a head too long is
//! answered 431, one that does not parse 400, one that is not whole within [`HEAD_TIMEOUT`] of its first
//! byte 408, all without a worker), and finishes the answers clients have not taken yet. A whole head
//! goes to a fixed pool of workers, which make the answer and write what the socket takes at once,
//! never waiting for the client: the rest goes back to the connections thread, which writes it as the
//! socket drains. So a client that never reads holds no worker, and another client's request waits
//! for none. A kept-alive connection then waits for its next request here too, holding no worker.
//! Event streams go to the events thread ([`super::events`]).
//!
//! Timers count progress, not activity: a head must be whole within [`HEAD_TIMEOUT`] of its first byte
//! however it dribbles in; an answer of which the client took nothing for [`WRITE_TIMEOUT`] is dropped
//! with its connection; a kept-alive connection with no request for [`IDLE_TIMEOUT`] is closed.
//!
//! Fairness. At most [`MAX_CONNECTIONS`] are open, and a connection beyond them is not refused while
//! one can be given up: it takes the place of, first, a connection that has had its answer and waits
//! for a next request it has not begun (its client loses nothing: an HTTP client opens another) or is
//! closing; then one waiting for a request head (a new connection that sent nothing, or a head under
//! way); then one whose answer is stalled. Within each, it is one of the peer address holding the most
//! connections, then the one waiting longest (for a request, or for the client to take bytes). A
//! limit per address would not do: the dev server's clients are local, so every one of them has the
//! same address, the developer's browser and whatever holds sockets open alike. So sockets held idle,
//! or dribbled into, only ever lose their places to clients with a request to make, and a fresh
//! connection is the last of its kind to go. One more is answered 503 only when every place is held by
//! an answer being made, or an event stream.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};

use super::events;
use super::http::{MAX_HEAD, Method, Outgoing, Parsed, Request, Sent, parse, partial_target};
use super::{LIVE_RELOAD_PATH, Shared, Slot, site};

/// At most this many connections are open (event streams included); one more takes the place of one
/// that can be given up (see the module's documentation), and is answered 503 only if none can.
pub const MAX_CONNECTIONS: usize = 512;
/// A request head must arrive whole within this time of its first byte.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A kept-alive connection with no request for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// A client that takes nothing of its answer for this long is dropped.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After an answer that closes the connection, what the client still sends is read and dropped for
/// this long (or up to [`DRAIN_LIMIT`] bytes): closing with unread bytes would reset the connection,
/// and the client could lose the answer.
const DRAIN_TIME: Duration = Duration::from_secs(1);
const DRAIN_LIMIT: usize = 1 << 20;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

/// A running dev server.
pub struct DevServer {
    pub address: String,
}

/// Binds `bind:port` (port 0 picks a free one) and serves `shared` with `workers` threads, plus one
/// thread for connections and one for event streams.
/// `host` is a name the server answers for besides its own (`--host`; see [`site::Hosts`]).
pub fn start(
    bind: &str,
    port: u16,
    host: Option<&str>,
    shared: Arc<Shared>,
    workers: usize,
) -> io::Result<DevServer> {
    let cannot_listen = |e: io::Error| {
        let hint = if e.kind() == io::ErrorKind::AddrInUse {
            format!("; try --port {}", port.saturating_add(1))
        } else {
            String::new()
        };
        io::Error::new(
            e.kind(),
            format!("cannot listen on {bind}:{port}: {e}{hint}"),
        )
    };
    let listener = TcpListener::bind((bind, port)).map_err(cannot_listen)?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let address = local.to_string();
    let hosts = Arc::new(site::Hosts::new(local, host));
    let poll = Poll::new()?;
    let mut listener = mio::net::TcpListener::from_std(listener);
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let back = Arc::new(Back {
        returned: Mutex::default(),
        waker: Waker::new(poll.registry(), WAKER)?,
    });
    let (jobs, queue) = channel();
    let queue = Arc::new(Mutex::new(queue));
    for i in 0..workers.max(1) {
        let (queue, shared, back) = (queue.clone(), shared.clone(), back.clone());
        let own = hosts.clone();
        std::thread::Builder::new()
            .name(format!("serve-worker-{i}"))
            .spawn(move || work(&queue, &shared, &back, &own))?;
    }
    let connections = Connections {
        poll,
        listener,
        conns: HashMap::new(),
        next: 2,
        jobs,
        back,
        count: Arc::new(AtomicUsize::new(0)),
    };
    let events_shared = shared.clone();
    std::thread::Builder::new()
        .name("serve-events".into())
        .spawn(move || events::run(events_shared))?;
    std::thread::Builder::new()
        .name("serve-connections".into())
        .spawn(move || connections.run())?;
    Ok(DevServer { address })
}

/// A whole request for a worker, with what followed its head.
struct Job {
    socket: TcpStream,
    peer: IpAddr,
    request: Request,
    rest: Vec<u8>,
    slot: Slot,
}

/// A connection a worker gives back, and what is to become of it.
struct Returned {
    socket: TcpStream,
    peer: IpAddr,
    /// What the client sent after the requests answered so far.
    rest: Vec<u8>,
    phase: Phase,
    slot: Slot,
}

/// The way back from the workers to the connections thread.
struct Back {
    returned: Mutex<Vec<Returned>>,
    waker: Waker,
}

impl Back {
    fn give(&self, returned: Returned) {
        self.returned.lock().expect("returned lock").push(returned);
        let _ = self.waker.wake();
    }
}

/// What a connection of the connections thread is doing.
enum Phase {
    /// Reading a request head (none begun while the buffer is empty).
    Reading,
    /// Writing the rest of an answer, then going on as told.
    Writing(Outgoing, Then),
    /// Answered and closing: the bytes drained so far.
    Draining(usize),
}

impl Phase {
    /// What the socket is watched for.
    fn interest(&self) -> Interest {
        match self {
            Phase::Writing(..) => Interest::WRITABLE,
            Phase::Reading | Phase::Draining(_) => Interest::READABLE,
        }
    }
}

/// What follows an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// The next request.
    Read,
    /// The connection is closed (drained first).
    Close,
}

/// A connection in the connections thread.
struct Conn {
    socket: TcpStream,
    peer: IpAddr,
    phase: Phase,
    /// What was read of the next request(s); while an answer is written, the requests that followed
    /// its own.
    buf: Vec<u8>,
    /// When the phase's timer runs out.
    deadline: Instant,
    /// Since when it has waited: for a request, or for the client to take bytes of its answer. Of two
    /// connections that can be given up, the one waiting longer goes first.
    since: Instant,
    /// It has had an answer (a kept-alive connection).
    answered: bool,
    slot: Slot,
}

/// Which connections give their places up first (the lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Standing {
    /// Answered, and waiting for a request it has not begun, or closing.
    Spare,
    /// Waiting for a request head: new, or a head under way.
    Waiting,
    /// Writing an answer the client has not taken.
    Writing,
}

impl Conn {
    fn standing(&self) -> Standing {
        match self.phase {
            Phase::Draining(_) => Standing::Spare,
            Phase::Reading if self.answered && self.buf.is_empty() => Standing::Spare,
            Phase::Reading => Standing::Waiting,
            Phase::Writing(..) => Standing::Writing,
        }
    }

    fn interest(&self) -> Interest {
        self.phase.interest()
    }

    /// Enters `phase` now, with its timer.
    fn enter(&mut self, phase: Phase, now: Instant) {
        self.deadline = now
            + match (&phase, self.buf.is_empty()) {
                (Phase::Reading, true) => IDLE_TIMEOUT,
                (Phase::Reading, false) => HEAD_TIMEOUT,
                (Phase::Writing(..), _) => WRITE_TIMEOUT,
                (Phase::Draining(_), _) => DRAIN_TIME,
            };
        self.since = now;
        self.phase = phase;
    }
}

/// The connection to give up for a new one, among `(id, standing, peer, waiting since)`: the lowest
/// standing; within it, one of the peer holding the most of them; then the one waiting longest.
fn victim<T: Copy>(candidates: &[(T, Standing, IpAddr, Instant)]) -> Option<T> {
    let mut held: HashMap<IpAddr, usize> = HashMap::new();
    for (_, _, peer, _) in candidates {
        *held.entry(*peer).or_default() += 1;
    }
    candidates
        .iter()
        .min_by_key(|(_, standing, peer, since)| (*standing, Reverse(held[peer]), *since))
        .map(|(id, ..)| *id)
}

/// What reading or writing a connection came to.
enum Step {
    Wait,
    Close,
    Dispatch(Request),
    Refuse(u16, &'static str),
    /// The answer is all out.
    Written,
}

struct Connections {
    poll: Poll,
    listener: mio::net::TcpListener,
    conns: HashMap<Token, Conn>,
    next: usize,
    jobs: Sender<Job>,
    back: Arc<Back>,
    count: Arc<AtomicUsize>,
}

impl Connections {
    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        loop {
            let timeout = self
                .conns
                .values()
                .map(|c| c.deadline)
                .min()
                .map(|d| d.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                eprintln!("serve: stopped accepting connections: {e}");
                return;
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER => self.take_back(),
                    token => self.ready(token),
                }
            }
            self.expire(Instant::now());
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut socket, peer)) => {
                    // Without TCP_NODELAY an answer's last segment can wait for the client's delayed
                    // ACK (40 ms on Linux) when the answer goes out in more than one write.
                    let _ = socket.set_nodelay(true);
                    let mut slot = Slot::take(&self.count, MAX_CONNECTIONS);
                    if slot.is_none() && self.give_up_one() {
                        slot = Slot::take(&self.count, MAX_CONNECTIONS);
                    }
                    match slot {
                        Some(slot) => {
                            self.insert(socket, peer.ip(), Vec::new(), Phase::Reading, false, slot)
                        }
                        None => {
                            let mut busy = site::error(503, None, "too many connections");
                            busy.close = true;
                            let _ = socket.write(&busy.to_bytes());
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    // Out of file descriptors, most likely: the next connection tries again.
                    eprintln!("serve: cannot accept a connection: {e}");
                    return;
                }
            }
        }
    }

    /// Closes the connection that gives its place up first ([`victim`]); `false` if there is none here.
    fn give_up_one(&mut self) -> bool {
        let candidates: Vec<_> = self
            .conns
            .iter()
            .map(|(token, c)| (*token, c.standing(), c.peer, c.since))
            .collect();
        match victim(&candidates) {
            Some(token) => {
                self.close(token);
                true
            }
            None => false,
        }
    }

    fn insert(
        &mut self,
        mut socket: TcpStream,
        peer: IpAddr,
        buf: Vec<u8>,
        phase: Phase,
        answered: bool,
        slot: Slot,
    ) {
        let token = Token(self.next);
        // Tokens 0 and 1 are the listener's and the waker's.
        self.next = self.next.checked_add(1).unwrap_or(2);
        if self
            .poll
            .registry()
            .register(&mut socket, token, phase.interest())
            .is_err()
        {
            return;
        }
        let now = Instant::now();
        let mut conn = Conn {
            socket,
            peer,
            phase: Phase::Reading,
            buf,
            deadline: now,
            since: now,
            answered,
            slot,
        };
        conn.enter(phase, now);
        self.conns.insert(token, conn);
        // What arrived before registration, or a head already in `buf`, is read now; an answer is
        // written as far as the socket takes it.
        self.ready(token);
    }

    fn take_back(&mut self) {
        let returned = std::mem::take(&mut *self.back.returned.lock().expect("returned lock"));
        for r in returned {
            self.insert(r.socket, r.peer, r.rest, r.phase, true, r.slot);
        }
    }

    /// Moves a connection to `phase`, watching its socket for what that phase waits for, and goes on
    /// with it.
    fn switch(&mut self, token: Token, phase: Phase) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        conn.enter(phase, Instant::now());
        let interest = conn.interest();
        if self
            .poll
            .registry()
            .reregister(&mut conn.socket, token, interest)
            .is_err()
        {
            return self.close(token);
        }
        self.ready(token);
    }

    fn ready(&mut self, token: Token) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let step = match conn.phase {
            Phase::Reading => read_head(conn),
            Phase::Writing(..) => write_rest(conn),
            Phase::Draining(_) => drain(conn),
        };
        match step {
            Step::Wait => {}
            Step::Close => self.close(token),
            Step::Dispatch(request) => self.dispatch(token, request),
            Step::Refuse(status, message) => self.refuse(token, status, message),
            Step::Written => {
                let then = match &conn.phase {
                    Phase::Writing(_, then) => *then,
                    _ => Then::Close,
                };
                match then {
                    Then::Read => self.switch(token, Phase::Reading),
                    Then::Close => {
                        let _ = conn.socket.shutdown(Shutdown::Write);
                        conn.buf = Vec::new();
                        self.switch(token, Phase::Draining(0));
                    }
                }
            }
        }
    }

    fn dispatch(&mut self, token: Token, request: Request) {
        let Some(mut conn) = self.conns.remove(&token) else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut conn.socket);
        let rest = conn.buf[request.len..].to_vec();
        let _ = self.jobs.send(Job {
            socket: conn.socket,
            peer: conn.peer,
            request,
            rest,
            slot: conn.slot,
        });
    }

    /// Answers an unreadable head (400, 408, 431) here, then drains and closes the connection.
    fn refuse(&mut self, token: Token, status: u16, message: &str) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let mut response = site::error(status, partial_target(&conn.buf), message);
        response.close = true;
        conn.buf = Vec::new();
        self.switch(token, Phase::Writing(response.into_outgoing(), Then::Close));
    }

    fn close(&mut self, token: Token) {
        if let Some(mut conn) = self.conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut conn.socket);
        }
    }

    fn expire(&mut self, now: Instant) {
        let due: Vec<(Token, bool)> = self
            .conns
            .iter()
            .filter(|(_, c)| c.deadline <= now)
            .map(|(t, c)| (*t, matches!(c.phase, Phase::Reading) && !c.buf.is_empty()))
            .collect();
        for (token, started) in due {
            if started {
                self.refuse(token, 408, "the request head did not arrive in time");
            } else {
                // Idle, an answer the client took nothing of, or drained long enough.
                self.close(token);
            }
        }
    }
}

/// Reads until a head is whole, the buffer is full, or nothing more is there yet.
fn read_head(conn: &mut Conn) -> Step {
    let mut scratch = [0u8; 4096];
    loop {
        if !conn.buf.is_empty() {
            match parse(&conn.buf) {
                Parsed::Complete(request) => return Step::Dispatch(request),
                Parsed::Partial => {}
                Parsed::TooLarge => return Step::Refuse(431, "the request head is over 16 KiB"),
                Parsed::Invalid(why) => return Step::Refuse(400, why),
            }
        }
        // `Partial` means under MAX_HEAD: there is room.
        let room = (MAX_HEAD - conn.buf.len()).min(scratch.len());
        match conn.socket.read(&mut scratch[..room]) {
            Ok(0) => return Step::Close,
            Ok(n) => {
                if conn.buf.is_empty() {
                    // The head's own timer starts at its first byte; later bytes do not extend it.
                    conn.deadline = Instant::now() + HEAD_TIMEOUT;
                }
                conn.buf.extend_from_slice(&scratch[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Step::Close,
        }
    }
}

/// Writes what the socket takes of the answer being written; each time the client takes some, its
/// timer starts again.
fn write_rest(conn: &mut Conn) -> Step {
    let Phase::Writing(out, _) = &mut conn.phase else {
        return Step::Wait;
    };
    match out.write_to(&mut conn.socket) {
        Ok(Sent::All) => Step::Written,
        Ok(Sent::Blocked { progressed }) => {
            if progressed {
                let now = Instant::now();
                conn.deadline = now + WRITE_TIMEOUT;
                conn.since = now;
            }
            Step::Wait
        }
        Err(_) => Step::Close,
    }
}

/// Reads and drops what a closing connection's client still sends.
fn drain(conn: &mut Conn) -> Step {
    let Phase::Draining(drained) = &mut conn.phase else {
        return Step::Wait;
    };
    let mut scratch = [0u8; 8192];
    loop {
        match conn.socket.read(&mut scratch) {
            Ok(0) => return Step::Close,
            Ok(n) => {
                *drained += n;
                if *drained > DRAIN_LIMIT {
                    return Step::Close;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Step::Close,
        }
    }
}

fn work(queue: &Mutex<Receiver<Job>>, shared: &Arc<Shared>, back: &Back, own: &site::Hosts) {
    loop {
        let job = queue.lock().expect("queue lock").recv();
        match job {
            Ok(job) => serve(job, shared, back, own),
            Err(_) => return,
        }
    }
}

/// Answers a connection's request, and the further requests it already sent, writing only what the
/// socket takes at once: an answer the client has not taken goes back to the connections thread.
/// `own` names the hosts the server answers for.
fn serve(job: Job, shared: &Arc<Shared>, back: &Back, own: &site::Hosts) {
    let Job {
        mut socket,
        peer,
        mut request,
        mut rest,
        slot,
    } = job;
    loop {
        let response = if !own.allows_request(&request) {
            // Another name pointed at this machine (DNS rebinding) reads nothing of the site.
            let mut refused = site::error(421, None, &own.refusal());
            refused.close = true;
            refused
        } else if request.path() == LIVE_RELOAD_PATH && !site::same_origin(&request, own) {
            let mut refused = site::error(
                403,
                None,
                "the live-reload stream is for this server's own pages",
            );
            refused.cors = false;
            refused.close = true;
            refused
        } else if request.method == Method::Get
            && request.path() == LIVE_RELOAD_PATH
            && !request.has_body
        {
            return events::join(shared, socket.into(), slot);
        } else {
            site::respond(&request, &shared.current())
        };
        let then = if response.close {
            Then::Close
        } else {
            Then::Read
        };
        let mut out = response.into_outgoing();
        match out.write_to(&mut socket) {
            Ok(Sent::All) => {}
            Ok(Sent::Blocked { .. }) => {
                return back.give(Returned {
                    socket,
                    peer,
                    rest: if then == Then::Read { rest } else { Vec::new() },
                    phase: Phase::Writing(out, then),
                    slot,
                });
            }
            // The client is gone: so is the connection, and its place.
            Err(_) => return,
        }
        if then == Then::Close {
            let _ = socket.shutdown(Shutdown::Write);
            return back.give(Returned {
                socket,
                peer,
                rest: Vec::new(),
                phase: Phase::Draining(0),
                slot,
            });
        }
        match parse(&rest) {
            Parsed::Complete(next) => {
                rest.drain(..next.len);
                request = next;
            }
            _ => {
                return back.give(Returned {
                    socket,
                    peer,
                    rest,
                    phase: Phase::Reading,
                    slot,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_given_up_is_spare_then_waiting_then_writing_the_biggest_holder_first_then_the_oldest()
     {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        assert_eq!(victim::<u8>(&[]), None);
        // A spare connection goes before any waiting or writing one, however old those are.
        let mut all = vec![
            (1, Standing::Writing, a, at(0)),
            (2, Standing::Waiting, a, at(1)),
            (3, Standing::Spare, a, at(5)),
            (4, Standing::Spare, a, at(3)),
        ];
        assert_eq!(victim(&all), Some(4));
        all.retain(|c| c.1 != Standing::Spare);
        assert_eq!(victim(&all), Some(2));
        // A new connection, which has sent nothing yet, is the last of the waiting to go.
        all.push((5, Standing::Waiting, a, at(9)));
        assert_eq!(victim(&all), Some(2));
        // Within a standing, the address holding the most connections gives one up first, however new.
        all.extend([
            (6, Standing::Waiting, b, at(7)),
            (7, Standing::Waiting, b, at(8)),
            (8, Standing::Writing, b, at(8)),
            (9, Standing::Writing, b, at(9)),
        ]);
        assert_eq!(victim(&all), Some(6));
        all.retain(|c| c.1 != Standing::Waiting);
        assert_eq!(victim(&all), Some(8));
    }
}
