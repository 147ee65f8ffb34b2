//! Turn-taking for interleaved sampling.
//!
//! The rows of one scenario run on their own threads, all pinned to the
//! measuring core, and take timed samples only while they hold the baton of
//! a [`Rotation`]. The baton goes round the rows in row order, one slice of
//! sampling each, so the rows of a scenario see the same neighbours, the
//! same clock and the same load, and their ratio is what survives a noisy
//! machine. One pass of the baton round every row still taking turns is a
//! *round*; the harness records a p50 per row per round.
//!
//! The baton is first handed out once every row has either asked for it or
//! left: a row's setup (building inputs, connecting, verifying) never
//! overlaps another row's sampling. A row leaves when its whole run is over
//! (teardown included: it keeps the baton until then), after which it gets
//! no more turns. Waiting is blocking (a [`Condvar`]), never spinning.
//!
//! A thread takes a seat with [`sit`]; [`crate::harness::bench_batch`] finds
//! it with [`current`] and samples in turns; without a seat it samples in one
//! go as before (`--sequential`, and `--instructions`, which counts and does
//! not time).

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Where a row stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seat {
    /// Still setting up: has not asked for the baton yet.
    Setup,
    /// Takes turns.
    In,
    /// Done: takes no more turns.
    Out,
}

#[derive(Debug)]
struct State {
    seats: Vec<Seat>,
    holder: Option<usize>,
    round: u32,
}

impl State {
    /// The next row taking turns after `id` in row order (wrapping, `id`
    /// itself last), and whether getting there wraps into a new round.
    fn next_after(&self, id: usize) -> Option<(usize, bool)> {
        let n = self.seats.len();
        (1..=n)
            .map(|k| (id + k) % n)
            .find(|&j| self.seats[j] == Seat::In)
            .map(|j| (j, j <= id))
    }

    /// Hand the baton to `id`'s successor (or to nobody if no row is left).
    fn hand_on(&mut self, id: usize) {
        self.holder = self.next_after(id).map(|(j, wrap)| {
            if wrap {
                self.round += 1;
            }
            j
        });
    }

    /// Start the rotation once no row is still setting up.
    fn start_if_ready(&mut self) {
        if self.holder.is_none() && !self.seats.contains(&Seat::Setup) {
            self.holder = self.seats.iter().position(|s| *s == Seat::In);
        }
    }
}

/// A turn: the round it belongs to and whether another row ran since this
/// row's last turn (its caches and branch history are then someone else's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// Round number, from 0.
    pub round: u32,
    /// Whether another row held the baton since this row last did.
    pub others_ran: bool,
}

/// A baton shared by the rows of one scenario (row ids 0..n, in row order).
#[derive(Debug)]
pub struct Rotation {
    slice: Duration,
    state: Mutex<State>,
    changed: Condvar,
}

impl Rotation {
    /// A rotation for `rows` rows, each sampling `slice` per turn.
    pub fn new(rows: usize, slice: Duration) -> Self {
        Rotation {
            slice,
            state: Mutex::new(State {
                seats: vec![Seat::Setup; rows],
                holder: None,
                round: 0,
            }),
            changed: Condvar::new(),
        }
    }

