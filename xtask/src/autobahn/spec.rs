//! The wstest spec files: read the checked-in templates from conformance/autobahn/, make
//! their paths absolute (wstest resolves relative paths against its own working directory),
//! apply `--cases`, and write the result under <target>/autobahn/.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Which side of tickwire is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// tickwire's client (example autobahn_client) against wstest's fuzzingserver.
    Client,
    /// tickwire's server (example echo_server) against wstest's fuzzingclient.
    Server,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }

    pub fn wstest_mode(self) -> &'static str {
        match self {
            Role::Client => "fuzzingserver",
            Role::Server => "fuzzingclient",
        }
    }

    /// Template under conformance/autobahn/, and the name the prepared copy gets.
    pub fn spec_file(self) -> &'static str {
        match self {
            Role::Client => "fuzzingserver.json",
            Role::Server => "fuzzingclient.json",
        }
    }
}

/// A parsed spec plus what the runner needs from it.
pub struct Spec {
    pub json: Value,
    /// host:port that must accept connections: the fuzzingserver (client role) or the
    /// tickwire echo server (server role).
    pub listen: String,
    /// The agent name the results are filed under.
    pub agent: String,
}

/// The agent name the client example is told to report as.
pub const CLIENT_AGENT: &str = "tickwire";

impl Spec {
    pub fn parse(role: Role, text: &str) -> Result<Self, String> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| format!("{} is not valid JSON: {e}", role.spec_file()))?;
        let field = |v: &Value, what: &str| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: missing {what}", role.spec_file()))
        };
        let (url, agent) = match role {
            Role::Client => (field(&json["url"], "\"url\"")?, CLIENT_AGENT.to_owned()),
            Role::Server => {
                let servers = json["servers"].as_array().map(Vec::len).unwrap_or(0);
                if servers != 1 {
                    return Err(format!(
                        "{}: expected exactly one entry in \"servers\"",
                        role.spec_file()
                    ));
                }
                let server = &json["servers"][0];
                (
                    field(&server["url"], "servers[0].url")?,
                    field(&server["agent"], "servers[0].agent")?,
                )
            }
        };
        field(&json["outdir"], "\"outdir\"")?;
        Ok(Self {
            listen: ws_host_port(&url)?,
            agent,
            json,
        })
    }

    pub fn outdir(&self) -> &str {
        self.json["outdir"].as_str().unwrap_or_default()
    }

    pub fn set_outdir(&mut self, outdir: &str) {
        self.json["outdir"] = Value::from(outdir);
    }

    /// `--cases "1.*,9.1.1"` replaces the spec's "cases" list.
    pub fn set_cases(&mut self, patterns: &str) -> Result<(), String> {
        let list: Vec<Value> = patterns
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Value::from)
            .collect();
        if list.is_empty() {
            return Err(format!("--cases {patterns:?} names no case pattern"));
        }
        self.json["cases"] = Value::Array(list);
        Ok(())
    }

    pub fn to_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.json).unwrap_or_default() + "\n"
    }
}

/// "ws://127.0.0.1:9001/path" -> "127.0.0.1:9001" (port 80 if none is given).
pub fn ws_host_port(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| format!("expected a ws:// URL, got {url:?}"))?;
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(format!("no host in {url:?}"));
    }
    let has_port = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    };
    Ok(if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    })
}

/// The checked-in outdirs are written relative to the workspace root, as "./target/...".
/// Anything under "target/" moves to the real target directory (which may be elsewhere,
/// e.g. CARGO_TARGET_DIR); other relative paths are taken from the workspace root.
pub fn resolve_outdir(outdir: &str, workspace_root: &Path, target_dir: &Path) -> PathBuf {
    let path = Path::new(outdir);
    if path.is_absolute() {
        return path.to_owned();
    }
    let parts: Vec<Component> = path
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect();
    match parts.split_first() {
        Some((first, rest)) if first.as_os_str() == "target" => rest
            .iter()
            .fold(target_dir.to_owned(), |dir, part| dir.join(part)),
        _ => parts
            .iter()
            .fold(workspace_root.to_owned(), |dir, part| dir.join(part)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER_SPEC: &str = include_str!("../../../conformance/autobahn/fuzzingserver.json");
    const CLIENT_SPEC: &str = include_str!("../../../conformance/autobahn/fuzzingclient.json");

    #[test]
    fn checked_in_specs_parse() {
        let spec = Spec::parse(Role::Client, SERVER_SPEC).unwrap();
        assert_eq!(spec.listen, "127.0.0.1:9001");
        assert_eq!(spec.agent, "tickwire");
        assert_eq!(spec.outdir(), "./target/autobahn/reports/clients");
        assert_eq!(spec.json["cases"], serde_json::json!(["*"]));

        let spec = Spec::parse(Role::Server, CLIENT_SPEC).unwrap();
        assert_eq!(spec.listen, "127.0.0.1:9002");
        assert_eq!(spec.agent, "tickwire");
        assert_eq!(spec.outdir(), "./target/autobahn/reports/servers");
    }

    #[test]
    fn rewrites_outdir_and_cases() {
        let mut spec = Spec::parse(Role::Client, SERVER_SPEC).unwrap();
        spec.set_outdir("/abs/reports/clients");
        spec.set_cases(" 1.*, 9.1.1,").unwrap();
        let again = Spec::parse(Role::Client, &spec.to_pretty()).unwrap();
        assert_eq!(again.outdir(), "/abs/reports/clients");
        assert_eq!(again.json["cases"], serde_json::json!(["1.*", "9.1.1"]));
        assert_eq!(again.json["exclude-cases"], spec.json["exclude-cases"]);
        assert!(spec.set_cases(" , ").is_err());
    }

    #[test]
    fn rejects_broken_specs() {
        assert!(Spec::parse(Role::Client, r#"{"outdir": "x"}"#).is_err());
        assert!(Spec::parse(Role::Server, r#"{"outdir": "x", "servers": []}"#).is_err());
        assert!(
            Spec::parse(
                Role::Server,
                r#"{"servers": [{"agent": "a", "url": "ws://h:1"}]}"#
            )
            .is_err()
        );
        assert!(Spec::parse(Role::Client, "not json").is_err());
    }

    #[test]
    fn host_port_from_url() {
        assert_eq!(
            ws_host_port("ws://127.0.0.1:9001").unwrap(),
            "127.0.0.1:9001"
        );
        assert_eq!(
            ws_host_port("ws://localhost:9002/x?y=1").unwrap(),
            "localhost:9002"
        );
        assert_eq!(
            ws_host_port("ws://example.invalid").unwrap(),
            "example.invalid:80"
        );
        assert_eq!(ws_host_port("ws://[::1]:9001/").unwrap(), "[::1]:9001");
        assert_eq!(ws_host_port("ws://[::1]").unwrap(), "[::1]:80");
        assert!(ws_host_port("wss://127.0.0.1:9001").is_err());
        assert!(ws_host_port("ws:///x").is_err());
    }

    #[test]
    fn outdir_follows_the_target_dir() {
        let (root, target) = (Path::new("/ws"), Path::new("/elsewhere/target"));
        assert_eq!(
            resolve_outdir("./target/autobahn/reports/clients", root, target),
            Path::new("/elsewhere/target/autobahn/reports/clients")
        );
        assert_eq!(
            resolve_outdir("target/x", root, target),
            Path::new("/elsewhere/target/x")
        );
        assert_eq!(
            resolve_outdir("./reports", root, target),
            Path::new("/ws/reports")
        );
        assert_eq!(resolve_outdir("/abs", root, target), Path::new("/abs"));
    }
}
