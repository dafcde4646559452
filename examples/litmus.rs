//! A generated litmus matrix for global memory's consistency model
//! (docs/design/global-memory.md): every cell is one small program of a
//! few tasks on fixed ranks, run a few times; each outcome is checked
//! against what the model allows, and nothing more is asserted. Used by
//! `tests/litmus.rs` on smp, udp over real UDP and mpi without shared
//! memory, cache on and off.
//!
//! Shapes (the data `d[100]`, written 42; every allocation fresh and zeroed):
//!
//! - `mp` (message passing): the writer (rank 0) writes the data (`set`,
//!   or a write checkout) and publishes a flag `GlobalAtomicU64`; the reader
//!   (rank 1) reads the data once (`before`, caching its block), tells the
//!   writer to go, waits for the flag, reads the data again (`after`). The
//!   root reads the data (`final`) and the flag (`flag`) after joining
//!   both. `before` must be 0 (it happens before the write), `final` 42,
//!   `flag` as published, and `after` 42 where the publication is a
//!   release that the wait acquires (directly or through a relaxed
//!   read-modify-write of a third rank); with a relaxed side, `after` is a
//!   data race: any value. Cells with `swap(1, Release)` / `load(Acquire)`
//!   on elements are the probe `p1`, whose three numbers are `[after,
//!   final, flag]`, `[42, 42, 1]`.
//! - `sb` (store buffering): ranks 0 and 1 each write their data, then
//!   `swap(1)` their word X / Y, then load the other's word (`r`) and read
//!   the other's data (`payload`). SeqCst forbids both loads reading 0;
//!   Release/Acquire allows it. A word read as 1 makes its data 42.
//! - `iriw` (independent reads of independent writes, 4 ranks): ranks 0
//!   and 1 write X (with its data) and Y; rank 2 loads X then Y, rank 3 Y
//!   then X. SeqCst forbids the readers disagreeing on the order
//!   (`1 0 1 0`); Acquire loads allow it. A word read as 1 makes its data
//!   42.
//!
//! Dimensions: a read checkout of *other* elements of the data's cache
//! block (`d[101..109]`) open across the ordering operations or taken and
//! ended before them, on each side; which rank homes the data and the
//! word; the orderings. Cells needing more ranks than the job has are
//! skipped (counted).
//!
//! Output: one JSON line per cell `{cell, shape, probe, outcomes,
//! allowed}`, then `{summary: "litmus", conduit, cache, cache_fault,
//! ranks, reps, cells, skipped, violations, first_violation}`; exit 1
//! naming the first cell that saw an outcome the model forbids.
//!
//! `--probe use-after-free --home self|other`: a `GlobalSlice` copy kept
//! after `free`, checked out, an allocation of the same size made inside
//! the checkout; the closure reads element 0 before and after it
//! (`seen`): `[7, 7]`, or the job ends with a refusal. Prints
//! `{probe, home, seen, same_block, allowed}`.
//!
//!     scripts/run.sh --real-udp -n 4 -- target/udp-native/release/examples/litmus

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};

use clap::{Parser, ValueEnum};
use uat::global::{CacheFault, GlobalAtomicU64, GlobalSlice};

