//! Harness for tickwire's conformance and interop tests (the tests live in `tests/`).
//!
//! It runs real servers that nobody here wrote on 127.0.0.1, each on a free port, waits
//! until they accept connections and stops them when the guard is dropped:
//!
//! - [`Httpbin`]: PyPI `httpbin` served by `gunicorn` from the venv that
//!   `conformance/http/setup.sh` installs under `<target>/httpbin-venv`;
//! - [`Nginx`]: Debian's `nginx` with a config of our own in a temp dir (static files
//!   including a large one, a chunked response, a close-delimited response, keep-alive),
//!   optionally with a TLS listener too;
//! - [`Tinyproxy`] and [`Microsocks`]: Debian's HTTP `CONNECT` proxy (Basic auth on) and
//!   SOCKS5 server (with or without a username and password).
//!
//! A missing peer is reported by [`PeerError::Absent`]; [`skip_or_fail`] turns that into
//! a loud skip, or into a failure when `TICKWIRE_REQUIRE_PEERS` is set (as in CI).

mod httpbin;
mod nginx;
mod peer;
mod process;
mod proxies;
mod websockets;

pub use httpbin::Httpbin;
pub use nginx::{Nginx, TlsFiles};
pub use peer::{PeerError, pattern, peers_required, skip_or_fail};
pub use process::{ServerProcess, TempDir, free_port};
pub use proxies::{Microsocks, Tinyproxy};
pub use websockets::websockets_python;