    /// Sampling time of one turn.
    pub fn slice(&self) -> Duration {
        self.slice
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A row that panicked while holding the lock left a consistent state
        // (every update is a few assignments); carry on so others can finish.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Block until row `id` holds the baton.
    fn wait_for<'a>(&'a self, mut st: MutexGuard<'a, State>, id: usize) -> MutexGuard<'a, State> {
        while st.holder != Some(id) {
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st
    }

    /// Row `id` is ready to sample: block until it holds the baton (at once
    /// if it already does). The first turn is given only when no row is
    /// still setting up.
    pub fn acquire(&self, id: usize) -> Turn {
        let mut st = self.lock();
        if st.holder == Some(id) {
            return Turn {
                round: st.round,
                others_ran: false,
            };
        }
        if st.seats[id] == Seat::Setup {
            st.seats[id] = Seat::In;
        }
        st.start_if_ready();
        self.changed.notify_all();
        let st = self.wait_for(st, id);
        Turn {
            round: st.round,
            others_ran: true,
        }
    }

    /// Row `id`, holding the baton, ends its turn: the next row takes it and
    /// `id` blocks until its own turn comes back (at once if it is alone).
    pub fn pass(&self, id: usize) -> Turn {
        let mut st = self.lock();
        debug_assert_eq!(st.holder, Some(id), "pass without the baton");
        st.hand_on(id);
        let others_ran = st.holder != Some(id);
        self.changed.notify_all();
        let st = self.wait_for(st, id);
        Turn {
            round: st.round,
            others_ran,
        }
    }

    /// Row `id` is done (finished, or failed): it takes no more turns, and
    /// the baton moves on if it held it.
    pub fn leave(&self, id: usize) {
        let mut st = self.lock();
        st.seats[id] = Seat::Out;
        if st.holder == Some(id) {
            st.hand_on(id);
        }
        st.start_if_ready();
        self.changed.notify_all();
    }

    /// The row holding the baton, if any (for tests and diagnostics).
    pub fn holder(&self) -> Option<usize> {
        self.lock().holder
    }

    /// How many rows have asked for the baton or left.
    pub fn arrived(&self) -> usize {
        self.lock()
            .seats
            .iter()
            .filter(|s| **s != Seat::Setup)
            .count()
    }
}

/// A thread's place in a rotation.
#[derive(Debug, Clone)]
pub struct Place {
    /// The scenario's rotation.
    pub rotation: Arc<Rotation>,
    /// This row's id in it.
    pub id: usize,
}

impl Place {
    /// See [`Rotation::acquire`].
    pub fn acquire(&self) -> Turn {
        self.rotation.acquire(self.id)
    }

    /// See [`Rotation::pass`].
    pub fn pass(&self) -> Turn {
        self.rotation.pass(self.id)
    }

    /// See [`Rotation::slice`].
    pub fn slice(&self) -> Duration {
        self.rotation.slice()
    }
}

thread_local! {
    static PLACE: RefCell<Option<Place>> = const { RefCell::new(None) };
}

/// This thread's place, if it was given one with [`sit`].
pub fn current() -> Option<Place> {
    PLACE.with(|p| p.borrow().clone())
}

/// Leaves the rotation (and clears the thread's place) when dropped, also
/// when the row panics, so the others never wait for a row that is gone.
#[derive(Debug)]
pub struct Seated {
    place: Place,
}

impl Drop for Seated {
    fn drop(&mut self) {
        PLACE.with(|p| *p.borrow_mut() = None);
        self.place.rotation.leave(self.place.id);
    }
}

/// Give this thread row `id`'s place in `rotation` until the guard drops.
pub fn sit(rotation: Arc<Rotation>, id: usize) -> Seated {
    let place = Place { rotation, id };
    PLACE.with(|p| *p.borrow_mut() = Some(place.clone()));
    Seated { place }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Rows that want 2, 5 and 3 turns; row 2 is held in setup until rows 0
    /// and 1 wait. Every turn is logged while a flag marks "sampling": two
    /// rows in it at once would trip it.
    #[test]
    fn turns_go_round_in_order_and_never_overlap() {
        let wants = [2u32, 5, 3];
        let rot = Arc::new(Rotation::new(wants.len(), Duration::from_millis(1)));
        let sampling = AtomicBool::new(false);
        let log = Mutex::new(Vec::<(usize, u32)>::new());
        let (go, hold) = std::sync::mpsc::channel::<()>();
        let mut hold = Some(hold);
        std::thread::scope(|s| {
            for (id, &n) in wants.iter().enumerate() {
                let (rot, sampling, log) = (rot.clone(), &sampling, &log);
                let hold = if id == 2 { hold.take() } else { None };
                s.spawn(move || {
                    if let Some(h) = hold {
                        h.recv().expect("released");
                    }
                    let seat = sit(rot.clone(), id);
                    let place = current().expect("seated");
                    let mut turn = place.acquire();
                    for k in 0..n {
                        assert!(!sampling.swap(true, Ordering::SeqCst), "two rows sampling");
                        log.lock().unwrap().push((id, turn.round));
                        // The baton is still ours while we work.
                        assert_eq!(rot.holder(), Some(id));
                        sampling.store(false, Ordering::SeqCst);
                        if k + 1 < n {
                            turn = place.pass();
                        }
                    }
                    drop(seat);
                    assert!(current().is_none());
                });
            }
            // Rows 0 and 1 ask for the baton; nobody gets it while 2 sets up.
            while rot.arrived() < 2 {
                std::thread::yield_now();
            }
            assert_eq!(rot.holder(), None, "sampling started during a setup");
            go.send(()).unwrap();
        });
        let log = log.into_inner().unwrap();
        assert_eq!(
            log,
            [
                (0, 0),
                (1, 0),
                (2, 0),
                (0, 1),
                (1, 1),
                (2, 1),
                (1, 2),
                (2, 2),
                (1, 3),
                (1, 4)
            ]
        );
        assert_eq!(rot.holder(), None);
    }

    #[test]
    fn a_row_leaving_before_it_samples_releases_the_start() {
        let rot = Rotation::new(2, Duration::from_millis(1));
        rot.leave(1);
        assert_eq!(rot.acquire(0).round, 0);
        assert_eq!(rot.holder(), Some(0));
        // Alone: passing comes straight back, in a new round, nobody else ran.
        assert_eq!(
            rot.pass(0),
            Turn {
                round: 1,
                others_ran: false
            }
        );
        // Asking again while holding it is a no-op.
        assert_eq!(rot.acquire(0).round, 1);
        rot.leave(0);
        assert_eq!(rot.holder(), None);
    }

    #[test]
    fn a_holder_that_leaves_hands_the_baton_on() {
        let rot = Arc::new(Rotation::new(2, Duration::from_millis(1)));
        let r = rot.clone();
        let t = std::thread::spawn(move || {
            let seat = sit(r.clone(), 1);
            let turn = current().expect("seated").acquire();
            assert!(turn.others_ran);
            drop(seat);
            turn.round
        });
        assert_eq!(rot.acquire(0).round, 0);
        // Row 0 never passes: it leaves while holding the baton, as a
        // finished (or panicking) row does.
        rot.leave(0);
        assert_eq!(t.join().unwrap(), 0);
        assert_eq!(rot.holder(), None);
    }
}