/// Elements of each data allocation.
const LEN: usize = 128;
/// The element written and read.
const AT: usize = 100;
/// Other elements of `AT`'s cache block, checked out across the ordering
/// operations: allocations are 64-byte aligned and blocks are multiples
/// of 4 KiB, so element 101 (byte 808) is always in element 100's block.
const OTHERS: std::ops::Range<usize> = 101..109;
/// The value written.
const V: u64 = 42;
/// How long a wait spins before it sleeps between looks (µs).
const SPIN_US: u64 = 20_000;
/// A report slot that no task wrote.
const MISSING: u64 = u64::MAX;
/// The most tasks a cell has (IRIW's four), and the most ranks a job has.
const MAX_TASKS: usize = 4;
/// Report slots per task.
const SLOTS: usize = 6;
/// The tasks' report slots.
const TASK_REPORTS: usize = MAX_TASKS * SLOTS;
/// Task 0's own looks after a run, after the tasks' reports.
const ROOT_SLOT: usize = TASK_REPORTS;
/// A run's outcome: the tasks' reports and task 0's looks.
const REPORTS: usize = ROOT_SLOT + 2;
/// The most runs of a cell.
const MAX_REPS: usize = 16;
/// Words of the selection bitmap (cells).
const SELECTED_WORDS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Shape {
    /// Message passing.
    Mp,
    /// Store buffering.
    Sb,
    /// Independent reads of independent writes.
    Iriw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Probe {
    /// A slice used after its free, an allocation inside its checkout.
    UseAfterFree,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProbeHome {
    /// The probing task's rank (0).
    #[value(name = "self")]
    Own,
    /// Rank 1.
    Other,
}

/// Runs the litmus matrix (or one probe) and checks every outcome against
/// the consistency model.
#[derive(Parser, Debug)]
#[command(name = "litmus")]
struct Options {
    /// Shapes to run (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "mp,sb,iriw")]
    shapes: Vec<Shape>,
    /// Runs of each cell (1 to 16).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=MAX_REPS as i64))]
    reps: u32,
    /// Only cells whose name contains this text.
    #[arg(long)]
    only: Option<String>,
    /// Run this probe instead of the matrix.
    #[arg(long, value_enum)]
    probe: Option<Probe>,
    /// Where the probe's memory lives.
    #[arg(long, value_enum, default_value = "self")]
    home: ProbeHome,
}

/// How the data is written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// `set` / `get`.
    Element,
    /// A write checkout / a read checkout of the one element.
    Checkout,
}

/// A message-passing cell's publication (writer) and wait (reader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sync {
    /// `swap(1, Release)` / `load(Acquire)`: the probe's.
    SwapRelease,
    /// `fetch_add(1, Release)` / `load(Acquire)`.
    FetchAddRelease,
    /// `fetch_add(1, AcqRel)` / `fetch_add(0, Acquire)`.
    FetchAddAcqRel,
    /// `compare_exchange(0, 1, Release, _)` / `compare_exchange(1, 1, Acquire, _)`.
    CasRelease,
    /// `swap(1, SeqCst)` / `load(SeqCst)`.
    SwapSeqCst,
    /// `swap(1, Release)`, a third rank's `fetch_add(1, Relaxed)` once it
    /// sees 1, the reader's `load(Acquire)` waiting for 2.
    ReleaseSequence,
    /// `swap(1, Relaxed)` / `load(Acquire)`: no order.
    RelaxedPublish,
    /// `swap(1, Release)` / `load(Relaxed)`: no order.
    RelaxedWait,
}

impl Sync {
    const ALL: [Sync; 8] = [
        Sync::SwapRelease,
        Sync::FetchAddRelease,
        Sync::FetchAddAcqRel,
        Sync::CasRelease,
        Sync::SwapSeqCst,
        Sync::ReleaseSequence,
        Sync::RelaxedPublish,
        Sync::RelaxedWait,
    ];

    fn name(self) -> &'static str {
        match self {
            Sync::SwapRelease => "swap-release.load-acquire",
            Sync::FetchAddRelease => "fetch_add-release.load-acquire",
            Sync::FetchAddAcqRel => "fetch_add-acqrel.fetch_add-acquire",
            Sync::CasRelease => "cas-release.cas-acquire",
            Sync::SwapSeqCst => "swap-seqcst.load-seqcst",
            Sync::ReleaseSequence => "swap-release.relaxed-rmw.load-acquire",
            Sync::RelaxedPublish => "swap-relaxed.load-acquire",
            Sync::RelaxedWait => "swap-release.load-relaxed",
        }
    }

    /// Whether the wait happens after the publication in the model's
    /// happens-before (so the reader's `after` must see the data).
    fn orders_data(self) -> bool {
        !matches!(self, Sync::RelaxedPublish | Sync::RelaxedWait)
    }

    /// The flag's value once everyone is done.
    fn flag_final(self) -> u64 {
        if self == Sync::ReleaseSequence {
            2
        } else {
            1
        }
    }

    fn publish(self, flag: GlobalAtomicU64) {
        match self {
            Sync::SwapRelease | Sync::ReleaseSequence | Sync::RelaxedWait => {
                flag.swap(1, Release);
            }
            Sync::FetchAddRelease => {
                flag.fetch_add(1, Release);
            }
            Sync::FetchAddAcqRel => {
                flag.fetch_add(1, AcqRel);
            }
            Sync::CasRelease => {
                let _ = flag.compare_exchange(0, 1, Release, Relaxed);
            }
            Sync::SwapSeqCst => {
                flag.swap(1, SeqCst);
            }
            Sync::RelaxedPublish => {
                flag.swap(1, Relaxed);
            }
        }
    }

    /// One look at the flag: whether the reader may go on.
    fn published(self, flag: GlobalAtomicU64) -> bool {
        match self {
            Sync::SwapRelease | Sync::FetchAddRelease | Sync::RelaxedPublish => flag.load(Acquire) != 0,
            Sync::FetchAddAcqRel => flag.fetch_add(0, Acquire) != 0,
            Sync::CasRelease => flag.compare_exchange(1, 1, Acquire, Relaxed).is_ok(),
            Sync::SwapSeqCst => flag.load(SeqCst) != 0,
            Sync::ReleaseSequence => flag.load(Acquire) == 2,
            Sync::RelaxedWait => flag.load(Relaxed) != 0,
        }
    }
}

/// Where memory lives, by role: the rank of a task of the cell (its
/// position in the gang), or a rank that runs none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Home {
    Task(usize),
    Outside,
}

