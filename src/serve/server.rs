//! The connections, on a fixed set of threads whatever the clients do.
//!
//! One thread (mio) accepts connections and reads request heads without blocking, at most
//! [`MAX_HEAD`] bytes each: a head too long is answered 431, one that does not parse 400, one that does
//! not finish within [`HEAD_TIMEOUT`] 408, all without a worker. A whole head goes to a fixed pool of
//! workers, which write the answer; a kept-alive connection then comes back to wait for its next
//! request here, holding no worker. Event streams go to the events thread ([`super::events`]).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token, Waker};

use super::events::{self, MAX_STREAMS};
use super::http::{MAX_HEAD, Method, Parsed, Request, Response, parse, partial_target};
use super::{LIVE_RELOAD_PATH, Shared, Slot, site};

/// At most this many connections are open (event streams included); one more is answered 503.
pub const MAX_CONNECTIONS: usize = 512;
/// A request head must arrive whole within this time of its first byte.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A kept-alive connection with no request for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// An answer must be taken by the client within this time.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After an answer that closes the connection, what the client still sends is read and dropped for
/// this long (or up to [`DRAIN_LIMIT`] bytes): closing with unread bytes would reset the connection,
/// and the client could lose the answer.
const DRAIN_TIME: Duration = Duration::from_secs(1);
const DRAIN_LIMIT: usize = 1 << 20;
/// Answers up to this size go out in one write (a head and a body written apart are two segments).
const ONE_WRITE: usize = 16 * 1024;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

/// A running dev server.
pub struct DevServer {
    pub address: String,
}

/// Binds `bind:port` (port 0 picks a free one) and serves `shared` with `workers` threads, plus one
/// thread for connections and one for event streams.
pub fn start(bind: &str, port: u16, shared: Arc<Shared>, workers: usize) -> io::Result<DevServer> {
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
    let address = listener.local_addr()?.to_string();
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
        std::thread::Builder::new()
            .name(format!("serve-worker-{i}"))
            .spawn(move || work(&queue, &shared, &back))?;
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
    request: Request,
    rest: Vec<u8>,
    slot: Slot,
}

