//! A server process in its own process group, stopped on drop, and a temp dir removed on drop.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::PeerError;

/// A port on 127.0.0.1 that was free a moment ago (the OS picked it; we released it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A fresh directory under the system temp dir, removed with its contents on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Create `tickwire-<what>-<pid>-<n>` under the system temp dir.
    pub fn new(what: &str) -> std::io::Result<TempDir> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("tickwire-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running server: its own process group (so its workers go with it), stopped with
/// SIGTERM on drop (SIGKILL after 5 s), its output in `log` for error messages.
#[derive(Debug)]
pub struct ServerProcess {
    name: &'static str,
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl ServerProcess {
    /// Spawn `cmd` (stdout and stderr to `log`) and wait until `addr` accepts TCP
    /// connections, at most `within`.
    pub fn spawn(
        name: &'static str,
        mut cmd: Command,
        addr: SocketAddr,
        log: PathBuf,
        within: Duration,
    ) -> Result<ServerProcess, PeerError> {
        let out = std::fs::File::create(&log)
            .map_err(|e| PeerError::Failed(format!("{name}: log {}: {e}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| PeerError::Failed(format!("{name}: {e}")))?;
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| PeerError::Failed(format!("{name}: spawn {cmd:?}: {e}")))?;
        let mut p = ServerProcess {
            name,
            child,
            addr,
            log,
        };
        p.wait_accepting(addr, within)?;
        Ok(p)
    }

    /// Wait until `addr` accepts connections too (a server with a second listener: a
    /// connect succeeds once the kernel has the socket listening, so the first
    /// listener accepting says nothing of the others).
    pub fn wait_accepting(&mut self, addr: SocketAddr, within: Duration) -> Result<(), PeerError> {
        let deadline = Instant::now() + within;
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(PeerError::Failed(format!(
                    "{} exited with {status} before accepting on {addr}:\n{}",
                    self.name,
                    self.log_text()
                )));
            }
            if Instant::now() > deadline {
                return Err(PeerError::Failed(format!(
                    "{} did not accept on {addr} within {within:?}:\n{}",
                    self.name,
                    self.log_text()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it printed so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal_group(&self, sig: &str) {
        // `kill -SIG -- -PGID`: the group is the one this child leads (process_group(0)).
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.signal_group("-TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                // Workers may outlive the master briefly: make sure the group is gone.
                self.signal_group("-KILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.signal_group("-KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
