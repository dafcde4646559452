//! Per-rank counters of the scheduler, summed over ranks at the end of a run.

use std::cell::Cell;

/// Counters of one run (per rank, or summed over all ranks).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub spawns: u64,
    pub steals_attempted: u64,
    pub steals_succeeded: u64,
    pub empty_check_aborts: u64,
    pub lock_failures: u64,
    pub frame_bytes_stolen: u64,
    /// Largest distance from the stack region's top to a saved context.
    pub max_stack_bytes: u64,
    pub suspensions: u64,
    pub resumes: u64,
    /// TSC cycles spent handling Active Messages (fetch-and-add requests).
    pub msg_handling_cycles: u64,
    /// TSC cycles per steal phase, summed over successful steals: empty
    /// check, lock, read head/tail + advance + read the entry, frame
    /// transfer, unlock; and suspending (copying a joiner's frames out).
    pub steal_empty_check_cycles: u64,
    pub steal_lock_cycles: u64,
    pub steal_claim_cycles: u64,
    pub steal_transfer_cycles: u64,
    pub steal_unlock_cycles: u64,
    pub suspend_cycles: u64,
    pub resume_cycles: u64,
}

impl Stats {
    pub const FIELDS: usize = std::mem::size_of::<Stats>() / 8;

    pub fn to_words(self) -> [u64; Stats::FIELDS] {
        // SAFETY: Stats is repr(C) with FIELDS u64 fields and no padding.
        unsafe { std::mem::transmute(self) }
    }

    pub fn from_words(words: [u64; Stats::FIELDS]) -> Stats {
        // SAFETY: as above; every bit pattern is a valid u64.
        unsafe { std::mem::transmute(words) }
    }

    /// Adds `other` into self (max for the maximum).
    pub fn accumulate(&mut self, other: &Stats) {
        self.spawns += other.spawns;
        self.steals_attempted += other.steals_attempted;
        self.steals_succeeded += other.steals_succeeded;
        self.empty_check_aborts += other.empty_check_aborts;
        self.lock_failures += other.lock_failures;
        self.frame_bytes_stolen += other.frame_bytes_stolen;
        self.max_stack_bytes = self.max_stack_bytes.max(other.max_stack_bytes);
        self.suspensions += other.suspensions;
        self.resumes += other.resumes;
        self.msg_handling_cycles += other.msg_handling_cycles;
        self.steal_empty_check_cycles += other.steal_empty_check_cycles;
        self.steal_lock_cycles += other.steal_lock_cycles;
        self.steal_claim_cycles += other.steal_claim_cycles;
        self.steal_transfer_cycles += other.steal_transfer_cycles;
        self.steal_unlock_cycles += other.steal_unlock_cycles;
        self.suspend_cycles += other.suspend_cycles;
        self.resume_cycles += other.resume_cycles;
    }
}

/// The live counters of this rank (updated by the worker thread only).
#[derive(Default)]
pub struct Counters {
    pub spawns: Cell<u64>,
    pub steals_attempted: Cell<u64>,
    pub steals_succeeded: Cell<u64>,
    pub empty_check_aborts: Cell<u64>,
    pub lock_failures: Cell<u64>,
    pub frame_bytes_stolen: Cell<u64>,
    pub max_stack_bytes: Cell<u64>,
    pub suspensions: Cell<u64>,
    pub resumes: Cell<u64>,
    pub msg_handling_cycles: Cell<u64>,
    pub steal_phases: [Cell<u64>; 5],
    pub suspend_cycles: Cell<u64>,
    pub resume_cycles: Cell<u64>,
}

impl Counters {
    pub fn snapshot(&self) -> Stats {
        Stats {
            spawns: self.spawns.get(),
            steals_attempted: self.steals_attempted.get(),
            steals_succeeded: self.steals_succeeded.get(),
            empty_check_aborts: self.empty_check_aborts.get(),
            lock_failures: self.lock_failures.get(),
            frame_bytes_stolen: self.frame_bytes_stolen.get(),
            max_stack_bytes: self.max_stack_bytes.get(),
            suspensions: self.suspensions.get(),
            resumes: self.resumes.get(),
            msg_handling_cycles: self.msg_handling_cycles.get(),
            steal_empty_check_cycles: self.steal_phases[0].get(),
            steal_lock_cycles: self.steal_phases[1].get(),
            steal_claim_cycles: self.steal_phases[2].get(),
            steal_transfer_cycles: self.steal_phases[3].get(),
            steal_unlock_cycles: self.steal_phases[4].get(),
            suspend_cycles: self.suspend_cycles.get(),
            resume_cycles: self.resume_cycles.get(),
        }
    }

    pub fn reset(&self) {
        for c in [
            &self.spawns,
            &self.max_stack_bytes,
            &self.suspensions,
            &self.resumes,
            &self.msg_handling_cycles,
            &self.suspend_cycles,
            &self.resume_cycles,
        ] {
            c.set(0);
        }
        for c in &self.steal_phases {
            c.set(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulate_sums_counts_and_keeps_the_maximum_stack() {
        let mut a = Stats {
            spawns: 3,
            max_stack_bytes: 100,
            ..Stats::default()
        };
        a.accumulate(&Stats {
            spawns: 4,
            max_stack_bytes: 50,
            steals_succeeded: 2,
            ..Stats::default()
        });
        assert_eq!((a.spawns, a.max_stack_bytes, a.steals_succeeded), (7, 100, 2));
    }
}
