//! Starting wstest: natively (the Python 2 runner from conformance/autobahn/setup.sh) or in
//! the upstream container with podman, and turning its stdout into one progress line per case.
//!
//! wstest 0.8.2 prints, in both fuzzing modes, "Ok, will run N test cases ..." once and then
//! "Running test case ID <id> for agent <agent> from peer <peer>" when each case starts; the
//! fuzzingclient prints "Connection to <url> failed (<reason>)" when it cannot reach the server.
//! PYTHONUNBUFFERED=1 makes those lines arrive as they are printed.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use super::spec::Role;
use crate::proc::{self, Guard};
use crate::workspace::Workspace;

/// The upstream image (Autobahn|Testsuite 0.8.2); TICKWIRE_AUTOBAHN_IMAGE overrides it.
const DEFAULT_IMAGE: &str = "docker.io/crossbario/autobahn-testsuite:0.8.2";

pub enum Runner {
    Native { wstest: PathBuf },
    Podman { image: String },
}

impl Runner {
    /// Native: installs the runner on first use. Podman: pulls the image on first use.
    pub fn prepare(ws: &Workspace, podman: bool) -> Result<Self, String> {
        if podman {
            proc::run(
                Command::new("podman")
                    .arg("--version")
                    .stdout(Stdio::null()),
            )
            .map_err(|e| format!("--podman needs podman on PATH: {e}"))?;
            let image =
                std::env::var("TICKWIRE_AUTOBAHN_IMAGE").unwrap_or_else(|_| DEFAULT_IMAGE.into());
            let present = Command::new("podman")
                .args(["image", "exists", &image])
                .status()
                .is_ok_and(|s| s.success());
            if !present {
                println!("autobahn: pulling {image}");
                proc::run(Command::new("podman").args(["pull", &image]))?;
            }
            return Ok(Runner::Podman { image });
        }
        let dest = ws.target.join("autobahn-py2");
        let wstest = dest.join("wstest");
        if !answers(&wstest) {
            println!(
                "autobahn: installing the native runner into {}",
                dest.display()
            );
            let setup = ws.root.join("conformance/autobahn/setup.sh");
            proc::run(Command::new("bash").arg(&setup).arg(&dest))?;
        }
        Ok(Runner::Native { wstest })
    }

    /// Path of the spec file the runner reads, and the outdir to write into it.
    /// Podman sees <target>/autobahn/podman as /config and <target>/autobahn/reports as /reports.
    pub fn spec_paths(
        &self,
        autobahn_dir: &Path,
        role: Role,
        host_outdir: &Path,
    ) -> (PathBuf, String) {
        match self {
            Runner::Native { .. } => (
                autobahn_dir.join(role.spec_file()),
                host_outdir.display().to_string(),
            ),
            Runner::Podman { .. } => {
                let leaf = host_outdir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                (
                    autobahn_dir.join("podman").join(role.spec_file()),
                    format!("/reports/{}", leaf.unwrap_or_default()),
                )
            }
        }
    }

    /// Starts wstest in `role`'s mode; its output goes to `log` and progress to our stdout.
    pub fn start(
        &self,
        role: Role,
        spec_path: &Path,
        autobahn_dir: &Path,
        log: &Path,
    ) -> Result<(Guard, Output), String> {
        let mut container = None;
        let mut cmd = match self {
            Runner::Native { wstest } => {
                let mut cmd = Command::new(wstest);
                cmd.arg("-m")
                    .arg(role.wstest_mode())
                    .arg("-s")
                    .arg(spec_path);
                cmd.current_dir(autobahn_dir);
                cmd
            }
            Runner::Podman { image } => {
                let name = format!("tickwire-autobahn-{}-{}", role.label(), std::process::id());
                let config_dir = spec_path.parent().unwrap_or(autobahn_dir);
                let reports_dir = autobahn_dir.join("reports");
                let mut cmd = Command::new("podman");
                cmd.args(["run", "--rm", "--name", &name, "--network", "host"])
                    .args(["--env", "PYTHONUNBUFFERED=1"])
                    .arg("--volume")
                    .arg(format!("{}:/config:ro,Z", config_dir.display()))
                    .arg("--volume")
                    .arg(format!("{}:/reports:Z", reports_dir.display()))
                    .arg(image)
                    .args(["wstest", "-m", role.wstest_mode(), "-s"])
                    .arg(format!("/config/{}", role.spec_file()));
                container = Some(name);
                cmd
            }
        };
        // -u 0: no embedded web server (it would take port 8080); only the fuzzingserver has one.
        if role == Role::Client {
            cmd.args(["-u", "0"]);
        }
        let file =
            File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let stderr = file
            .try_clone()
            .map_err(|e| format!("cannot dup {}: {e}", log.display()))?;
        cmd.env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut guard = Guard::spawn("wstest", &mut cmd)?;
        if let Some(name) = container {
            guard = guard.with_container(name);
        }
        let stdout = guard
            .child_mut()
            .stdout
            .take()
            .ok_or("wstest stdout was not captured")?;
        let output = Output::follow(role, stdout, file);
        Ok((guard, output))
    }
}

