//! Python websockets (PyPI), the permessage-deflate interop peer: the venv
//! `conformance/websockets/setup.sh` makes under `<target>/websockets-venv`.

use std::path::PathBuf;
use std::process::Command;

use crate::peer::{PeerError, skip_or_fail};

/// The venv's python (or `$TICKWIRE_WEBSOCKETS_PYTHON`), checked to import websockets'
/// asyncio API and permessage-deflate; `None` after a loud skip when there is none, a
/// failure when `TICKWIRE_REQUIRE_PEERS` is set (see [`skip_or_fail`]).
pub fn websockets_python(test: &str) -> Option<PathBuf> {
    let candidates = std::env::var_os("TICKWIRE_WEBSOCKETS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::current_exe().ok().into_iter().flat_map(|exe| {
            exe.ancestors()
                .map(|d| d.join("websockets-venv/bin/python"))
                .collect::<Vec<_>>()
        }));
    let check = "import websockets.asyncio.server, websockets.extensions.permessage_deflate";
    let found = candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", check])
            .status()
            .is_ok_and(|s| s.success())
    });
    skip_or_fail(
        test,
        found.ok_or_else(|| {
            PeerError::Absent(
                "no Python websockets venv: run conformance/websockets/setup.sh".into(),
            )
        }),
    )
}
