//! `cargo xtask autobahn`: the Autobahn|Testsuite against tickwire's client and server.
//!
//! Client role: wstest's fuzzingserver listens on 127.0.0.1:9001; the example
//! `autobahn_client ws://127.0.0.1:9001 tickwire` runs every case, echoing, then asks for the
//! reports. Server role: the example `echo_server 127.0.0.1:9002` listens; wstest's
//! fuzzingclient runs every case against it and writes the reports when done.
//! Everything lands in <target>/autobahn/: prepared specs, logs, reports/{clients,servers}.

mod report;
mod spec;
mod wstest;

use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use report::Summary;
use spec::{Role, Spec};
use wstest::Runner;

use crate::proc::{self, Guard};
use crate::workspace::{self, Workspace};

#[derive(Debug, PartialEq)]
struct Options {
    roles: Vec<Role>,
    podman: bool,
    cases: Option<String>,
    tokio: bool,
    /// Build the examples with feature `deflate` (permessage-deflate on): the compression
    /// cases 12.* and 13.* then must not be UNIMPLEMENTED.
    deflate: bool,
    /// Limit for the test run of one role (the client program, or wstest's fuzzingclient).
    timeout: Duration,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let (mut client, mut server) = (false, false);
    let mut options = Options {
        roles: Vec::new(),
        podman: false,
        cases: None,
        tokio: false,
        deflate: false,
        timeout: Duration::from_secs(600),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "--client" => client = true,
            "--server" => server = true,
            "--podman" => options.podman = true,
            "--tokio" => options.tokio = true,
            "--deflate" => options.deflate = true,
            "--cases" => options.cases = Some(value("--cases")?),
            "--timeout" => {
                let text = value("--timeout")?;
                let secs: u64 = text
                    .parse()
                    .map_err(|_| format!("--timeout expects seconds, got {text:?}"))?;
                options.timeout = Duration::from_secs(secs);
            }
            other => {
                return Err(format!(
                    "autobahn: unknown argument {other:?}; see `cargo xtask help`"
                ));
            }
        }
    }
    if client || !server {
        options.roles.push(Role::Client);
    }
    if server || !client {
        options.roles.push(Role::Server);
    }
    Ok(options)
}

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let options = parse_args(args)?;
    let ws = Workspace::locate()?;
    let examples: Vec<&str> = options
        .roles
        .iter()
        .map(|role| match role {
            Role::Client => "autobahn_client",
            Role::Server => "echo_server",
        })
        .collect();
    for example in &examples {
        let source = ws
            .root
            .join("transport/examples")
            .join(format!("{example}.rs"));
        if !source.is_file() {
            return Err(format!(
                "{} does not exist yet: the Autobahn run needs tickwire's example `{example}`",
                source.display()
            ));
        }
    }

    let mut build = Command::new(workspace::cargo());
    build
        .args(["build", "--release", "-p", "tickwire"])
        .current_dir(&ws.root);
    for example in &examples {
        build.args(["--example", example]);
    }
    let features: Vec<&str> = [(options.tokio, "tokio"), (options.deflate, "deflate")]
        .into_iter()
        .filter_map(|(on, f)| on.then_some(f))
        .collect();
    if !features.is_empty() {
        build.args(["--features", &features.join(",")]);
    }
    println!("autobahn: building {}", examples.join(", "));
    proc::run(&mut build)?;

    let runner = Runner::prepare(&ws, options.podman)?;
    let autobahn_dir = ws.target.join("autobahn");
    let mut failed_roles = Vec::new();
    for &role in &options.roles {
        let started = Instant::now();
        let run = RoleRun::new(&ws, &runner, &autobahn_dir, role, &options);
        let outcome = run.and_then(|run| run.execute());
        let elapsed = started.elapsed().as_secs();
        println!("\nautobahn [{}] summary ({elapsed} s):", role.label());
        match outcome {
            Ok(result) => {
                if let Some(summary) = &result.summary {
                    print!("{}", summary.render());
                }
                if result.html.is_file() {
                    println!("  HTML report: {}", result.html.display());
                }
                if !result.problems.is_empty() {
                    for problem in &result.problems {
                        println!("  ERROR: {problem}");
                    }
                    failed_roles.push(role.label());
                }
            }
            Err(error) => {
                println!("  ERROR: {error}");
                failed_roles.push(role.label());
            }
        }
    }
    if failed_roles.is_empty() {
        println!("\nautobahn: passed ({} role(s))", options.roles.len());
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!(
            "autobahn: failed for role(s): {}",
            failed_roles.join(", ")
        ))
    }
}

/// Everything one role needs, prepared before any process starts.
struct RoleRun<'a> {
    role: Role,
    runner: &'a Runner,
    options: &'a Options,
    spec: Spec,
    spec_path: PathBuf,
    autobahn_dir: PathBuf,
    /// Where the reports appear on this machine.
    outdir: PathBuf,
    listen: SocketAddr,
    program: PathBuf,
}

