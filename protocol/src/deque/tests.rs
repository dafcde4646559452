//! The deque's protocols run by threads of one process on an in-process
//! model of the words (CPU atomics standing for the remote operations):
//! one owner pushing and popping like a spawning task, thieves claiming and
//! releasing. Every interleaving the threads produce must hand each entry
//! to exactly one side and never let the owner reuse a slot (or its frames)
//! before the thief that claimed it has released it.

use super::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

const CAPACITY: usize = 64;

/// One rank's words, as plain shared memory.
struct Words {
    tail: AtomicU64,
    head: AtomicU64,
    lock: AtomicU64,
    packed: AtomicU64,
    attention: AtomicBool,
    slots: Vec<[AtomicU64; 2]>,
    /// What the "frames" of the entry in each slot are: its id, written
    /// by the owner at push. A thief checks they are unchanged until it
    /// releases the entry.
    frames: Vec<AtomicU64>,
}

impl Words {
    fn new() -> Arc<Words> {
        Arc::new(Words {
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
            lock: AtomicU64::new(0),
            packed: AtomicU64::new(0),
            attention: AtomicBool::new(false),
            slots: (0..CAPACITY).map(|_| [AtomicU64::new(0), AtomicU64::new(0)]).collect(),
            frames: (0..CAPACITY).map(|_| AtomicU64::new(0)).collect(),
        })
    }
}

struct Own(Arc<Words>);

impl OwnWords for Own {
    fn tail(&self) -> &AtomicU64 {
        &self.0.tail
    }
    fn head(&self) -> &AtomicU64 {
        &self.0.head
    }
    fn slot(&self, i: u64) -> *mut Entry {
        self.0.slots[i as usize].as_ptr() as *mut Entry
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        self.0.packed.fetch_add(value, SeqCst)
    }
    fn split_load(&self) -> u64 {
        self.0.packed.load(SeqCst)
    }
    fn split_compare_swap(&self, current: u64, new: u64) -> u64 {
        match self.0.packed.compare_exchange(current, new, SeqCst, SeqCst) {
            Ok(v) | Err(v) => v,
        }
    }
    fn split_store(&self, value: u64) {
        self.0.packed.store(value, SeqCst)
    }
    fn lock(&self) {
        while self.0.lock.compare_exchange(0, 1, SeqCst, SeqCst).is_err() {
            std::hint::spin_loop();
        }
    }
    fn unlock(&self) {
        self.0.lock.store(0, SeqCst)
    }
    fn wait(&self) {
        std::thread::yield_now()
    }
}

struct Thief(Arc<Words>);

impl VictimWords for Thief {
    fn split_load(&self) -> u64 {
        self.0.packed.load(SeqCst)
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        self.0.packed.fetch_add(value, SeqCst)
    }
    fn request(&self) {
        self.0.attention.store(true, SeqCst)
    }
    fn entry(&self, i: u64) -> Entry {
        let s = &self.0.slots[i as usize];
        Entry {
            ctx: s[0].load(SeqCst),
            top: s[1].load(SeqCst),
        }
    }
    fn release_entry(&self, i: u64) {
        self.0.slots[i as usize][1].store(0, SeqCst)
    }
    fn try_lock(&self) -> bool {
        self.0.lock.fetch_add(1, SeqCst) == 0
    }
    fn unlock(&self) {
        self.0.lock.store(0, SeqCst)
    }
    fn head_and_tail(&self) -> (u64, u64) {
        (self.0.head.load(SeqCst), self.0.tail.load(SeqCst))
    }
    fn put_head(&self, head: u64) {
        self.0.head.store(head, SeqCst)
    }
    fn get_tail(&self) -> u64 {
        self.0.tail.load(SeqCst)
    }
}