impl Home {
    /// The rank: `gang` holds the tasks' ranks; an outside home is the
    /// lowest rank that runs none.
    fn rank(self, gang: &[u32]) -> u32 {
        match self {
            Home::Task(i) => gang[i],
            Home::Outside => (0..).find(|r| !gang.contains(r)).unwrap(),
        }
    }
}

/// A message-passing cell's homes: the writer's rank, the reader's, a
/// third (the relaxed read-modify-write's in `ReleaseSequence` cells, else
/// one that runs no task of the cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Writer,
    Reader,
    Third,
}

impl Place {
    const ALL: [Place; 3] = [Place::Writer, Place::Reader, Place::Third];

    fn home(self, sync: Sync) -> Home {
        match self {
            Place::Writer => Home::Task(0),
            Place::Reader => Home::Task(1),
            Place::Third if sync == Sync::ReleaseSequence => Home::Task(2),
            Place::Third => Home::Outside,
        }
    }

    fn name(self) -> &'static str {
        ["writer", "reader", "third"][self as usize]
    }
}

/// Where SB's and IRIW's words and their data live: `[X's home, Y's]`,
/// named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Homes {
    name: &'static str,
    homes: [Home; 2],
}

/// SB: X (task 0's word) and Y (task 1's) on their writers' ranks, on the
/// other's, on a third.
const SB_HOMES: [Homes; 3] = [
    Homes {
        name: "own",
        homes: [Home::Task(0), Home::Task(1)],
    },
    Homes {
        name: "other",
        homes: [Home::Task(1), Home::Task(0)],
    },
    Homes {
        name: "third",
        homes: [Home::Outside, Home::Outside],
    },
];

/// IRIW: X (written by task 0) and Y (task 1) on their writers' ranks, on
/// the readers' that load them first (X on task 2's, Y on task 3's),
/// crossed.
const IRIW_HOMES: [Homes; 3] = [
    Homes {
        name: "writers",
        homes: [Home::Task(0), Home::Task(1)],
    },
    Homes {
        name: "readers",
        homes: [Home::Task(2), Home::Task(3)],
    },
    Homes {
        name: "crossed",
        homes: [Home::Task(3), Home::Task(2)],
    },
];

/// One cell of the matrix. `open`: whether each side (MP writer, reader;
/// SB rank 0, rank 1; IRIW writers, readers) holds its read checkout of
/// other elements across the ordering operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Mp {
        access: Access,
        sync: Sync,
        open: [bool; 2],
        data: Place,
        flag: Place,
    },
    Sb {
        seqcst: bool,
        open: [bool; 2],
        homes: Homes,
    },
    Iriw {
        seqcst: bool,
        open: [bool; 2],
        homes: Homes,
    },
}

fn open_name(side: &str, open: bool) -> String {
    format!("{side}-{}", if open { "open" } else { "closed" })
}

fn ordering_name(seqcst: bool) -> &'static str {
    if seqcst {
        "seqcst"
    } else {
        "release-acquire"
    }
}

impl Cell {
    fn shape_name(&self) -> &'static str {
        match self {
            Cell::Mp { .. } => "mp",
            Cell::Sb { .. } => "sb",
            Cell::Iriw { .. } => "iriw",
        }
    }

    fn shape(&self) -> Shape {
        match self {
            Cell::Mp { .. } => Shape::Mp,
            Cell::Sb { .. } => Shape::Sb,
            Cell::Iriw { .. } => Shape::Iriw,
        }
    }

    fn name(&self) -> String {
        match *self {
            Cell::Mp {
                access,
                sync,
                open,
                data,
                flag,
            } => format!(
                "mp/{}/{}/{}/{}/data-{}/flag-{}",
                if access == Access::Element {
                    "element"
                } else {
                    "checkout"
                },
                sync.name(),
                open_name("writer", open[0]),
                open_name("reader", open[1]),
                data.name(),
                flag.name()
            ),
            Cell::Sb { seqcst, open, homes } => format!(
                "sb/{}/{}/{}/home-{}",
                ordering_name(seqcst),
                open_name("a", open[0]),
                open_name("b", open[1]),
                homes.name
            ),
            Cell::Iriw { seqcst, open, homes } => format!(
                "iriw/{}/{}/{}/home-{}",
                ordering_name(seqcst),
                open_name("writers", open[0]),
                open_name("readers", open[1]),
                homes.name
            ),
        }
    }

    /// The issue-style probe this cell is, if any.
    fn probe(&self) -> Option<&'static str> {
        matches!(
            self,
            Cell::Mp {
                access: Access::Element,
                sync: Sync::SwapRelease,
                ..
            }
        )
        .then_some("p1")
    }

    /// The cell's tasks, one per rank.
    fn tasks(&self) -> u32 {
        match *self {
            Cell::Mp {
                sync: Sync::ReleaseSequence,
                ..
            } => 3,
            Cell::Mp { .. } | Cell::Sb { .. } => 2,
            Cell::Iriw { .. } => 4,
        }
    }

    /// `[home of data 0, of data 1]` and `[home of word 0, of word 1]`.
    fn homes(&self) -> ([Home; 2], [Home; 2]) {
        match *self {
            Cell::Mp { data, flag, sync, .. } => ([data.home(sync); 2], [flag.home(sync); 2]),
            Cell::Sb { homes, .. } | Cell::Iriw { homes, .. } => (homes.homes, homes.homes),
        }
    }

    /// The ranks the job needs: one per task, one more for an outside home.
    fn ranks_needed(&self) -> u32 {
        let (data, words) = self.homes();
        let outside = data.iter().chain(&words).any(|&h| h == Home::Outside);
        self.tasks() + u32::from(outside)
    }
}

