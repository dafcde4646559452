//! Test support: a task that computes for a long time without spawning or
//! polling must not hold its parent's continuation back. The root spawns a
//! child that only spins until the root's continuation has been stolen
//! (the bottom entry of a deque is stealable without its owner's help); the
//! continuation, now on another rank, joins it. Prints the thief's rank and
//! the child's spin count as JSON; on one rank the child returns at once.
//!
//!     scripts/run.sh -n 2 -- target/smp-native/release/examples/long_task

fn main() {
    // SAFETY: the tasks keep only numbers across spawn and join.
    unsafe {
        uat::launch_then(
            |()| {
                let child = uat::spawn(|| {
                    let mut spins = 0u64;
                    // No spawn, no poll point: the owner never helps.
                    while uat::ranks() > 1 && !uat::testing::parent_stolen() {
                        spins += 1;
                        std::hint::spin_loop();
                    }
                    spins
                });
                let continued_on = uat::current_rank() as u64;
                (continued_on, child.join())
            },
            |(continued_on, spins)| {
                println!("{{\"continued_on\":{continued_on},\"spins\":{spins}}}");
                0
            },
        )
    }
}