/// xorshift, for the owner's and thieves' choices.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Thieves' attempts in flight, and a gate the owner closes to let them
/// drain: with the gate closed and none in flight, no thief holds a claim
/// or the lock, so a claimed entry not yet released (or a lock still held)
/// was lost. Ends the owner's waits (which would otherwise spin forever
/// when a release or unlock is skipped) with an error, never a hang, and
/// without timing: the thieves finish an attempt in a bounded number of
/// their own steps.
#[derive(Default)]
struct Gate {
    closed: AtomicBool,
    in_flight: AtomicU64,
    /// The first error any thread saw.
    failure: Mutex<Option<String>>,
}

impl Gate {
    /// A thief enters an attempt; false while the gate is closed.
    fn enter(&self) -> bool {
        self.in_flight.fetch_add(1, SeqCst);
        if self.closed.load(SeqCst) {
            self.in_flight.fetch_sub(1, SeqCst);
            return false;
        }
        true
    }
    fn leave(&self) {
        self.in_flight.fetch_sub(1, SeqCst);
    }
    /// Runs `check` with no thief in an attempt (SeqCst on both words:
    /// a thief that entered after the close saw it closed).
    fn drained<T>(&self, check: impl FnOnce() -> T) -> T {
        self.closed.store(true, SeqCst);
        while self.in_flight.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
        let r = check();
        self.closed.store(false, SeqCst);
        r
    }
    fn fail(&self, why: String) {
        self.failure.lock().unwrap().get_or_insert(why);
    }
    fn failed(&self) -> bool {
        self.failure.lock().unwrap().is_some()
    }
}

/// The owner's words with the model's checks on its waits.
struct Checked {
    own: Own,
    gate: Arc<Gate>,
}

impl OwnWords for Checked {
    fn tail(&self) -> &AtomicU64 {
        self.own.tail()
    }
    fn head(&self) -> &AtomicU64 {
        self.own.head()
    }
    fn slot(&self, i: u64) -> *mut Entry {
        self.own.slot(i)
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        self.own.split_fetch_add(value)
    }
    fn split_load(&self) -> u64 {
        self.own.split_load()
    }
    fn split_compare_swap(&self, current: u64, new: u64) -> u64 {
        self.own.split_compare_swap(current, new)
    }
    fn split_store(&self, value: u64) {
        self.own.split_store(value)
    }
    fn lock(&self) {
        let w = &self.own.0;
        let mut tries = 0u32;
        while w.lock.compare_exchange(0, 1, SeqCst, SeqCst).is_err() {
            tries += 1;
            if tries.is_multiple_of(1024) {
                // Only a thief mid-attempt may hold the lock: drained, a
                // held lock is one nobody will unlock.
                let lost = self.gate.drained(|| w.lock.load(SeqCst) != 0);
                if lost || self.gate.failed() {
                    self.gate
                        .fail("the owner waits for a lock no thief holds (an unlock was lost)".into());
                    // Stop the run: take the lock over.
                    w.lock.store(1, SeqCst);
                    return;
                }
            }
            std::hint::spin_loop();
        }
    }
    fn unlock(&self) {
        self.own.unlock()
    }
    fn wait(&self) {
        // Called while claimed entries below `tail` are not yet released
        // (split protocol, 3.).
        let w = &self.own.0;
        let lost = self.gate.drained(|| {
            let t = w.tail.load(SeqCst) as usize;
            (0..t).find(|&i| w.slots[i][1].load(SeqCst) != 0)
        });
        if let Some(i) = lost.or(self.gate.failed().then_some(0)) {
            self.gate.fail(format!(
                "the owner waits for entry {i}, which no thief will release (a release was lost)"
            ));
            // Stop the run: release every entry in the thieves' place.
            for s in &w.slots {
                s[1].store(0, SeqCst);
            }
        }
        std::thread::yield_now()
    }
}