/// The matrix: every combination of the dimensions, except that the
/// probe's own publication (swap-release/load-acquire) takes every pair of
/// data and flag homes and the other publications keep the flag with the
/// data.
fn cells() -> &'static [Cell] {
    static CELLS: std::sync::LazyLock<Vec<Cell>> = std::sync::LazyLock::new(generate);
    &CELLS
}

fn generate() -> Vec<Cell> {
    let opens = [[false, false], [true, false], [false, true], [true, true]];
    let mut out = Vec::new();
    for sync in Sync::ALL {
        for access in [Access::Element, Access::Checkout] {
            for open in opens {
                for data in Place::ALL {
                    for flag in Place::ALL {
                        if sync == Sync::SwapRelease || flag == data {
                            out.push(Cell::Mp {
                                access,
                                sync,
                                open,
                                data,
                                flag,
                            });
                        }
                    }
                }
            }
        }
    }
    for seqcst in [true, false] {
        for open in opens {
            for homes in SB_HOMES {
                out.push(Cell::Sb { seqcst, open, homes });
            }
        }
    }
    for seqcst in [true, false] {
        for open in opens {
            for homes in IRIW_HOMES {
                out.push(Cell::Iriw { seqcst, open, homes });
            }
        }
    }
    out
}

/// The words every cell uses, made once: the gang's barrier and the
/// cell's hand-offs and report slots on rank 0 (atomics: never cached, so
/// the reports do not depend on the cache under test), and two words on
/// each rank for the cells' flags.
#[derive(Clone, Copy)]
struct Ctl {
    /// Arrivals at the gang's barriers, counting up.
    bar: GlobalAtomicU64,
    /// A bit per rank that runs a task of the gang.
    present: GlobalAtomicU64,
    /// MP: the reader has read the data once.
    ready: GlobalAtomicU64,
    /// Each task's rank.
    gang: [GlobalAtomicU64; MAX_TASKS],
    /// The run's two data allocations (`GlobalSlice::to_raw`).
    handles: [GlobalAtomicU64; 4],
    reports: [GlobalAtomicU64; TASK_REPORTS],
    words: [[GlobalAtomicU64; 2]; MAX_TASKS],
}

/// Rank 0's words in [`Ctl`].
const CTL_WORDS: usize = 3 + MAX_TASKS + 4 + TASK_REPORTS + 2;

/// A task of a gang: how many tasks, which one this is, and how many
/// barriers it has passed.
#[derive(Clone, Copy)]
struct Seat {
    size: u32,
    pos: usize,
    passed: u64,
}

/// Polls until `done`: spinning (yielding the core) for a while, then
/// sleeping between looks, since ranks may outnumber cores and a request
/// waits for the rank it reaches to run.
fn spin_until(mut done: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !done() {
        uat::runtime::poll_point();
        if t.elapsed() > std::time::Duration::from_micros(SPIN_US) {
            std::thread::sleep(std::time::Duration::from_micros(20));
        } else {
            std::thread::yield_now();
        }
    }
}

/// The gang's barrier: every task's accesses before it happen before
/// every task's accesses after it (an `AcqRel` increment, `Acquire` looks).
fn barrier(ctl: &Ctl, seat: &mut Seat) {
    seat.passed += 1;
    let all = seat.passed * u64::from(seat.size);
    ctl.bar.fetch_add(1, AcqRel);
    spin_until(|| ctl.bar.load(Acquire) >= all);
}

fn report(ctl: &Ctl, seat: &Seat, i: usize, value: u64) {
    ctl.reports[seat.pos * SLOTS + i].swap(value, Relaxed);
}

