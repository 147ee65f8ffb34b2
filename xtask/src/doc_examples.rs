//! `cargo xtask doc-examples`: every entry point of the public API has a code example in
//! its own rustdoc.
//!
//! Reads the crate's rustdoc JSON (`cargo +nightly rustdoc -- --output-format json`, the
//! only stable way to see the API as a user sees it: re-exports followed, private
//! modules left out, macro-generated methods included), walks the public items from the
//! crate root, and lists every public function or inherent method whose docs have no
//! code block. Such a function fails the check when its name is an entry point
//! ([`ENTRY`]: constructors, builders and their finishing methods, connect / bind /
//! accept, the send, recv and close families, the REST request methods, pools, proxies,
//! TLS trust and socket options); the others are listed as a note.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::{Command, ExitCode};

use serde_json::Value;

use crate::workspace::Workspace;

/// Names of the functions that must carry an example, exact or as a prefix (`send*`).
const ENTRY: &[&str] = &[
    "new",
    "builder",
    "build",
    "connect",
    "connect_with",
    "bind",
    "listener",
    "accept",
    "accept_stream",
    "try_accept",
    "send",
    "send_*",
    "try_send_*",
    "recv",
    "recv_*",
    "try_recv",
    "try_recv_*",
    "close",
    "request",
    "get",
    "post",
    "put",
    "delete",
    "patch",
    "head",
    "acquire",
    "acquire_within",
    "try_acquire",
    "with_builder",
    "split",
    "into_messages",
    "proxy",
    "socket_options",
    "recv_mode",
    "add_ca_pem",
    "from_pem",
    "from_pem_files",
    "http",
    "socks5",
    "all",
    "from_env",
    "shared_default",
    "client",
    "server",
    "keepalive",
    "dead_peer_timeout",
    "deflate",
    "shutdown_handle",
    "json",
];

/// Functions whose name matches [`ENTRY`] but which are not entry points, with why.
const NOT_ENTRY: &[(&str, &str)] = &[
    (
        "tickwire::proxy::ProxyError::proxy",
        "a getter (the proxy's address)",
    ),
    (
        "tickwire_codec::http::head::Headers::get",
        "a header getter",
    ),
    (
        "tickwire_codec::http::head::Trailers::get",
        "a trailer getter",
    ),
    (
        "tickwire_codec::ws::deflate::params::DeflateConfig::accept",
        "a negotiation step",
    ),
];