struct RoleResult {
    summary: Option<Summary>,
    html: PathBuf,
    problems: Vec<String>,
}

impl<'a> RoleRun<'a> {
    fn new(
        ws: &Workspace,
        runner: &'a Runner,
        autobahn_dir: &Path,
        role: Role,
        options: &'a Options,
    ) -> Result<Self, String> {
        let template = ws.root.join("conformance/autobahn").join(role.spec_file());
        let text = fs::read_to_string(&template)
            .map_err(|e| format!("cannot read {}: {e}", template.display()))?;
        let mut spec = Spec::parse(role, &text)?;
        if let Some(cases) = &options.cases {
            spec.set_cases(cases)?;
        }
        let outdir = spec::resolve_outdir(spec.outdir(), &ws.root, &ws.target);
        if runner_is_podman(runner)
            && outdir.parent() != Some(autobahn_dir.join("reports").as_path())
        {
            return Err(format!(
                "with --podman the outdir must be <target>/autobahn/reports/<name>, not {}",
                outdir.display()
            ));
        }
        let (spec_path, outdir_for_wstest) = runner.spec_paths(autobahn_dir, role, &outdir);
        spec.set_outdir(&outdir_for_wstest);
        let listen = proc::socket_addr(&spec.listen)?;
        let program = ws.target.join("release/examples").join(match role {
            Role::Client => "autobahn_client",
            Role::Server => "echo_server",
        });
        Ok(Self {
            role,
            runner,
            options,
            spec,
            spec_path,
            autobahn_dir: autobahn_dir.to_owned(),
            outdir,
            listen,
            program,
        })
    }

    fn tag(&self) -> String {
        format!("autobahn [{}]", self.role.label())
    }

    /// Fresh outdir (so an old index.json is never read as new), the spec file, a free port.
    fn set_up(&self) -> Result<(), String> {
        if proc::port_accepts(self.listen) {
            return Err(format!(
                "{} is already in use (a leftover wstest or echo server?)",
                self.listen
            ));
        }
        if self.outdir.exists() {
            fs::remove_dir_all(&self.outdir)
                .map_err(|e| format!("cannot clear {}: {e}", self.outdir.display()))?;
        }
        fs::create_dir_all(&self.outdir)
            .map_err(|e| format!("cannot create {}: {e}", self.outdir.display()))?;
        if let Some(dir) = self.spec_path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        fs::write(&self.spec_path, self.spec.to_pretty())
            .map_err(|e| format!("cannot write {}: {e}", self.spec_path.display()))
    }

    fn startup_limit(&self) -> Duration {
        match self.runner {
            Runner::Native { .. } => Duration::from_secs(60),
            Runner::Podman { .. } => Duration::from_secs(180),
        }
    }

    /// The tickwire example, with its output in <target>/autobahn/<name>.log.
    fn spawn_program(&self, args: &[&str]) -> Result<(Guard, PathBuf), String> {
        let name = self
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let log = self.autobahn_dir.join(format!("{name}.log"));
        let (stdout, stderr) = proc::log_stdio(&log)?;
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        if self.options.tokio {
            cmd.arg("--tokio");
        }
        println!(
            "{} running {} {} (log: {})",
            self.tag(),
            name,
            args.join(" "),
            log.display()
        );
        Ok((Guard::spawn(&name, &mut cmd)?, log))
    }

    fn execute(self) -> Result<RoleResult, String> {
        self.set_up()?;
        let wstest_log = self
            .autobahn_dir
            .join(format!("wstest-{}.log", self.role.label()));
        println!(
            "{} spec {}, wstest log {}",
            self.tag(),
            self.spec_path.display(),
            wstest_log.display()
        );
        let mut problems = Vec::new();
        let progress = match self.role {
            Role::Client => {
                let (mut wstest, output) = self.runner.start(
                    self.role,
                    &self.spec_path,
                    &self.autobahn_dir,
                    &wstest_log,
                )?;
                let result = self.drive_client(&mut wstest, &wstest_log);
                wstest.stop();
                let progress = output.finish();
                problems.extend(result.err());
                progress
            }
            Role::Server => {
                let (mut echo, echo_log) = self.spawn_program(&[&self.spec.listen])?;
                proc::wait_for_port(self.listen, &mut echo, Duration::from_secs(30))
                    .map_err(|e| proc::with_tail(e, &echo_log, 20))?;
                let (mut wstest, output) = self.runner.start(
                    self.role,
                    &self.spec_path,
                    &self.autobahn_dir,
                    &wstest_log,
                )?;
                let result = self.drive_server(&mut wstest, &wstest_log, &mut echo, &echo_log);
                wstest.stop();
                echo.stop();
                let progress = output.finish();
                problems.extend(result.err());
                progress
            }
        };
        for failure in &progress.connection_failures {
            problems.push(format!("wstest: {failure}"));
        }
        let html = self.outdir.join("index.html");
        let index = self.outdir.join("index.json");
        let summary = match fs::read_to_string(&index) {
            Ok(text) => match Summary::parse(&text, &self.spec.agent) {
                Ok(summary) => Some(summary),
                Err(e) => {
                    problems.push(format!("{}: {e}", index.display()));
                    None
                }
            },
            Err(e) => {
                problems.push(format!("no report at {}: {e}", index.display()));
                None
            }
        };
        match (progress.total, &summary) {
            (Some(expected), Some(summary)) => {
                problems.extend(summary.problems(expected));
                if self.options.deflate {
                    problems.extend(summary.unimplemented_problem());
                }
            }
            (None, _) => problems.push("wstest never said how many cases it would run".into()),
            _ => {}
        }
        Ok(RoleResult {
            summary,
            html,
            problems,
        })
    }