/// Runs `role` in `size` tasks at the same time, each on a rank of its
/// own: a chain of spawns whose continuation the next rank steals (every
/// task but the last waits until its parent was stolen, and none ends
/// before all have passed the first barrier). Returns the one `Some` a
/// role gave.
fn gang<A: Copy + Send + 'static, T: Copy + Send + 'static>(
    ctl: Ctl,
    size: u32,
    pos: usize,
    arg: A,
    role: fn(&Ctl, &mut Seat, A) -> Option<T>,
) -> Option<T> {
    let seat = Seat { size, pos, passed: 0 };
    if pos + 1 >= size as usize {
        return member(ctl, seat, arg, role);
    }
    let child = uat::spawn(move || {
        uat::testing::wait_until_parent_stolen();
        member(ctl, seat, arg, role)
    });
    let rest = gang(ctl, size, pos + 1, arg, role);
    child.join().or(rest)
}

fn member<A, T>(ctl: Ctl, mut seat: Seat, arg: A, role: fn(&Ctl, &mut Seat, A) -> Option<T>) -> Option<T> {
    let me = uat::current_rank();
    ctl.gang[seat.pos].swap(u64::from(me), Relaxed);
    ctl.present.fetch_add(1 << me, Relaxed);
    barrier(&ctl, &mut seat);
    let r = role(&ctl, &mut seat, arg);
    barrier(&ctl, &mut seat);
    r
}

/// Starts a gang afresh (in the root task, before `gang`).
fn reset(ctl: &Ctl) {
    for w in [ctl.bar, ctl.present, ctl.ready] {
        w.swap(0, Relaxed);
    }
}

/// After `gang`: its tasks ran on `size` different ranks.
fn check_present(ctl: &Ctl, size: u32) {
    let present = ctl.present.load(Relaxed);
    assert_eq!(
        present.count_ones(),
        size,
        "litmus: a gang's tasks did not land one on each rank (ranks seen: {present:#b})"
    );
}

/// The gang's ranks (after its first barrier; `u32::MAX` past its size).
fn gang_ranks(ctl: &Ctl, size: u32) -> [u32; MAX_TASKS] {
    std::array::from_fn(|i| {
        if i < size as usize {
            ctl.gang[i].load(Relaxed) as u32
        } else {
            u32::MAX
        }
    })
}

fn write(d: GlobalSlice<u64>, access: Access) {
    match access {
        Access::Element => d.set(AT, V),
        Access::Checkout => d.slice(AT..AT + 1).write(|x| x[0] = V),
    }
}

fn read(d: GlobalSlice<u64>, access: Access) -> u64 {
    match access {
        Access::Element => d.get(AT),
        Access::Checkout => d.slice(AT..AT + 1).read(|x| x[0]),
    }
}

/// Runs `f` inside read checkouts of `OTHERS` of each of `data` (`open`),
/// or after such checkouts ended (`!open`).
fn holding<R>(open: bool, data: &[GlobalSlice<u64>], f: impl FnOnce() -> R) -> R {
    match data.split_first() {
        None => f(),
        Some((d, rest)) => {
            let others = d.slice(OTHERS);
            if open {
                others.read(|x| {
                    std::hint::black_box(x);
                    holding(open, rest, f)
                })
            } else {
                others.read(|x| {
                    std::hint::black_box(x);
                });
                holding(open, rest, f)
            }
        }
    }
}

/// The cell's words, on the homes its roles name.
fn words(ctl: &Ctl, cell: &Cell, gang: &[u32]) -> [GlobalAtomicU64; 2] {
    let (_, w) = cell.homes();
    [0, 1].map(|i| ctl.words[w[i].rank(gang) as usize][i])
}

/// One run of a cell in task `seat.pos`, between the run's barriers: the
/// accesses and orderings of its shape, the outcome into the report slots.
fn play(ctl: &Ctl, seat: &mut Seat, cell: Cell, d: [GlobalSlice<u64>; 2], w: [GlobalAtomicU64; 2]) {
    let pos = seat.pos;
    match cell {
        Cell::Mp { access, sync, open, .. } => {
            let (d, flag) = (d[0], w[0]);
            match pos {
                0 => {
                    spin_until(|| ctl.ready.load(Acquire) != 0);
                    holding(open[0], &[d], || {
                        write(d, access);
                        sync.publish(flag);
                    });
                }
                1 => holding(open[1], &[d], || {
                    report(ctl, seat, 0, read(d, access));
                    ctl.ready.swap(1, Release);
                    spin_until(|| sync.published(flag));
                    report(ctl, seat, 1, read(d, access));
                }),
                _ => {
                    // ReleaseSequence's third task.
                    spin_until(|| flag.load(Relaxed) != 0);
                    flag.fetch_add(1, Relaxed);
                }
            }
        }
        Cell::Sb { seqcst, open, .. } => {
            let (store, load) = if seqcst { (SeqCst, SeqCst) } else { (Release, Acquire) };
            let (mine, theirs) = (d[pos], d[1 - pos]);
            holding(open[pos], &[mine, theirs], || {
                report(ctl, seat, 0, theirs.get(AT));
                barrier(ctl, seat);
                mine.set(AT, V);
                w[pos].swap(1, store);
                report(ctl, seat, 1, w[1 - pos].load(load));
                report(ctl, seat, 2, theirs.get(AT));
            });
        }
        Cell::Iriw { seqcst, open, .. } => {
            let (store, load) = if seqcst { (SeqCst, SeqCst) } else { (Release, Acquire) };
            if pos < 2 {
                barrier(ctl, seat);
                holding(open[0], &[d[pos]], || {
                    d[pos].set(AT, V);
                    w[pos].swap(1, store);
                });
            } else {
                // Task 2 loads X then Y, task 3 Y then X; both report in
                // the order X, Y.
                let first = pos - 2;
                holding(open[1], &d, || {
                    report(ctl, seat, 0, d[0].get(AT));
                    report(ctl, seat, 1, d[1].get(AT));
                    barrier(ctl, seat);
                    let a = w[first].load(load);
                    let b = w[1 - first].load(load);
                    report(ctl, seat, 2 + first, a);
                    report(ctl, seat, 3 - first, b);
                    report(ctl, seat, 4, d[0].get(AT));
                    report(ctl, seat, 5, d[1].get(AT));
                });
            }
        }
    }
}

