//! Where the workspace and its target directory are, and which `cargo` to call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Workspace {
    /// The directory holding the workspace's Cargo.toml.
    pub root: PathBuf,
    /// Cargo's target directory (honours CARGO_TARGET_DIR and build.target-dir).
    pub target: PathBuf,
}

impl Workspace {
    /// Asks `cargo metadata`, so the target directory is the one cargo itself uses.
    pub fn locate() -> Result<Self, String> {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let guess = manifest_dir.parent().unwrap_or(manifest_dir);
        let output = Command::new(cargo())
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .current_dir(guess)
            .output()
            .map_err(|e| format!("cannot run `cargo metadata`: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "`cargo metadata` failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let meta: serde_json::Value = serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("cannot parse `cargo metadata` output: {e}"))?;
        let field = |name: &str| {
            meta[name]
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("`cargo metadata` has no {name}"))
        };
        Ok(Self {
            root: field("workspace_root")?,
            target: field("target_directory")?,
        })
    }
}

/// The cargo that runs us (same toolchain), or the one on PATH.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}
