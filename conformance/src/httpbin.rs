//! httpbin (PyPI) served by gunicorn on 127.0.0.1, from the venv `conformance/http/setup.sh`
//! installs under `<target>/httpbin-venv`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::{PeerError, ServerProcess, TempDir, free_port};

/// A running httpbin; stopped on drop.
#[derive(Debug)]
pub struct Httpbin {
    // Field order: the process stops before its directory is removed.
    process: ServerProcess,
    _dir: TempDir,
}

impl Httpbin {
    /// Where the venv is: `$TICKWIRE_HTTPBIN_VENV`, else the first `httpbin-venv` found
    /// beside the test binary or in a directory above it (that is `<target>/httpbin-venv`).
    pub fn venv() -> Option<PathBuf> {
        if let Some(v) = std::env::var_os("TICKWIRE_HTTPBIN_VENV") {
            return Some(PathBuf::from(v));
        }
        let exe = std::env::current_exe().ok()?;
        exe.ancestors()
            .skip(1)
            .map(|d| d.join("httpbin-venv"))
            .find(|v| v.join("bin/gunicorn").is_file())
    }

    /// Start a private httpbin: gunicorn's threaded worker (it keeps connections alive;
    /// the default sync worker closes each one) on a free port.
    pub fn start() -> Result<Httpbin, PeerError> {
        let venv = Self::venv().ok_or_else(|| {
            PeerError::Absent(
                "no httpbin venv (<target>/httpbin-venv): run `bash conformance/http/setup.sh`"
                    .into(),
            )
        })?;
        let gunicorn = venv.join("bin/gunicorn");
        if !gunicorn.is_file() {
            return Err(PeerError::Absent(format!(
                "{} missing: run `bash conformance/http/setup.sh`",
                gunicorn.display()
            )));
        }
        let dir = TempDir::new("httpbin").map_err(|e| PeerError::Failed(e.to_string()))?;
        let mut last = None;
        // The free port can be taken between our probe and gunicorn's bind: retry.
        for _ in 0..3 {
            let port = free_port().map_err(|e| PeerError::Failed(e.to_string()))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let mut cmd = Command::new(&gunicorn);
            cmd.current_dir(dir.path())
                .args(["--bind", &addr.to_string()])
                .args([
                    "--worker-class",
                    "gthread",
                    "--threads",
                    "16",
                    "--workers",
                    "1",
                ])
                .args(["--keep-alive", "75", "--timeout", "120"])
                .args(["--no-control-socket", "--log-level", "warning"])
                .arg("--worker-tmp-dir")
                .arg(dir.path())
                .arg("httpbin:app");
            match ServerProcess::spawn(
                "httpbin",
                cmd,
                addr,
                dir.path().join("gunicorn.log"),
                Duration::from_secs(60),
            ) {
                Ok(process) => return Ok(Httpbin { process, _dir: dir }),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| PeerError::Failed("httpbin did not start".into())))
    }

    /// One httpbin shared by the tests of this process that run at the same time: started
    /// by the first, stopped when the last one drops its handle.
    pub fn shared() -> Result<Arc<Httpbin>, PeerError> {
        static SHARED: Mutex<Weak<Httpbin>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = slot.upgrade() {
            return Ok(h);
        }
        let h = Arc::new(Httpbin::start()?);
        *slot = Arc::downgrade(&h);
        Ok(h)
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.process.addr()
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr())
    }

    /// What gunicorn logged (for failure messages).
    pub fn log_text(&self) -> String {
        self.process.log_text()
    }
}