/// The toolchain rustdoc's JSON output needs (an unstable flag).
fn toolchain() -> String {
    std::env::var("TICKWIRE_DOC_TOOLCHAIN").unwrap_or_else(|_| "nightly".into())
}

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let crates: Vec<&str> = if args.is_empty() {
        vec!["tickwire", "tickwire-codec"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    let ws = Workspace::locate()?;
    let mut failed = 0;
    for krate in crates {
        let json = rustdoc_json(&ws, krate)?;
        let missing = missing_examples(&json)?;
        let (entry, other): (Vec<_>, Vec<_>) = missing.iter().partition(|p| is_entry(p));
        println!(
            "{krate}: {} public functions without an example, {} of them entry points",
            missing.len(),
            entry.len()
        );
        for p in &other {
            println!("  note: {p}");
        }
        for p in &entry {
            println!("  MISSING: {p}");
        }
        failed += entry.len();
    }
    if failed > 0 {
        eprintln!("{failed} entry points without a code example in their docs");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Build the crate's rustdoc JSON (all features) and parse it.
fn rustdoc_json(ws: &Workspace, krate: &str) -> Result<Value, String> {
    // The rustup proxy from PATH (not $CARGO), so that `+nightly` works.
    let status = Command::new("cargo")
        .arg(format!("+{}", toolchain()))
        .args(["rustdoc", "-q", "--lib", "--all-features", "-p", krate])
        .args(["--", "-Z", "unstable-options", "--output-format", "json"])
        .current_dir(&ws.root)
        .status()
        .map_err(|e| format!("cannot run cargo rustdoc: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo +{} rustdoc -p {krate} failed (a nightly toolchain is needed; \
             TICKWIRE_DOC_TOOLCHAIN picks another)",
            toolchain()
        ));
    }
    let path = ws
        .target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")));
    read_json(&path)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Whether the last segment of `path` is an entry-point name.
fn is_entry(path: &str) -> bool {
    if NOT_ENTRY.iter().any(|(p, _)| *p == path) {
        return false;
    }
    let name = path.rsplit("::").next().unwrap_or(path);
    ENTRY.iter().any(|e| match e.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *e,
    })
}

/// The public functions and inherent methods reachable from the crate root whose docs
/// have no code block, by path (`tickwire::ws::Client::connect`), sorted.
fn missing_examples(doc: &Value) -> Result<BTreeSet<String>, String> {
    let index = doc["index"].as_object().ok_or("rustdoc JSON: no index")?;
    let root = id_key(&doc["root"]);
    let name = index
        .get(&root)
        .and_then(|m| m["name"].as_str())
        .ok_or("rustdoc JSON: no root module")?;
    let mut walk = Walk {
        index,
        seen: HashSet::new(),
        missing: BTreeSet::new(),
    };
    walk.module(&root, name);
    Ok(walk.missing)
}

/// An id as the index's key (ids are numbers in recent formats, strings in older ones).
fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn has_example(item: &Value) -> bool {
    item["docs"].as_str().is_some_and(|d| d.contains("```"))
}

struct Walk<'a> {
    index: &'a serde_json::Map<String, Value>,
    seen: HashSet<String>,
    missing: BTreeSet<String>,
}

impl Walk<'_> {
    fn module(&mut self, id: &str, path: &str) {
        let Some(items) = self.index[id]["inner"]["module"]["items"].as_array() else {
            return;
        };
        for child in items {
            let key = id_key(child);
            if let Some(item) = self.index.get(&key)
                && item["visibility"] == "public"
            {
                self.item(&key, item, None, path);
            }
        }
    }

    /// Visit `item` (named `rename` when reached through a `pub use ... as`) in `path`.
    fn item(&mut self, key: &str, item: &Value, rename: Option<&str>, path: &str) {
        let inner = &item["inner"];
        if let Some(u) = inner.get("use") {
            let target = id_key(&u["id"]);
            let Some(t) = self.index.get(&target) else {
                return; // another crate's item, re-exported: checked in that crate
            };
            if u["is_glob"] == true {
                if t["inner"].get("module").is_some() {
                    self.module(&target, path);
                }
            } else {
                self.item(&target, t, u["name"].as_str(), path);
            }
            return;
        }
        let name = rename.or(item["name"].as_str()).unwrap_or("_");
        let here = format!("{path}::{name}");
        // An item reached twice (its module is public and it is re-exported) is
        // listed once, under the first path.
        if !self.seen.insert(key.to_owned()) {
            return;
        }
        if inner.get("module").is_some() {
            self.module(key, &here);
        } else if inner.get("function").is_some() {
            if !has_example(item) {
                self.missing.insert(here);
            }
        } else if let Some(impls) = ["struct", "enum", "union"]
            .iter()
            .find_map(|k| inner.get(*k))
            .and_then(|t| t["impls"].as_array())
        {
            for imp in impls {
                self.methods(&id_key(imp), &here);
            }
        }
    }

    /// The public methods of an inherent impl.
    fn methods(&mut self, impl_id: &str, ty: &str) {
        let Some(imp) = self.index.get(impl_id).map(|i| &i["inner"]["impl"]) else {
            return;
        };
        if !imp["trait"].is_null() {
            return;
        }
        for f in imp["items"].as_array().into_iter().flatten() {
            let key = id_key(f);
            let Some(item) = self.index.get(&key) else {
                continue;
            };
            if item["visibility"] == "public"
                && self.seen.insert(key)
                && item["inner"].get("function").is_some()
                && !has_example(item)
            {
                let name = item["name"].as_str().unwrap_or("_");
                self.missing.insert(format!("{ty}::{name}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names() {
        assert!(is_entry("tickwire::ws::Client::connect_with"));
        assert!(!is_entry("tickwire::ws::ClientBuilder::connect_timeout"));
        assert!(is_entry("tickwire::rest::Client::get"));
        assert!(is_entry("tickwire::ws::ServerConnection::try_recv_with"));
        assert!(!is_entry("tickwire::ws::Client::local_addr"));
        assert!(!is_entry("tickwire::rest::Client::getter"));
    }

    #[test]
    fn finds_a_method_without_example() {
        let doc = serde_json::json!({
            "root": 0,
            "index": {
                "0": {"name": "k", "visibility": "public", "docs": null,
                      "inner": {"module": {"items": [1, 5]}}},
                "1": {"name": "T", "visibility": "public", "docs": null,
                      "inner": {"struct": {"impls": [2]}}},
                "2": {"name": null, "visibility": "default", "docs": null,
                      "inner": {"impl": {"trait": null, "items": [3, 4]}}},
                "3": {"name": "connect", "visibility": "public", "docs": "Connect.",
                      "inner": {"function": {}}},
                "4": {"name": "send", "visibility": "public",
                      "docs": "Send.\n```\nt.send();\n```", "inner": {"function": {}}},
                "5": {"name": "hidden", "visibility": "crate", "docs": null,
                      "inner": {"function": {}}}
            }
        });
        let missing = missing_examples(&doc).unwrap();
        assert_eq!(missing.into_iter().collect::<Vec<_>>(), ["k::T::connect"]);
    }
}
