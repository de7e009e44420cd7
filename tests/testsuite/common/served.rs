//! A `locref serve` child on an ephemeral port (talk to it with [`super::http`]).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `locref serve` on a copy of the shipped project; killed and reaped on drop.
pub struct Served {
    pub child: Child,
    pub address: String,
    pub project: tempfile::TempDir,
    pub lines: mpsc::Receiver<String>,
    /// What it printed before its address (the first build's line among them).
    pub startup: Vec<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `locref serve --port 0` on a copy of the shipped project and waits for its address.
pub fn serve() -> Served {
    serve_with(&[])
}

/// [`serve`] with extra environment variables.
pub fn serve_with(env: &[(&str, &str)]) -> Served {
    serve_with_args(env, &[])
}

/// [`serve`] with extra environment variables and arguments.
pub fn serve_with_args(env: &[(&str, &str)], args: &[&str]) -> Served {
    let project = super::copy_project();
    let child = Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["serve", "--port", "0"])
        .args(args)
        .envs(env.iter().copied())
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    // From here on, Drop kills and reaps the child whatever happens.
    let mut served = Served {
        child,
        address: String::new(),
        project,
        lines,
        startup: Vec::new(),
    };
    let stdout = served.child.stdout.take().unwrap();
    let stderr = served.child.stderr.take().unwrap();
    for stream in [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = served
            .lines
            .recv_timeout(wait)
            .expect("serve printed its address");
        if let Some(rest) = line.strip_prefix("serving http://") {
            served.address = rest.split('/').next().unwrap().to_string();
            return served;
        }
        served.startup.push(line);
    }
}

/// The `Threads:` and `VmRSS:` (KiB) of a process, from /proc.
pub fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line[name.len()..]
            .trim()
            .trim_end_matches(" kB")
            .parse()
            .unwrap()
    };
    (field("Threads:"), field("VmRSS:"))
}
