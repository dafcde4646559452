//! Work, span and parallelism (Cilkscale's measures), with
//! `UAT_WORKSPAN=on`: every strand — a serial piece of a thread between a
//! spawn, a join, its start and its end — adds its length to the work, and
//! each thread carries the longest path of strands that leads to it, so
//! the root's path at its end is the span.
//!
//! **Counting.** A run starts one strand (the root's). A spawn ends the
//! parent's strand; the child starts one and the parent's continuation
//! another, both after the parent's path. A join ends the joiner's strand
//! and starts one after the longer of its path and the child's final path
//! (which the child leaves next to its future cell). So a run of `S`
//! spawns has `1 + 3S` strands of work; spans follow the program's shape.
//! Both are measured in strands (exact: a test checks fib and BTC against
//! their closed forms) and in TSC time (what a user wants: the time spent
//! suspended or idle is in neither). A path also counts its spawns, so that
//! the report can add the measured cost of a steal per spawn along the
//! span (the burdened span).
//!
//! **Where the state lives.** The running strand's path is the worker's
//! ([`WorkSpan`]); at every point where a thread stops running here —
//! spawn, join, its end — the path is copied into the side slot of the
//! future cell involved (read remotely where the thread resumes on
//! another rank), and restored from there, on whichever rank.

use std::cell::Cell;

/// A path of strands: how many, how long, and how many spawns along it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Path {
    pub(crate) strands: u64,
    pub(crate) ticks: u64,
    pub(crate) spawns: u64,
}

/// Bytes of a path in a future cell's span slot.
pub(crate) const PATH_BYTES: usize = 24;
const _: () = assert!(std::mem::size_of::<Path>() == PATH_BYTES);

impl Path {
    /// The longer of two paths that meet at a join: by strands for the
    /// count, by time (with its spawns) for the time.
    pub(crate) fn join(self, other: Path) -> Path {
        let (ticks, spawns) = if other.ticks > self.ticks {
            (other.ticks, other.spawns)
        } else {
            (self.ticks, self.spawns)
        };
        Path {
            strands: self.strands.max(other.strands),
            ticks,
            spawns,
        }
    }

    pub(crate) fn to_words(self) -> [u64; 3] {
        [self.strands, self.ticks, self.spawns]
    }

    pub(crate) fn from_words(w: [u64; 3]) -> Path {
        Path {
            strands: w[0],
            ticks: w[1],
            spawns: w[2],
        }
    }
}

/// The worker's work/span state (worker thread only).
pub(crate) struct WorkSpan {
    on: bool,
    /// The running strand's path before it.
    before: Cell<Path>,
    /// When the running strand started (TSC).
    since: Cell<u64>,
    work_strands: Cell<u64>,
    work_ticks: Cell<u64>,
}

impl WorkSpan {
    pub(crate) fn new(on: bool) -> WorkSpan {
        WorkSpan {
            on,
            before: Cell::new(Path::default()),
            since: Cell::new(0),
            work_strands: Cell::new(0),
            work_ticks: Cell::new(0),
        }
    }

    /// Whether work and span are measured.
    #[inline(always)]
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Clears the work (the start of a run).
    pub(crate) fn reset(&self) {
        self.work_strands.set(0);
        self.work_ticks.set(0);
    }

    /// This rank's work so far: strands and ticks.
    pub(crate) fn work(&self) -> (u64, u64) {
        (self.work_strands.get(), self.work_ticks.get())
    }

    /// Starts a strand after `path`, now.
    pub(crate) fn begin(&self, path: Path) {
        self.begin_at(path, crate::tsc::now());
    }

    fn begin_at(&self, path: Path, now: u64) {
        self.before.set(Path {
            strands: path.strands + 1,
            ..path
        });
        self.since.set(now);
        self.work_strands.set(self.work_strands.get() + 1);
    }

    /// Ends the running strand now: the path through it.
    pub(crate) fn end(&self) -> Path {
        self.end_at(crate::tsc::now())
    }

