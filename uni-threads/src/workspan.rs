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
//! ([`WorkSpan`]). Where a thread stops running here — a spawn, a join —
//! its path waits in a local of the hooked copy of `spawn` or `join` (in
//! the thread's frames, which travel with it); a child's final path waits
//! in its future cell's side slot for the joiner.

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
    /// When a thread last stopped running here at a child's end, or was
    /// resumed from another rank: where a continuation's strand starts.
    handoff: Cell<u64>,
}

impl WorkSpan {
    pub(crate) fn new(on: bool) -> WorkSpan {
        WorkSpan {
            on,
            before: Cell::new(Path::default()),
            since: Cell::new(0),
            work_strands: Cell::new(0),
            work_ticks: Cell::new(0),
            handoff: Cell::new(0),
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

    /// Starts a strand after `path` at tick `now`.
    pub(crate) fn begin_at(&self, path: Path, now: u64) {
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

    /// Ends the running strand at tick `now`.
    pub(crate) fn end_at(&self, now: u64) -> Path {
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

    /// A child ends (one clock read, shared with the caller's trace tag):
    /// its final path. Its parent's continuation, if it resumes here next,
    /// starts then.
    pub(crate) fn child_end(&self, now: u64) -> Path {
        self.handoff.set(now);
        self.end_at(now)
    }

    /// A continuation stolen from another rank resumes now.
    pub(crate) fn resumed_here(&self) {
        self.handoff.set(crate::tsc::now());
    }

    /// A spawner's continuation resumes (after its child ended here, or on
    /// a thief): its strand starts at the hand-off.
    pub(crate) fn continuation(&self, path: Path) {
        self.begin_at(path, self.handoff.get());
    }
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
