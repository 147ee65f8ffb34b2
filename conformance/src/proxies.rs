//! Real proxy servers on 127.0.0.1, for tunnels through peers nobody here wrote:
//!
//! - [`Tinyproxy`]: Debian's `tinyproxy`, an HTTP proxy whose `CONNECT` we use, with
//!   Basic auth on (a config of our own in a temp dir, in the foreground);
//! - [`Microsocks`]: Debian's `microsocks`, a SOCKS5 server, with no auth or with a
//!   username and password. It resolves the target names it is sent.
//!
//! Both are installed by `.ci/run` (`apt-get install tinyproxy microsocks`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{PeerError, ServerProcess, TempDir, free_port};

/// The binary `name` in /usr/bin or /usr/sbin, or `None` (then the peer is absent).
fn find(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// A running tinyproxy with `BasicAuth`; stopped on drop.
#[derive(Debug)]
pub struct Tinyproxy {
    process: ServerProcess,
    _dir: TempDir,
}

impl Tinyproxy {
    /// The username tinyproxy accepts.
    pub const USER: &'static str = "trader";
    /// Its password (tinyproxy takes letters and digits only).
    pub const PASSWORD: &'static str = "s3cretPW42";

    /// Start tinyproxy on a free port of 127.0.0.1, requiring
    /// [`USER`](Self::USER) / [`PASSWORD`](Self::PASSWORD).
    pub fn start() -> Result<Tinyproxy, PeerError> {
        let bin = find("tinyproxy").ok_or_else(|| {
            PeerError::Absent("tinyproxy not installed (apt-get install tinyproxy)".into())
        })?;
        let dir = TempDir::new("tinyproxy").map_err(|e| PeerError::Failed(e.to_string()))?;
        let port = free_port().map_err(|e| PeerError::Failed(e.to_string()))?;
        let conf = dir.path().join("tinyproxy.conf");
        // No `ConnectPort` line: CONNECT is allowed to every port.
        let text = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nMaxClients 64\nLogLevel Info\n\
             Allow 127.0.0.1\nBasicAuth {} {}\nPidFile \"{}\"\n",
            Self::USER,
            Self::PASSWORD,
            dir.path().join("tinyproxy.pid").display()
        );
        std::fs::write(&conf, text).map_err(|e| PeerError::Failed(e.to_string()))?;
        let mut cmd = Command::new(bin);
        cmd.arg("-d").arg("-c").arg(&conf);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = dir.path().join("tinyproxy.log");
        let process = ServerProcess::spawn("tinyproxy", cmd, addr, log, Duration::from_secs(10))?;
        Ok(Tinyproxy { process, _dir: dir })
    }

    /// `http://USER:PASSWORD@127.0.0.1:PORT` (the password percent-encoded).
    pub fn url(&self) -> String {
        format!(
            "http://{}:{}@{}",
            Self::USER,
            Self::PASSWORD
                .replace('%', "%25")
                .replace(':', "%3A")
                .replace('@', "%40"),
            self.process.addr()
        )
    }

    /// The URL with a wrong password.
    pub fn url_wrong_password(&self) -> String {
        format!("http://{}:wrong@{}", Self::USER, self.process.addr())
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.process.addr()
    }

    /// What it logged so far (each CONNECT it served is there).
    pub fn log_text(&self) -> String {
        self.process.log_text()
    }
}

/// A running microsocks; stopped on drop.
#[derive(Debug)]
pub struct Microsocks {
    process: ServerProcess,
    auth: Option<(String, String)>,
    _dir: TempDir,
}

impl Microsocks {
    /// Start microsocks on a free port of 127.0.0.1; with `auth`, it requires that
    /// username and password.
    pub fn start(auth: Option<(&str, &str)>) -> Result<Microsocks, PeerError> {
        let bin = find("microsocks").ok_or_else(|| {
            PeerError::Absent("microsocks not installed (apt-get install microsocks)".into())
        })?;
        let dir = TempDir::new("microsocks").map_err(|e| PeerError::Failed(e.to_string()))?;
        let port = free_port().map_err(|e| PeerError::Failed(e.to_string()))?;
        let mut cmd = Command::new(bin);
        cmd.args(["-i", "127.0.0.1", "-p", &port.to_string()]);
        if let Some((u, p)) = auth {
            cmd.args(["-u", u, "-P", p]);
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = dir.path().join("microsocks.log");
        let process = ServerProcess::spawn("microsocks", cmd, addr, log, Duration::from_secs(10))?;
        Ok(Microsocks {
            process,
            auth: auth.map(|(u, p)| (u.to_owned(), p.to_owned())),
            _dir: dir,
        })
    }

    /// `socks5://[user:password@]127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        match &self.auth {
            Some((u, p)) => format!("socks5://{u}:{p}@{}", self.process.addr()),
            None => format!("socks5://{}", self.process.addr()),
        }
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.process.addr()
    }

    /// What it logged so far: a line `client[N] IP: connected to TARGET:PORT` for
    /// each tunnel, TARGET as it was asked for (an address, or the name it resolved).
    pub fn log_text(&self) -> String {
        self.process.log_text()
    }
}