/// What a session runs: the selected cells (a bit per index of
/// [`cells`]) that have this many tasks, each `reps` times.
#[derive(Clone, Copy)]
struct Plan {
    selected: [u64; SELECTED_WORDS],
    reps: u32,
}

/// A session's count: cells run, cells with a forbidden outcome, the
/// first of them (an index of [`cells`], or `u32::MAX`).
type Tally = (u32, u32, u32);

/// A session in every task of a gang: for each cell of the plan with the
/// gang's size, each run between two barriers; task 0 prepares a run
/// (fresh data on the homes, the words and slots reset), and after it
/// makes its own looks (MP), reads the report slots, and once the cell's
/// runs are done prints its line. Task 0 returns the tally.
fn session(ctl: &Ctl, seat: &mut Seat, plan: Plan) -> Option<Tally> {
    let all = gang_ranks(ctl, seat.size);
    let ranks = &all[..seat.size as usize];
    let lead = seat.pos == 0;
    let mut tally: Tally = (0, 0, u32::MAX);
    for index in 0..cells().len() {
        let cell = cells()[index];
        if plan.selected[index / 64] >> (index % 64) & 1 == 0 || cell.tasks() != seat.size {
            continue;
        }
        let w = words(ctl, &cell, ranks);
        let mut looks = [[MISSING; REPORTS]; MAX_REPS];
        for look in looks.iter_mut().take(plan.reps as usize) {
            if lead {
                let (homes, _) = cell.homes();
                for (i, h) in homes.iter().enumerate() {
                    let d = GlobalSlice::<u64>::alloc_on(h.rank(ranks), LEN);
                    let raw = d.to_raw();
                    ctl.handles[2 * i].swap(raw[0], Relaxed);
                    ctl.handles[2 * i + 1].swap(raw[1], Relaxed);
                }
                for x in w.iter().chain([&ctl.ready]) {
                    x.swap(0, Relaxed);
                }
                for r in ctl.reports {
                    r.swap(MISSING, Relaxed);
                }
            }
            barrier(ctl, seat);
            let d = [0, 1].map(|i| {
                let raw = [ctl.handles[2 * i].load(Relaxed), ctl.handles[2 * i + 1].load(Relaxed)];
                GlobalSlice::<u64>::from_raw_checked(raw).expect("litmus: the run's data is live")
            });
            play(ctl, seat, cell, d, w);
            barrier(ctl, seat);
            if lead {
                for (slot, r) in look.iter_mut().zip(ctl.reports) {
                    *slot = r.load(Relaxed);
                }
                look[ROOT_SLOT] = d[0].get(AT);
                look[ROOT_SLOT + 1] = w[0].load(Relaxed);
                for x in d {
                    x.free();
                }
            }
        }
        if lead {
            let allowed = print_cell(&cell, &looks[..plan.reps as usize]);
            tally.0 += 1;
            if !allowed {
                tally.1 += 1;
                tally.2 = tally.2.min(index as u32);
            }
        }
    }
    lead.then_some(tally)
}

/// Judges a cell's runs and prints its line; whether every run's outcome
/// is allowed.
fn print_cell(cell: &Cell, looks: &[[u64; REPORTS]]) -> bool {
    let mut allowed = true;
    let mut outcomes = Vec::new();
    for look in looks {
        let (text, ok) = judge(cell, look);
        outcomes.push(text);
        allowed &= ok;
    }
    let probe = cell.probe().map_or("null".to_string(), |p| format!("\"{p}\""));
    println!(
        "{{\"cell\":\"{}\",\"shape\":\"{}\",\"probe\":{probe},\"outcomes\":[{}],\"allowed\":{allowed}}}",
        cell.name(),
        cell.shape_name(),
        outcomes.join(",")
    );
    allowed
}

