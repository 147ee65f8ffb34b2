//! Child processes that cannot outlive us: a guard that kills on drop, waits with deadlines,
//! waiting for a TCP port, running a command to completion, and log tails for errors.
//!
//! Ctrl-C: children stay in our process group, so the terminal's SIGINT reaches them too.
//! Every other exit path (errors, panics) drops the guards, which kill and reap.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(50);

/// A running child process, killed and reaped when dropped.
pub struct Guard {
    name: String,
    child: Child,
    /// For `podman run`: killing the client does not always stop the container.
    container: Option<String>,
}

impl Guard {
    pub fn spawn(name: &str, cmd: &mut Command) -> Result<Self, String> {
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name} ({cmd:?}): {e}"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            container: None,
        })
    }

    /// Also remove this podman container when the guard stops.
    pub fn with_container(mut self, container: String) -> Self {
        self.container = Some(container);
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Result<Option<ExitStatus>, String> {
        self.child
            .try_wait()
            .map_err(|e| format!("cannot wait for {}: {e}", self.name))
    }

    /// Waits up to `limit`; `None` means it is still running.
    pub fn wait_timeout(&mut self, limit: Duration) -> Result<Option<ExitStatus>, String> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.exited()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            thread::sleep(POLL);
        }
    }

    /// Kills (if still running) and reaps. Safe to call more than once.
    pub fn stop(&mut self) {
        if let Some(container) = self.container.take() {
            let _ = Command::new("podman")
                .args(["rm", "--force", "--time", "2", &container])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if let Ok(None) = self.child.try_wait() {
            // Grandchildren first (a wrapper's children would otherwise be orphaned).
            let orphans = descendants(self.child.id());
            if !orphans.is_empty() {
                let _ = Command::new("kill")
                    .arg("-KILL")
                    .args(orphans.iter().map(u32::to_string))
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// All processes below `pid`, from /proc (Linux); empty elsewhere.
fn descendants(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|entry| {
            let child: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            Some((child, parent_from_stat(&stat)?))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            found.push(child);
            frontier.push(child);
        }
    }
    found
}

/// The parent pid in a /proc/<pid>/stat line: "pid (comm) state ppid ..."; comm may hold
/// spaces and parentheses, so count from the last ')'.
fn parent_from_stat(stat: &str) -> Option<u32> {
    stat.get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Resolves "host:port" to one socket address.
pub fn socket_addr(host_port: &str) -> Result<SocketAddr, String> {
    host_port
        .to_socket_addrs()
        .map_err(|e| format!("bad address {host_port}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host_port} resolves to nothing"))
}

pub fn port_accepts(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// Waits until `addr` accepts TCP connections, failing early if `owner` exits.
pub fn wait_for_port(addr: SocketAddr, owner: &mut Guard, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        if port_accepts(addr) {
            return Ok(());
        }
        if let Some(status) = owner.exited()? {
            return Err(format!(
                "{} exited ({status}) before listening on {addr}",
                owner.name()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{} did not listen on {addr} within {limit:?}",
                owner.name()
            ));
        }
        thread::sleep(POLL);
    }
}

/// Runs a command to completion with inherited stdio; error unless it succeeds.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed ({status})"))
    }
}

/// A log file for a child's stdout and stderr (both into the same file).
pub fn log_stdio(path: &Path) -> Result<(Stdio, Stdio), String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let second = file
        .try_clone()
        .map_err(|e| format!("cannot dup {}: {e}", path.display()))?;
    Ok((file.into(), second.into()))
}

/// `message`, then the last `n` lines of the log at `path` (if it has any), indented.
pub fn with_tail(message: impl std::fmt::Display, path: &Path, n: usize) -> String {
    let lines: Vec<String> = File::open(path)
        .map(|file| BufReader::new(file).lines().map_while(Result::ok).collect())
        .unwrap_or_default();
    let start = lines.len().saturating_sub(n);
    let mut out = message.to_string();
    if start < lines.len() {
        out += &format!("\n    last lines of {}:", path.display());
    }
    for line in &lines[start..] {
        out += &format!("\n    | {line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_pid_from_stat_line() {
        assert_eq!(
            parent_from_stat("4673 (python2.7) S 1 4672 4672 0 -1"),
            Some(1)
        );
        assert_eq!(parent_from_stat("77 (a) b (c)) R 42 77 77 0"), Some(42));
        assert_eq!(parent_from_stat("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn guard_kills_grandchildren() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & wait"]);
        let mut guard = Guard::spawn("sh", &mut cmd).unwrap();
        let pid = guard.child_mut().id();
        let deadline = Instant::now() + Duration::from_secs(5);
        let sleeper = loop {
            if let Some(&p) = descendants(pid).first() {
                break p;
            }
            assert!(Instant::now() < deadline, "sleep never started");
            thread::sleep(POLL);
        };
        drop(guard);
        let state = |p: u32| std::fs::read_to_string(format!("/proc/{p}/stat")).ok();
        let deadline = Instant::now() + Duration::from_secs(5);
        // Gone, or a zombie waiting for init to reap it.
        while state(sleeper).is_some_and(|s| !s.contains(") Z ")) {
            assert!(Instant::now() < deadline, "grandchild {sleeper} survived");
            thread::sleep(POLL);
        }
    }

    #[test]
    fn tail_of_a_log() {
        let path = std::env::temp_dir().join(format!("xtask-tail-{}.log", std::process::id()));
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let text = with_tail("boom", &path, 2);
        assert_eq!(
            text,
            format!(
                "boom\n    last lines of {}:\n    | two\n    | three",
                path.display()
            )
        );
        std::fs::write(&path, "").unwrap();
        assert_eq!(with_tail("boom", &path, 2), "boom");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(with_tail("boom", &path, 2), "boom");
    }
}