/// A connection a worker gives back: to wait for its next request, or (`closing`) to be drained and
/// closed.
struct Returned {
    socket: TcpStream,
    rest: Vec<u8>,
    closing: bool,
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

/// A connection in the connections thread: reading a head, or draining before it closes.
struct Conn {
    socket: mio::net::TcpStream,
    buf: Vec<u8>,
    deadline: Instant,
    /// Answered and closing: the bytes drained so far.
    draining: Option<usize>,
    slot: Slot,
}

/// What reading a connection came to.
enum Step {
    Wait,
    Close,
    Dispatch(Request),
    Refuse(u16, &'static str),
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
                Ok((mut socket, _)) => {
                    // Without TCP_NODELAY an answer's last segment waits for the client's delayed ACK
                    // (40 ms on Linux) when a head and a body go out in two writes.
                    let _ = socket.set_nodelay(true);
                    match Slot::take(&self.count, MAX_CONNECTIONS) {
                        Some(slot) => self.insert(socket, Vec::new(), false, slot),
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

    fn insert(&mut self, mut socket: mio::net::TcpStream, buf: Vec<u8>, closing: bool, slot: Slot) {
        let token = Token(self.next);
        // Tokens 0 and 1 are the listener's and the waker's.
        self.next = self.next.checked_add(1).unwrap_or(2);
        if self
            .poll
            .registry()
            .register(&mut socket, token, Interest::READABLE)
            .is_err()
        {
            return;
        }
        let now = Instant::now();
        let deadline = now
            + match (closing, buf.is_empty()) {
                (true, _) => DRAIN_TIME,
                (false, true) => IDLE_TIMEOUT,
                (false, false) => HEAD_TIMEOUT,
            };
        self.conns.insert(
            token,
            Conn {
                socket,
                buf,
                deadline,
                draining: closing.then_some(0),
                slot,
            },
        );
        // What arrived before registration, or a head already in `buf`, is read now.
        self.ready(token);
    }

    fn take_back(&mut self) {
        let returned = std::mem::take(&mut *self.back.returned.lock().expect("returned lock"));
        for r in returned {
            if r.socket.set_nonblocking(true).is_ok() {
                let socket = mio::net::TcpStream::from_std(r.socket);
                self.insert(socket, r.rest, r.closing, r.slot);
            }
        }
    }

    fn ready(&mut self, token: Token) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let step = match conn.draining.as_mut() {
            Some(drained) => drain(&mut conn.socket, drained),
            None => read_head(conn),
        };
        match step {
            Step::Wait => {}
            Step::Close => self.close(token),
            Step::Dispatch(request) => self.dispatch(token, request),
            Step::Refuse(status, message) => self.refuse(token, status, message),
        }
    }

    fn dispatch(&mut self, token: Token, request: Request) {
        let Some(mut conn) = self.conns.remove(&token) else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut conn.socket);
        let socket: TcpStream = conn.socket.into();
        if socket.set_nonblocking(false).is_err() {
            return;
        }
        let rest = conn.buf[request.len..].to_vec();
        let _ = self.jobs.send(Job {
            socket,
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
        // Between requests the send buffer is empty: a small answer fits; if not, the client was not
        // reading anyway.
        let _ = conn.socket.write(&response.to_bytes());
        let _ = conn.socket.shutdown(Shutdown::Write);
        conn.buf = Vec::new();
        conn.draining = Some(0);
        conn.deadline = Instant::now() + DRAIN_TIME;
        self.ready(token);
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
            .map(|(t, c)| (*t, c.draining.is_none() && !c.buf.is_empty()))
            .collect();
        for (token, started) in due {
            if started {
                self.refuse(token, 408, "the request head did not arrive in time");
            } else {
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

/// Reads and drops what a closing connection's client still sends.
fn drain(socket: &mut mio::net::TcpStream, drained: &mut usize) -> Step {
    let mut scratch = [0u8; 8192];
    loop {
        match socket.read(&mut scratch) {
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

fn work(queue: &Mutex<Receiver<Job>>, shared: &Arc<Shared>, back: &Back) {
    loop {
        let job = queue.lock().expect("queue lock").recv();
        match job {
            Ok(job) => serve(job, shared, back),
            Err(_) => return,
        }
    }
}

/// Answers a connection's request, and the further requests it already sent.
fn serve(job: Job, shared: &Arc<Shared>, back: &Back) {
    let Job {
        mut socket,
        mut request,
        mut rest,
        slot,
    } = job;
    loop {
        let snapshot = shared.current();
        let response = if request.method == Method::Get
            && request.path() == LIVE_RELOAD_PATH
            && !request.has_body
        {
            match Slot::take(&shared.streams, MAX_STREAMS) {
                Some(stream) => return events::join(shared, socket, [slot, stream]),
                None => {
                    let mut full = site::error(503, None, "too many live-reload streams are open");
                    full.close = true;
                    full.header("Retry-After", "5")
                }
            }
        } else {
            site::respond(&request, &snapshot)
        };
        if write_response(&mut socket, &response).is_err() {
            return;
        }
        if response.close {
            let _ = socket.shutdown(Shutdown::Write);
            return back.give(Returned {
                socket,
                rest: Vec::new(),
                closing: true,
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
                    rest,
                    closing: false,
                    slot,
                });
            }
        }
    }
}

fn write_response(socket: &mut TcpStream, response: &Response) -> io::Result<()> {
    let deadline = Instant::now() + WRITE_TIMEOUT;
    let body = response.sent_body();
    if body.len() <= ONE_WRITE {
        write_by(socket, &response.to_bytes(), deadline)
    } else {
        write_by(socket, &response.head(), deadline)?;
        write_by(socket, body, deadline)
    }
}

/// Writes all of `bytes` before `deadline` (a client reading slowly cannot hold a worker longer).
fn write_by(socket: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        socket.set_write_timeout(Some(left))?;
        match socket.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