/// A run's outcome and whether the model allows it.
fn judge(cell: &Cell, v: &[u64; REPORTS]) -> (String, bool) {
    let at = |task: usize, i: usize| v[task * SLOTS + i];
    let bit = |x: u64| x <= 1;
    let payload = |seen: u64, data: u64| seen == 0 || data == V;
    match *cell {
        Cell::Mp { sync, .. } => {
            let (before, after, fin, flag) = (at(1, 0), at(1, 1), v[ROOT_SLOT], v[ROOT_SLOT + 1]);
            let ok = before == 0 && fin == V && flag == sync.flag_final() && (!sync.orders_data() || after == V);
            (
                format!("{{\"before\":{before},\"after\":{after},\"final\":{fin},\"flag\":{flag}}}"),
                ok,
            )
        }
        Cell::Sb { seqcst, .. } => {
            let (pre, r, p) = ([at(0, 0), at(1, 0)], [at(0, 1), at(1, 1)], [at(0, 2), at(1, 2)]);
            let ok = pre == [0, 0]
                && r.iter().all(|&x| bit(x))
                && !(seqcst && r == [0, 0])
                && payload(r[0], p[0])
                && payload(r[1], p[1]);
            (
                format!(
                    "{{\"pre\":[{},{}],\"r\":[{},{}],\"payload\":[{},{}]}}",
                    pre[0], pre[1], r[0], r[1], p[0], p[1]
                ),
                ok,
            )
        }
        Cell::Iriw { seqcst, .. } => {
            // Per reader: X and Y as loaded, the data behind each after.
            let xy = |task: usize| [at(task, 2), at(task, 3)];
            let (r2, r3) = (xy(2), xy(3));
            let pre = [at(2, 0), at(2, 1), at(3, 0), at(3, 1)];
            let data = [at(2, 4), at(2, 5), at(3, 4), at(3, 5)];
            // Task 2 saw X's write and not Y's; task 3 the other way.
            let disagree = r2 == [1, 0] && r3 == [0, 1];
            let ok = pre == [0; 4]
                && r2.iter().chain(&r3).all(|&x| bit(x))
                && !(seqcst && disagree)
                && payload(r2[0], data[0])
                && payload(r2[1], data[1])
                && payload(r3[0], data[2])
                && payload(r3[1], data[3]);
            (
                format!("{{\"pre\":{pre:?},\"task2_xy\":{r2:?},\"task3_xy\":{r3:?},\"data\":{data:?}}}",),
                ok,
            )
        }
    }
}

/// A gang's role that makes two words on `target` (every rank runs one
/// task, so one of them is there).
fn make_words(_: &Ctl, _: &mut Seat, target: u32) -> Option<[GlobalAtomicU64; 2]> {
    (uat::current_rank() == target).then(|| [GlobalAtomicU64::new(0), GlobalAtomicU64::new(0)])
}

/// Makes the words every cell uses (a few runs; on rank 0 `Some`).
fn setup(rt: &uat::Runtime, me: u32, ranks: u32) -> Option<Ctl> {
    // Rank 0's words, three per run (a run's result is at most 48 bytes).
    let mut zero = Vec::new();
    for _ in 0..CTL_WORDS.div_ceil(3) {
        let three = rt.run(|| {
            [
                GlobalAtomicU64::new(0),
                GlobalAtomicU64::new(0),
                GlobalAtomicU64::new(0),
            ]
        });
        zero.extend(three.into_iter().flatten());
    }
    let mut ctl = (me == 0).then(|| {
        let mut it = zero.into_iter();
        let mut next = || it.next().unwrap();
        let (bar, present, ready) = (next(), next(), next());
        let gang = std::array::from_fn(|_| next());
        let handles = std::array::from_fn(|_| next());
        let reports = std::array::from_fn(|_| next());
        let w0 = [next(), next()];
        Ctl {
            bar,
            present,
            ready,
            gang,
            handles,
            reports,
            words: [w0; MAX_TASKS],
        }
    });
    for target in 1..ranks {
        let c = ctl;
        let made = rt.run(move || {
            let ctl = c.unwrap();
            reset(&ctl);
            let made = gang(ctl, ranks, 0, target, make_words);
            check_present(&ctl, ranks);
            made.expect("the word maker ran on its rank")
        });
        if let (Some(ctl), Some(made)) = (ctl.as_mut(), made) {
            ctl.words[target as usize] = made;
        }
    }
    ctl
}