/// Whether a wstest at `path` runs (the same check setup.sh makes).
fn answers(path: &Path) -> bool {
    path.is_file()
        && Command::new(path)
            .arg("--help")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// What wstest's output told us so far.
#[derive(Debug, Default, Clone)]
pub struct Progress {
    /// From "Ok, will run N test cases".
    pub total: Option<usize>,
    /// Cases started ("Running test case ID ...").
    pub started: usize,
    /// "Connection to ... failed" lines.
    pub connection_failures: Vec<String>,
}

impl Progress {
    /// Takes one line of wstest output; returns what to print, if anything.
    pub fn observe(&mut self, role: Role, line: &str) -> Option<String> {
        let tag = role.label();
        if let Some(rest) = line.strip_prefix("Ok, will run ") {
            let n = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            self.total = n;
            return n.map(|n| format!("autobahn [{tag}] wstest will run {n} cases"));
        }
        if let Some(rest) = line.strip_prefix("Running test case ID ") {
            self.started += 1;
            let id = rest.split_whitespace().next().unwrap_or("?");
            let total = self.total.map_or_else(|| "?".to_owned(), |t| t.to_string());
            let width = total.len();
            return Some(format!(
                "autobahn [{tag}] [{:>width$}/{total}] case {id}",
                self.started
            ));
        }
        if line.starts_with("Connection to ") && line.contains(" failed") {
            self.connection_failures.push(line.to_owned());
            return Some(format!("autobahn [{tag}] {line}"));
        }
        None
    }
}

/// A thread copying wstest's stdout into its log and printing progress.
pub struct Output {
    progress: Arc<Mutex<Progress>>,
    thread: Option<JoinHandle<()>>,
}

impl Output {
    fn follow(role: Role, stdout: ChildStdout, mut log: File) -> Self {
        let progress = Arc::new(Mutex::new(Progress::default()));
        let shared = Arc::clone(&progress);
        let thread = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(log, "{line}");
                let note = shared
                    .lock()
                    .map(|mut p| p.observe(role, &line))
                    .unwrap_or(None);
                if let Some(note) = note {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{note}");
                    let _ = out.flush();
                }
            }
        });
        Self {
            progress,
            thread: Some(thread),
        }
    }

    /// Call after wstest has exited (or was killed): the pipe then ends and the thread stops.
    pub fn finish(mut self) -> Progress {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.progress.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_from_real_0_8_2_lines() {
        let mut p = Progress::default();
        assert_eq!(
            p.observe(Role::Server, "Using explicit spec file 'fc.json'"),
            None
        );
        assert_eq!(
            p.observe(
                Role::Server,
                "Ok, will run 517 test cases against 1 servers"
            )
            .as_deref(),
            Some("autobahn [server] wstest will run 517 cases")
        );
        assert_eq!(
            p.observe(
                Role::Server,
                "Running test case ID 1.1.1 for agent tickwire from peer tcp4:127.0.0.1:9002"
            )
            .as_deref(),
            Some("autobahn [server] [  1/517] case 1.1.1")
        );
        assert_eq!(p.total, Some(517));
        assert_eq!(p.started, 1);
        let failed = "Connection to ws://127.0.0.1:9002 failed (Connection was refused by other side: 111: Connection refused.)";
        assert!(p.observe(Role::Server, failed).is_some());
        assert_eq!(p.connection_failures, [failed]);

        let mut p = Progress::default();
        p.observe(
            Role::Client,
            "Ok, will run 3 test cases for any clients connecting",
        );
        assert_eq!(
            p.observe(
                Role::Client,
                "Running test case ID 2.1 for agent tickwire from peer tcp4:127.0.0.1:36220"
            )
            .as_deref(),
            Some("autobahn [client] [1/3] case 2.1")
        );
    }
}