    fn drive_client(&self, wstest: &mut Guard, wstest_log: &Path) -> Result<(), String> {
        proc::wait_for_port(self.listen, wstest, self.startup_limit())
            .map_err(|e| proc::with_tail(e, wstest_log, 20))?;
        let url = format!("ws://{}", self.spec.listen);
        let (mut client, client_log) = self.spawn_program(&[&url, &self.spec.agent])?;
        let status = client.wait_timeout(self.options.timeout)?;
        let failure = match status {
            Some(status) if status.success() => return Ok(()),
            Some(status) => format!("autobahn_client exited with {status}"),
            None => {
                client.stop();
                format!(
                    "autobahn_client did not finish within {:?}; killed",
                    self.options.timeout
                )
            }
        };
        // Ask the fuzzingserver for the reports of the cases that did run, so the summary
        // shows how far the client got.
        let reports = request_reports(self.listen, &self.spec.listen, &self.spec.agent)
            .map(|()| "partial reports written".to_owned())
            .unwrap_or_else(|e| format!("could not get partial reports: {e}"));
        Err(proc::with_tail(
            format!("{failure} ({reports})"),
            &client_log,
            20,
        ))
    }

    fn drive_server(
        &self,
        wstest: &mut Guard,
        wstest_log: &Path,
        echo: &mut Guard,
        echo_log: &Path,
    ) -> Result<(), String> {
        let status = wstest.wait_timeout(self.options.timeout)?;
        let mut errors = Vec::new();
        match status {
            Some(status) if status.success() => {}
            Some(status) => errors.push(proc::with_tail(
                format!("wstest exited with {status}"),
                wstest_log,
                20,
            )),
            None => errors.push(format!(
                "wstest did not finish within {:?}; killed",
                self.options.timeout
            )),
        }
        if let Some(status) = echo.exited()? {
            let message = format!("echo_server exited during the run ({status})");
            errors.push(proc::with_tail(message, echo_log, 20));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }
}

fn runner_is_podman(runner: &Runner) -> bool {
    matches!(runner, Runner::Podman { .. })
}

/// Opens `/updateReports` on the fuzzingserver, which writes the reports before it answers
/// with a Close frame: any byte after the 101 response (or the server closing) means done.
fn request_reports(addr: SocketAddr, host: &str, agent: &str) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(io)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(io)?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .map_err(io)?;
    write!(
        stream,
        "GET /updateReports?agent={agent} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    )
    .map_err(io)?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).map_err(io)?;
        received.extend_from_slice(&chunk[..n]);
        let head_end = received.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(end) = head_end {
            if !received.starts_with(b"HTTP/1.1 101") {
                return Err("the fuzzingserver refused the WebSocket upgrade".into());
            }
            if n == 0 || received.len() > end + 4 {
                break;
            }
        } else if n == 0 {
            return Err("connection closed during the handshake".into());
        }
    }
    // Answer the Close: masked (all-zero key), status 1000.
    let _ = stream.write_all(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn both_roles_by_default() {
        let o = parse_args(&[]).unwrap();
        assert_eq!(o.roles, [Role::Client, Role::Server]);
        assert!(!o.podman && !o.tokio && !o.deflate && o.cases.is_none());
        assert_eq!(o.timeout, Duration::from_secs(600));
        assert_eq!(
            parse_args(&args(&["--client", "--server"])).unwrap().roles,
            [Role::Client, Role::Server]
        );
    }

    #[test]
    fn flags_and_values() {
        let o = parse_args(&args(&[
            "--server",
            "--podman",
            "--cases",
            "1.*,2.*",
            "--tokio",
            "--deflate",
            "--timeout=30",
        ]))
        .unwrap();
        assert_eq!(o.roles, [Role::Server]);
        assert!(o.podman && o.tokio && o.deflate);
        assert_eq!(o.cases.as_deref(), Some("1.*,2.*"));
        assert_eq!(o.timeout, Duration::from_secs(30));
        assert_eq!(
            parse_args(&args(&["--client", "--cases=9.*"]))
                .unwrap()
                .cases
                .as_deref(),
            Some("9.*")
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse_args(&args(&["--cases"])).is_err());
        assert!(parse_args(&args(&["--timeout", "soon"])).is_err());
        assert!(parse_args(&args(&["--clients"])).is_err());
        assert!(parse_args(&args(&["client"])).is_err());
    }
}