/// Runs an owner against `thieves` thieves for `steps` owner operations,
/// and on until the thieves have stolen `min_steals` entries (threads may
/// start late on a loaded machine); checks that every entry went to exactly
/// one side; returns how many were stolen.
fn run(protocol: Protocol, empty_check: bool, thieves: usize, steps: u64, seed: u64) -> u64 {
    try_run(
        protocol,
        empty_check,
        thieves,
        steps,
        seed,
        crate::mutation::Mutation::None,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// [`run`] with the threads running `mutation` (the feature `mutations`);
/// the first check that failed as an error, never a panic or a hang.
fn try_run(
    protocol: Protocol,
    empty_check: bool,
    thieves: usize,
    steps: u64,
    seed: u64,
    mutation: crate::mutation::Mutation,
) -> Result<u64, String> {
    #[cfg(feature = "mutations")]
    crate::mutation::set(mutation);
    #[cfg(not(feature = "mutations"))]
    let _ = mutation;
    let min_steals = if thieves == 0 { 0 } else { 100 };
    let words = Words::new();
    let gate = Arc::new(Gate::default());
    let stop = Arc::new(AtomicBool::new(false));
    let stolen = Arc::new(Mutex::new(Vec::new()));
    let steals = Arc::new(AtomicU64::new(0));
    let attempts = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..thieves)
        .map(|k| {
            let (w, stop, stolen, steals) = (words.clone(), stop.clone(), stolen.clone(), steals.clone());
            let (gate, attempts) = (gate.clone(), attempts.clone());
            std::thread::spawn(move || {
                #[cfg(feature = "mutations")]
                crate::mutation::set(mutation);
                let v = Thief(w.clone());
                let mut rng = seed ^ ((k as u64 + 1) * 0x9E37_79B9);
                let mut mine = Vec::new();
                while !stop.load(SeqCst) {
                    if !gate.enter() {
                        std::thread::yield_now();
                        continue;
                    }
                    attempts.fetch_add(1, SeqCst);
                    let mut times = ClaimTimes::default();
                    match claim(&v, protocol, empty_check, || 0, &mut times) {
                        Ok(c) => {
                            let id = c.entry.ctx;
                            let frames = &w.frames[c.index as usize];
                            if c.entry.top != id + 1 {
                                gate.fail(format!("a claimed entry is not whole: {:?}", c.entry));
                            } else if frames.load(SeqCst) != id {
                                gate.fail(format!("entry {id}: its frames were reused before the copy"));
                            }
                            for _ in 0..next(&mut rng) % 64 {
                                std::hint::spin_loop();
                            }
                            if frames.load(SeqCst) != id {
                                gate.fail(format!(
                                    "entry {id}: the owner reused a claimed entry's frames before its release"
                                ));
                            }
                            release(&v, protocol, &c);
                            mine.push(id);
                            steals.fetch_add(1, SeqCst);
                            gate.leave();
                        }
                        Err(_) => {
                            gate.leave();
                            std::thread::yield_now()
                        }
                    }
                }
                stolen.lock().unwrap().extend(mine);
            })
        })
        .collect();

    let dq = Deque::new(
        Checked {
            own: Own(words.clone()),
            gate: gate.clone(),
        },
        CAPACITY,
        protocol,
        Thieves::Possible,
    );
    let mut rng = seed;
    let mut stack: Vec<u64> = Vec::new();
    let mut popped = Vec::new();
    let mut pushed = 0u64;
    let pop = |stack: &mut Vec<u64>, popped: &mut Vec<u64>| {
        let expected = stack.pop().expect("the owner pops what it pushed");
        match dq.pop() {
            Some(e) => {
                if e.ctx != expected {
                    gate.fail(format!("the owner popped {} where it pushed {expected}", e.ctx));
                }
                popped.push(e.ctx);
            }
            // Every entry was claimed: the owner's view is empty.
            None => stack.clear(),
        }
    };
    let started = std::time::Instant::now();
    let mut step = 0;
    // Past `steps`, the owner goes on until `min_steals`; without them
    // after this many more owner steps *and* thief attempts (both sides
    // ran, whatever the machine's load), the steals are missing.
    let patience = 10 * steps.max(1);
    let attempts_at_steps = std::cell::Cell::new(None);
    while step < steps || steals.load(SeqCst) < min_steals {
        step += 1;
        if gate.failed() {
            break;
        }
        if step == steps {
            attempts_at_steps.set(Some(attempts.load(SeqCst)));
        }
        if let Some(a0) = attempts_at_steps.get() {
            if step > steps + patience && attempts.load(SeqCst) > a0 + patience {
                gate.fail(format!(
                    "thieves stole {} entries in {step} owner steps and {} attempts (steals are missing)",
                    steals.load(SeqCst),
                    attempts.load(SeqCst)
                ));
                break;
            }
            std::thread::yield_now();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "thieves stole {} entries in 300 s",
            steals.load(SeqCst)
        );
        if words.attention.swap(false, SeqCst) {
            dq.expose();
        }
        let t = words.tail.load(SeqCst) as usize;
        if next(&mut rng).is_multiple_of(2) && t < CAPACITY {
            let id = (pushed + 1) * 2;
            pushed += 1;
            words.frames[t].store(id, SeqCst);
            let e = Entry { ctx: id, top: id + 1 };
            assert!(if dq.is_empty() { dq.push_bottom(e) } else { dq.push(e) });
            stack.push(id);
        } else if !stack.is_empty() {
            pop(&mut stack, &mut popped);
        }
    }
    while !stack.is_empty() && !gate.failed() {
        pop(&mut stack, &mut popped);
    }
    stop.store(true, SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    #[cfg(feature = "mutations")]
    crate::mutation::set(crate::mutation::Mutation::None);
    if let Some(f) = gate.failure.lock().unwrap().take() {
        return Err(format!("{f} ({protocol:?}, ec {empty_check}, seed {seed})"));
    }
    let mut all = popped;
    let stolen = stolen.lock().unwrap().clone();
    all.extend(&stolen);
    all.sort_unstable();
    let expect: Vec<u64> = (1..=pushed).map(|i| i * 2).collect();
    if all != expect {
        let mut twice = all.clone();
        twice.dedup();
        return Err(format!(
            "not every entry was taken exactly once: {} taken of {pushed}, {} twice ({protocol:?}, ec {empty_check}, seed {seed})",
            all.len(),
            all.len() - twice.len()
        ));
    }
    assert!(dq.is_empty());
    eprintln!(
        "{protocol:?} ec={empty_check} thieves={thieves}: {pushed} entries, {} stolen, {step} owner steps, {} attempts",
        stolen.len(),
        attempts.load(SeqCst)
    );
    Ok(stolen.len() as u64)
}

#[test]
fn packing_round_trips_and_split_decrements() {
    for (h, s) in [(0, 0), (5, 9), (HEAD_MASK, MAX_CAPACITY as u64)] {
        assert_eq!(unpack(pack(h, s)), (h, s));
    }
    assert_eq!(unpack(pack(7, 9).wrapping_add(SPLIT_DECREMENT)), (7, 8));
    assert_eq!(unpack(pack(7, 9) + 1), (8, 9));
}

#[test]
fn one_rank_gets_every_entry_back() {
    // No thief: only bottom entries are ever shared, and the owner takes
    // them back.
    assert_eq!(run(Protocol::Split, true, 0, 20_000, 3), 0);
    assert_eq!(run(Protocol::Paper, true, 0, 20_000, 3), 0);
}

#[test]
fn split_protocol_hands_each_entry_to_one_side() {
    for (thieves, ec, seed) in [(1, true, 1), (1, false, 2), (3, true, 3), (3, false, 4)] {
        assert!(run(Protocol::Split, ec, thieves, 200_000, seed) >= 100);
    }
}

#[test]
fn paper_protocol_hands_each_entry_to_one_side() {
    for (thieves, ec, seed) in [(1, true, 5), (1, false, 6), (3, true, 7)] {
        assert!(run(Protocol::Paper, ec, thieves, 200_000, seed) >= 100);
    }
}

#[test]
fn split_claims_fail_until_the_owner_exposes() {
    let words = Words::new();
    let dq = Deque::new(Own(words.clone()), CAPACITY, Protocol::Split, Thieves::Possible);
    let v = Thief(words.clone());
    assert!(dq.push_bottom(Entry { ctx: 2, top: 3 }));
    for id in [4, 6] {
        assert!(dq.push(Entry { ctx: id, top: id + 1 }));
    }
    let mut t = ClaimTimes::default();
    // The bottom entry was shared at its push.
    let bottom = claim(&v, Protocol::Split, true, || 0, &mut t).unwrap();
    assert_eq!((bottom.index, bottom.entry.ctx), (0, 2));
    release(&v, Protocol::Split, &bottom);
    // The others are private until a thief asks and the owner exposes.
    assert_eq!(claim(&v, Protocol::Split, true, || 0, &mut t), Err(Miss::Empty));
    assert!(words.attention.load(SeqCst), "an empty check asks the owner for work");
    assert_eq!(claim(&v, Protocol::Split, false, || 0, &mut t), Err(Miss::ClaimFailed));
    assert!(dq.expose());
    // The failed claim inflated head; the expose set it back.
    let c = claim(&v, Protocol::Split, true, || 0, &mut t).unwrap();
    assert_eq!(
        (c.index, c.entry.ctx),
        (1, 4),
        "the oldest private entry is exposed first"
    );
    assert_eq!(claim(&v, Protocol::Split, false, || 0, &mut t), Err(Miss::ClaimFailed));
    release(&v, Protocol::Split, &c);
    assert!(dq.stolen(1) && !dq.stolen(2));
    assert_eq!(dq.pop().map(|e| e.ctx), Some(6));
    assert_eq!(dq.pop(), None, "the rest was stolen");
    assert!(dq.is_empty());
    assert_eq!(unpack(words.packed.load(SeqCst)), (0, 0), "the deque starts over");
}

#[test]
fn expose_from_the_bottom_resets_failed_claims() {
    // Failed claims on an empty deque inflate head; the bottom push's
    // store (split 0 -> 1) resets it, so the next claim takes entry 0.
    let words = Words::new();
    let dq = Deque::new(Own(words.clone()), CAPACITY, Protocol::Split, Thieves::Possible);
    let v = Thief(words.clone());
    let mut t = ClaimTimes::default();
    for _ in 0..3 {
        assert_eq!(claim(&v, Protocol::Split, false, || 0, &mut t), Err(Miss::ClaimFailed));
    }
    assert_eq!(unpack(words.packed.load(SeqCst)), (3, 0));
    assert!(dq.push_bottom(Entry { ctx: 2, top: 3 }));
    assert_eq!(unpack(words.packed.load(SeqCst)), (0, 1));
    let c = claim(&v, Protocol::Split, false, || 0, &mut t).unwrap();
    assert_eq!((c.index, c.entry.ctx), (0, 2));
    release(&v, Protocol::Split, &c);
    assert_eq!(dq.pop(), None, "the bottom entry was stolen");
    assert_eq!(unpack(words.packed.load(SeqCst)), (0, 0));
}

#[test]
fn a_deque_without_thieves_keeps_its_bottom_entry_private() {
    let words = Words::new();
    let dq = Deque::new(Own(words.clone()), CAPACITY, Protocol::Split, Thieves::None);
    assert!(dq.push_bottom(Entry { ctx: 2, top: 3 }));
    assert_eq!(unpack(words.packed.load(SeqCst)), (0, 0), "nothing shared");
    assert_eq!(dq.pop().map(|e| e.ctx), Some(2));
    assert_eq!(unpack(words.packed.load(SeqCst)), (0, 0), "a private pop: no atomic");
    assert!(dq.is_empty());
}

#[test]
fn a_push_above_the_newest_entry_ends_at_its_record_even_when_it_was_stolen() {
    // The running thread's frames end at its parent's record, the newest
    // entry's ctx (Worker::thread_top): each push above it takes that as
    // its top, and a thief's release (which rewrites only `top`) leaves the
    // ctx the next push reads.
    let words = Words::new();
    let dq = Deque::new(Own(words.clone()), CAPACITY, Protocol::Split, Thieves::Possible);
    let v = Thief(words.clone());
    let mut t = ClaimTimes::default();
    assert!(dq.push_bottom(Entry { ctx: 900, top: 1000 }));
    assert_eq!(dq.newest_ctx(), Some(900));
    // SAFETY: the deque is not empty.
    assert!(unsafe { dq.push_above_newest(800) });
    let stolen = claim(&v, Protocol::Split, true, || 0, &mut t).unwrap();
    assert_eq!((stolen.index, stolen.entry), (0, Entry { ctx: 900, top: 1000 }));
    release(&v, Protocol::Split, &stolen);
    assert!(dq.expose());
    let stolen = claim(&v, Protocol::Split, true, || 0, &mut t).unwrap();
    assert_eq!(
        stolen.entry,
        Entry { ctx: 800, top: 900 },
        "its top is the entry below's ctx"
    );
    release(&v, Protocol::Split, &stolen);
    assert_eq!(dq.newest_ctx(), Some(800), "a released entry keeps its ctx");
    // SAFETY: the deque is not empty (both entries stolen, none popped).
    assert!(unsafe { dq.push_above_newest(700) });
    assert_eq!(dq.pop(), Some(Entry { ctx: 700, top: 800 }));
    assert_eq!(dq.pop(), None, "the rest was stolen");
    assert_eq!(dq.newest_ctx(), None);
}

/// Each mutation of the deque's steps (`crate::mutation`) run through the
/// interleaving model above: the model's own checks must fail, with an
/// error (never a hang).
#[cfg(feature = "mutations")]
mod mutations {
    use super::*;
    use crate::mutation::Mutation;

    /// The model's error with `mutation` on, on the first of a few seeds
    /// that catches it.
    fn caught(protocol: Protocol, empty_check: bool, mutation: Mutation) -> String {
        // Fewer owner steps where the error is the steals' absence (the
        // model then waits ten times as long for them).
        let steps = if mutation == Mutation::EmptyCheckInverted {
            20_000
        } else {
            200_000
        };
        for seed in 1..=200 {
            if let Err(e) = try_run(protocol, empty_check, 3, steps, seed, mutation) {
                eprintln!("{mutation:?}: {e}");
                return e;
            }
        }
        panic!("the model did not catch {mutation:?} ({protocol:?}, ec {empty_check})");
    }

    #[test]
    fn a_claim_without_its_fetch_and_add_hands_an_entry_out_twice() {
        let e = caught(Protocol::Split, true, Mutation::ClaimSkipsFetchAdd);
        assert!(
            e.contains("exactly once") || e.contains("reused") || e.contains("not whole") || e.contains("popped"),
            "{e}"
        );
    }

    #[test]
    fn a_claim_without_the_lock_hands_an_entry_out_twice() {
        let e = caught(Protocol::Paper, false, Mutation::ClaimSkipsFetchAdd);
        assert!(
            e.contains("exactly once") || e.contains("reused") || e.contains("not whole") || e.contains("popped"),
            "{e}"
        );
    }

    #[test]
    fn a_skipped_release_leaves_the_owner_waiting_and_is_reported() {
        let e = caught(Protocol::Split, true, Mutation::ReleaseSkipped);
        assert!(e.contains("a release was lost"), "{e}");
    }

    #[test]
    fn a_skipped_unlock_leaves_the_owner_waiting_and_is_reported() {
        let e = caught(Protocol::Paper, true, Mutation::UnlockSkipped);
        assert!(e.contains("an unlock was lost"), "{e}");
    }

    #[test]
    fn an_inverted_empty_check_steals_nothing() {
        for protocol in [Protocol::Split, Protocol::Paper] {
            let e = caught(protocol, true, Mutation::EmptyCheckInverted);
            assert!(e.contains("steals are missing"), "{e}");
        }
    }

    #[test]
    fn the_same_models_pass_without_a_mutation() {
        for (protocol, ec) in [
            (Protocol::Split, true),
            (Protocol::Paper, false),
            (Protocol::Paper, true),
        ] {
            assert!(try_run(protocol, ec, 3, 200_000, 1, Mutation::None).unwrap() >= 100);
        }
    }
}
