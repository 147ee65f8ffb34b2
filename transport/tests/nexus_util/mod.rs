//! nexus-async-rt for the futures-io drivers: its TCP stream behind the futures-io
//! traits (its own `AsyncRead` / `AsyncWrite` mirror them; `poll_shutdown` is
//! `poll_close`) and its timer wheel as the connections' [`Timer`]. What a user of that
//! runtime writes once; shared by the tests, the conformance suite and perf.
#![allow(dead_code)]

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tickwire::futures_io::Timer;

/// nexus-async-rt's TCP stream as a futures-io stream.
#[derive(Debug)]
pub struct NexusTcp(pub nexus_async_rt::TcpStream);

impl futures_io::AsyncRead for NexusTcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        nexus_async_rt::AsyncRead::poll_read(Pin::new(&mut self.0), cx, buf)
    }
}

impl futures_io::AsyncWrite for NexusTcp {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        nexus_async_rt::AsyncWrite::poll_write(Pin::new(&mut self.0), cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        nexus_async_rt::AsyncWrite::poll_flush(Pin::new(&mut self.0), cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        nexus_async_rt::AsyncWrite::poll_shutdown(Pin::new(&mut self.0), cx)
    }
}

/// nexus-async-rt's timer wheel, as a [`Timer`] whose `Pending` always leaves a
/// wake-up armed, and whose dropped timers leave the wheel soon.
///
/// nexus-async-rt 0.7's `Sleep` does not, polled as it is: its wheel (nexus-timer,
/// 1 ms ticks) rounds a deadline down to its tick and fires the entry (wakes the
/// task, forgets the entry) as soon as the clock reaches that tick, up to a tick
/// before the deadline; the `Sleep` polled then reads the clock, answers `Pending`
/// and schedules nothing (it schedules on its first poll, or for another task's
/// waker only). The task sleeps until some other wake-up: another timer of the
/// runtime, or never. So the wheel's entry here is for one tick past the point it
/// stands for (it fires after it), and that point is read from the clock.
///
/// The wheel cannot cancel an entry either: a dropped `Sleep`'s stays until it
/// fires, and while it waits every turn of the runtime walks the wheel for it (about
/// 350 instructions per round trip on a WebSocket connection whose 10 s handshake
/// timeout was armed). So an entry stands for at most [`HORIZON`] ahead: a timer
/// dropped early (the handshake done, the data in) leaves the wheel within it, and a
/// longer wait re-arms once per horizon.
pub struct NexusTimer {
    /// For `rearm` plus one tick.
    sleep: nexus_async_rt::Sleep,
    /// The point the wheel's entry stands for: the deadline, or the horizon before it.
    rearm: Instant,
    deadline: Instant,
}

impl std::fmt::Debug for NexusTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NexusTimer")
            .field("deadline", &self.deadline)
            .field("rearm", &self.rearm)
            .finish_non_exhaustive()
    }
}

/// The tick of nexus-async-rt's timer wheel (fixed in 0.7).
const WHEEL_TICK: Duration = Duration::from_millis(1);

/// The furthest ahead a wheel entry is scheduled.
pub const HORIZON: Duration = Duration::from_millis(20);

impl NexusTimer {
    /// The wheel's entry for `deadline`, from `now`: the deadline or the horizon.
    fn arm(deadline: Instant, now: Instant) -> (nexus_async_rt::Sleep, Instant) {
        let rearm = deadline.min(now + HORIZON);
        (nexus_async_rt::sleep_until(rearm + WHEEL_TICK), rearm)
    }
}

impl Timer for NexusTimer {
    fn at(deadline: Instant) -> Self {
        let (sleep, rearm) = Self::arm(deadline, Instant::now());
        NexusTimer {
            sleep,
            rearm,
            deadline,
        }
    }

    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        if now >= self.deadline {
            return Poll::Ready(());
        }
        if now >= self.rearm {
            // The horizon passed (its entry fired, or is about to): the next one.
            (self.sleep, self.rearm) = Self::arm(self.deadline, now);
        }
        // The entry fires only once the clock is past `rearm`, which it is not: it is
        // still in the wheel, or this schedules it (the first poll, another task).
        Pin::new(&mut self.sleep).poll(cx)
    }
}

/// Sleep for `d` on nexus-async-rt's timer wheel (through [`NexusTimer`]: the
/// runtime's own `sleep` may never wake).
pub async fn sleep(d: Duration) {
    let mut t = NexusTimer::at(Instant::now() + d);
    std::future::poll_fn(|cx| t.poll_expired(cx)).await
}

/// Run `f` to completion on a fresh nexus-async-rt runtime on this thread.
pub fn block_on<F: Future + 'static>(f: F) -> F::Output {
    let mut world = nexus_rt::WorldBuilder::new().build();
    let mut rt = nexus_async_rt::Runtime::new(&mut world);
    rt.block_on(f)
}

/// Connect to `addr` with nexus-async-rt's TCP stream (`TCP_NODELAY` on).
pub fn connect(addr: std::net::SocketAddr) -> NexusTcp {
    let tcp = nexus_async_rt::TcpStream::connect(addr).unwrap();
    tcp.set_nodelay(true).unwrap();
    NexusTcp(tcp)
}

/// The first of two futures to finish (the other is dropped): `Ok` for `a`.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Result<A::Output, B::Output> {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(r) = a.as_mut().poll(cx) {
            return Poll::Ready(Ok(r));
        }
        b.as_mut().poll(cx).map(Err)
    })
    .await
}

/// A REST connector making nexus-async-rt TCP streams (the system resolver for names).
#[derive(Debug, Clone, Copy, Default)]
pub struct NexusConnector;

impl tickwire::futures_io::rest::Connect for NexusConnector {
    type Stream = NexusTcp;

    fn connect(&self, host: &str, port: u16) -> impl Future<Output = io::Result<NexusTcp>> {
        use std::net::ToSocketAddrs;
        let addr = (host, port)
            .to_socket_addrs()
            .and_then(|mut a| a.next().ok_or_else(|| io::ErrorKind::NotFound.into()));
        async move {
            let tcp = nexus_async_rt::TcpStream::connect(addr?)?;
            tcp.set_nodelay(true)?;
            Ok(NexusTcp(tcp))
        }
    }
}
