//! A watchdog for tests whose failure mode is blocking forever: the body runs on its
//! own thread and the test fails, instead of hanging, if it outlives the limit. The
//! limit is never what a test measures: bodies wait for events, and a passing body
//! finishes far below it on any machine.
#![allow(dead_code)]

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Longest any test may take before the watchdog fails it.
pub const WATCHDOG: Duration = Duration::from_secs(60);

/// Run `f` on its own thread; fail if it panics or outlives the watchdog.
pub fn watchdog(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("test blocked past {WATCHDOG:?}"),
    }
}