    fn end_at(&self, now: u64) -> Path {
        let len = now.saturating_sub(self.since.get());
        self.work_ticks.set(self.work_ticks.get() + len);
        let p = self.before.get();
        Path {
            ticks: p.ticks + len,
            ..p
        }
    }

    /// A spawn: ends the parent's strand and starts the child's (one
    /// clock read). Returns the path the parent's continuation starts
    /// after.
    pub(crate) fn spawn(&self) -> Path {
        let now = crate::tsc::now();
        let p = self.end_at(now);
        let p = Path {
            spawns: p.spawns + 1,
            ..p
        };
        self.begin_at(p, now);
        p
    }
}

// The hooks (`UAT_WORKSPAN=on`; the callers test `Worker::hooks` first).
// Paths wait in the cell's side slot (`crate::future::SideWord`), not in
// the frames: the spawn and join paths keep nothing more live when off.

use crate::future::{CellRef, SideWord};
use crate::worker::Worker;

fn put(w: &Worker, cell: CellRef, word: SideWord, p: Path) {
    cell.put_side(w.gasnet, &w.layout, w.rank, word, &p.to_words());
}

fn get(w: &Worker, cell: CellRef, word: SideWord) -> Path {
    Path::from_words(cell.side_words::<3>(w.gasnet, &w.layout, w.rank, word))
}

/// A spawn of the child of `cell`: the parent's path waits for its
/// continuation next to the cell.
#[cold]
#[inline(never)]
pub(crate) fn at_spawn(w: &Worker, cell: CellRef) {
    put(w, cell, SideWord::Before, w.workspan.spawn());
}

/// The spawner's continuation resumes (after the child, or on a thief).
#[cold]
#[inline(never)]
pub(crate) fn at_continuation(w: &Worker, cell: CellRef) {
    w.workspan.begin(get(w, cell, SideWord::Before));
}

/// The child of `cell` ends: its final path, for its joiner.
#[cold]
#[inline(never)]
pub(crate) fn at_child_end(w: &Worker, cell: CellRef) {
    put(w, cell, SideWord::Child, w.workspan.end());
}

/// A join of `cell` starts: the joiner's strand ends, its path waits next
/// to the cell (across a suspension).
#[cold]
#[inline(never)]
pub(crate) fn at_join(w: &Worker, cell: CellRef) {
    put(w, cell, SideWord::Before, w.workspan.end());
}

/// The join of `cell` is done (before the cell is freed): the next strand
/// starts after the longer of the joiner's path and the child's.
#[cold]
#[inline(never)]
pub(crate) fn after_join(w: &Worker, cell: CellRef) {
    let joined = get(w, cell, SideWord::Before).join(get(w, cell, SideWord::Child));
    w.workspan.begin(joined);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_keeps_the_longer_path_per_measure() {
        let a = Path {
            strands: 5,
            ticks: 10,
            spawns: 2,
        };
        let b = Path {
            strands: 3,
            ticks: 20,
            spawns: 7,
        };
        assert_eq!(
            a.join(b),
            Path {
                strands: 5,
                ticks: 20,
                spawns: 7
            }
        );
        assert_eq!(
            b.join(a),
            Path {
                strands: 5,
                ticks: 20,
                spawns: 7
            }
        );
        assert_eq!(Path::from_words(a.to_words()), a);
    }

    #[test]
    fn strands_count_as_the_module_says() {
        // The root, one spawn and its join: 1 + 3 strands; the span is the
        // root's first strand, the child's (or the continuation's) and the
        // strand after the join.
        let ws = WorkSpan::new(true);
        ws.begin(Path::default());
        let cont = ws.spawn();
        let child = ws.end();
        ws.begin(cont);
        let joiner = ws.end();
        ws.begin(joiner.join(child));
        let root = ws.end();
        assert_eq!(ws.work().0, 4);
        assert_eq!(root.strands, 3);
        assert_eq!(root.spawns, 1);
    }
}