/// The use-after-free probe (on rank 0's root task): `[first, second]`
/// read through one reference, and whether the new allocation reused the
/// freed block.
fn use_after_free(home: ProbeHome) -> ([u64; 2], bool) {
    let alloc = || match home {
        ProbeHome::Own => GlobalSlice::<u64>::alloc(8),
        ProbeHome::Other => GlobalSlice::<u64>::alloc_on(1, 8),
    };
    let s = alloc();
    s.write(|x| x.fill(7));
    let stale = s;
    s.free();
    let (seen, fresh) = stale.read(|x| {
        let first = std::hint::black_box(x)[0];
        let fresh = alloc();
        let second = std::hint::black_box(x)[0];
        ([first, second], fresh)
    });
    let same = fresh.to_raw()[0] == stale.to_raw()[0];
    fresh.free();
    (seen, same)
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("litmus");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    let memory = uat::global::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the tasks keep only global slices, atomics and numbers across
    // spawn, join and poll_point; no two tasks check out overlapping memory
    // when one writes (writers and readers of one element are ordered by a
    // flag, or their accesses are the races the model leaves open, on Pod
    // data through get/set); nothing is freed that another task may hold.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let (me, ranks) = (gasnet.rank(), gasnet.size());
    if let Some(Probe::UseAfterFree) = opt.probe {
        if opt.home == ProbeHome::Other && ranks < 2 {
            gasnet.fail("litmus --probe use-after-free --home other needs 2 ranks");
        }
        let home = opt.home;
        let (seen, same) = rt.broadcast_value(rt.run(move || use_after_free(home)));
        let ok = seen == [7, 7];
        if me == 0 {
            let home = if home == ProbeHome::Own { "self" } else { "other" };
            println!(
                "{{\"probe\":\"use-after-free\",\"home\":\"{home}\",\"seen\":[{},{}],\"same_block\":{same},\"allowed\":{ok}}}",
                seen[0], seen[1]
            );
            if !ok {
                eprintln!(
                    "litmus: probe use-after-free (home {home}) read {seen:?} through one unchanged reference: \
                     the model allows [7, 7] or a refusal"
                );
            }
        }
        rt.barrier();
        rt.exit(i32::from(!ok));
    }
    if ranks < 2 {
        gasnet.fail("litmus needs at least 2 ranks");
    }
    if ranks as usize > MAX_TASKS {
        gasnet.fail(format_args!("litmus runs on 2 to {MAX_TASKS} ranks"));
    }
    let ctl = setup(&rt, me, ranks);
    let mut selected = [0u64; SELECTED_WORDS];
    let (mut chosen, mut skipped) = (0, 0);
    for (i, cell) in cells().iter().enumerate() {
        if !opt.shapes.contains(&cell.shape()) || opt.only.as_ref().is_some_and(|o| !cell.name().contains(o.as_str())) {
            continue;
        }
        if cell.ranks_needed() > ranks {
            skipped += 1;
        } else {
            chosen += 1;
            selected[i / 64] |= 1 << (i % 64);
        }
    }
    let plan = Plan {
        selected,
        reps: opt.reps,
    };
    // One session per gang size: 2 tasks, then 3, then IRIW's 4.
    let (mut violations, mut first) = (0, u32::MAX);
    for size in 2..=MAX_TASKS as u32 {
        let any = cells()
            .iter()
            .enumerate()
            .any(|(i, c)| c.tasks() == size && selected[i / 64] >> (i % 64) & 1 == 1);
        if !any {
            continue;
        }
        let c = ctl;
        let tally = rt.run(move || {
            let ctl = c.unwrap();
            reset(&ctl);
            let tally = gang(ctl, size, 0, plan, session);
            check_present(&ctl, size);
            tally.expect("task 0 tallies")
        });
        if let Some((_, v, f)) = tally {
            violations += v;
            first = first.min(f);
        }
    }
    let first = (first != u32::MAX).then(|| cells()[first as usize].name());
    if me == 0 {
        let fault = match memory.get_cache_fault() {
            CacheFault::None => "none",
            CacheFault::NoWriteBack => "no-write-back",
            CacheFault::NoInvalidate => "no-invalidate",
        };
        println!(
            "{{\"summary\":\"litmus\",\"conduit\":\"{}\",\"cache\":\"{}\",\"cache_fault\":\"{fault}\",\"ranks\":{ranks},\
             \"reps\":{},\"cells\":{},\"skipped\":{skipped},\"violations\":{violations},\"first_violation\":{}}}",
            uat::runtime::CONDUIT.name(),
            if memory.get_cache() { "on" } else { "off" },
            opt.reps,
            chosen,
            first.as_ref().map_or("null".to_string(), |f| format!("\"{f}\""))
        );
        if let Some(f) = &first {
            eprintln!("litmus: {violations} cells saw outcomes the model forbids; the first: {f}");
        }
    }
    let bad = rt.broadcast(u64::from(violations > 0));
    rt.exit(i32::from(bad != 0))
}
