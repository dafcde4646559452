//! The benchmarks' task trees, shaped exactly as the benchmarks spawn them
//! (`benches/btc.rs`, `benches/uts.rs`, `benches/nqueens.rs`): which task
//! spawns which, which child runs inline, where each join is. The task
//! bodies are not run: each node charges the work its machine file
//! declares (`work.*_ns`), and the tree's shape is computed exactly (UTS
//! by the specification's SHA-1, with the benchmark's own code).

#[path = "../../benches/uts_nodes.rs"]
#[allow(dead_code, unreachable_pub)]
mod uts_nodes;

use uts_nodes::{child, root, Node, Tree};

#[path = "../../benches/nqueens_board.rs"]
mod nqueens_board;

use nqueens_board::Board;

/// What a task does after its own work.
#[derive(Clone, Copy)]
pub(crate) enum Step {
    /// Nothing: a leaf.
    Leaf,
    /// Calls one task in its own frame (no spawn).
    Call(Task),
    /// `join(a, b)`: spawns `a`, runs `b` inline, joins `a`.
    Join(Task, Task),
    /// The paper's form: spawns `a`, spawns `b`, joins both.
    Spawn2(Task, Task),
}

/// A task of one of the trees.
#[derive(Clone, Copy)]
pub(crate) enum Task {
    /// BTC: a task of this depth.
    Btc(u32),
    /// UTS: visit a node (count it, draw its children).
    UtsVisit(Node),
    /// UTS: children `lo..hi` of a node, split in halves.
    UtsRange(Node, u32, u32),
    /// NQueens: a partial placement.
    Queens(Board),
    /// NQueens: place a queen in each of the columns `cands`.
    Columns(Board, u32),
}

/// Which benchmark and its input.
#[derive(Clone, Copy, Debug)]
pub enum Bench {
    /// BTC of this depth, in the paper's form (`spawn`) or `join`'s.
    Btc {
        /// Depth of the task tree.
        depth: u32,
        /// `--join`: one child spawned, the other inline.
        join: bool,
    },
    /// UTS with these parameters.
    Uts {
        /// The tree (`-t -b -a -d -q -m -f`).
        tree: TreeParams,
        /// `-r`.
        seed: u32,
    },
    /// NQueens on an `n × n` board.
    Nqueens {
        /// The board's size.
        n: u32,
    },
}

/// UTS parameters (the benchmark's flags).
#[derive(Clone, Copy, Debug)]
pub struct TreeParams {
    /// `-t`: 0 binomial, 1 geometric, 2 hybrid.
    pub kind: u32,
    /// `-b`: root branching.
    pub b0: f64,
    /// `-a`: geometric shape.
    pub shape: u32,
    /// `-d`: depth.
    pub depth: u32,
    /// `-q`: binomial probability.
    pub q: f64,
    /// `-m`: binomial children.
    pub m: u32,
    /// `-f`: hybrid switch.
    pub f: f64,
}

impl TreeParams {
    fn tree(&self) -> Tree {
        Tree {
            kind: self.kind,
            b0: self.b0,
            shape: self.shape,
            depth: self.depth,
            q: self.q,
            m: self.m,
            f: self.f,
        }
    }
}

impl Bench {
    /// The benchmark's name (its binary's).
    pub fn name(&self) -> &'static str {
        match self {
            Bench::Btc { .. } => "btc",
            Bench::Uts { .. } => "uts",
            Bench::Nqueens { .. } => "nqueens",
        }
    }

    /// Parses the benchmark's own arguments (`btc --depth 20 [--join]`,
    /// `uts -t 1 -b 4 -r 19 -a 3 -d 10`, `nqueens 12`): the flags that
    /// shape the tree; run-time flags of the harness are refused, so that a
    /// prediction never silently ignores one.
    pub fn parse(args: &[String]) -> Result<Bench, String> {
        let (name, rest) = args
            .split_first()
            .ok_or("no benchmark given after `--` (btc, uts or nqueens, with its arguments)")?;
        let name = name.rsplit('/').next().unwrap_or(name);
        let mut it = rest.iter();
        let num = |flag: &str, it: &mut std::slice::Iter<'_, String>| -> Result<f64, String> {
            let v = it.next().ok_or(format!("{flag} needs a value"))?;
            v.parse::<f64>().map_err(|_| format!("{flag} {v}: not a number"))
        };
        match name {
            "btc" => {
                let (mut depth, mut join) = (None, false);
                while let Some(a) = it.next() {
                    match a.as_str() {
                        "--depth" => depth = Some(num("--depth", &mut it)? as u32),
                        "--join" => join = true,
                        "--iter" => {
                            if num("--iter", &mut it)? != 1.0 {
                                return Err("btc --iter other than 1 is not simulated".into());
                            }
                        }
                        other => {
                            return Err(format!(
                                "btc: {other}: not a flag the simulator knows (--depth D, --join)"
                            ))
                        }
                    }
                }
                let depth = depth.ok_or("btc needs --depth D")?;
                if depth > 47 {
                    // Its time in picoseconds must fit 64 bits.
                    return Err("btc --depth is at most 47 in the simulator".into());
                }
                Ok(Bench::Btc { depth, join })
            }
            "uts" => {
                let mut t = TreeParams {
                    kind: 1,
                    b0: 4.0,
                    shape: 0,
                    depth: 6,
                    q: 0.234375,
                    m: 4,
                    f: 0.5,
                };
                let mut seed = 0;
                while let Some(a) = it.next() {
                    match a.as_str() {
                        "-t" => t.kind = num("-t", &mut it)? as u32,
                        "-b" => t.b0 = num("-b", &mut it)?,
                        "-r" => seed = num("-r", &mut it)? as u32,
                        "-a" => t.shape = num("-a", &mut it)? as u32,
                        "-d" => t.depth = num("-d", &mut it)? as u32,
                        "-q" => t.q = num("-q", &mut it)?,
                        "-m" => t.m = num("-m", &mut it)? as u32,
                        "-f" => t.f = num("-f", &mut it)?,
                        other => {
                            return Err(format!(
                                "uts: {other}: not a flag the simulator knows (-t -b -r -a -d -q -m -f)"
                            ))
                        }
                    }
                }
                if t.kind > 2 || t.shape > 3 {
                    return Err("uts: -t is 0..=2 and -a 0..=3".into());
                }
                Ok(Bench::Uts { tree: t, seed })
            }
            "nqueens" => {
                let n = it.next().ok_or("nqueens needs N")?;
                let n: u32 = n.parse().map_err(|_| format!("nqueens {n}: not a board size"))?;
                if !(1..=20).contains(&n) {
                    return Err("nqueens: N is 1..=20".into());
                }
                if let Some(a) = it.next() {
                    return Err(format!("nqueens: {a}: not an argument the simulator knows"));
                }
                Ok(Bench::Nqueens { n })
            }
            other => Err(format!("unknown benchmark {other:?} (btc, uts, nqueens)")),
        }
    }

    /// The root task.
    pub(crate) fn root(&self) -> Task {
        match *self {
            Bench::Btc { depth, .. } => Task::Btc(depth),
            Bench::Uts { seed, .. } => Task::UtsVisit(root(seed)),
            Bench::Nqueens { n } => Task::Queens(Board {
                n,
                row: 0,
                cols: 0,
                diag_l: 0,
                diag_r: 0,
            }),
        }
    }

    /// What `task` does; whether it is a node of the benchmark (counted
    /// and charged the node's work).
    pub(crate) fn expand(&self, task: &Task) -> (bool, Step) {
        match *task {
            Task::Btc(0) => (true, Step::Leaf),
            Task::Btc(d) => {
                let join = matches!(self, Bench::Btc { join: true, .. });
                let (a, b) = (Task::Btc(d - 1), Task::Btc(d - 1));
                (true, if join { Step::Join(a, b) } else { Step::Spawn2(a, b) })
            }
            Task::UtsVisit(node) => {
                let Bench::Uts { tree, .. } = self else {
                    unreachable!("a UTS task of another benchmark")
                };
                let n = tree.tree().children(&node);
                (
                    true,
                    if n == 0 {
                        Step::Leaf
                    } else {
                        Step::Call(Task::UtsRange(node, 0, n))
                    },
                )
            }
            Task::UtsRange(parent, lo, hi) => {
                if hi - lo == 1 {
                    return (false, Step::Call(Task::UtsVisit(child(&parent, lo))));
                }
                let mid = lo + (hi - lo) / 2;
                (
                    false,
                    Step::Join(Task::UtsRange(parent, lo, mid), Task::UtsRange(parent, mid, hi)),
                )
            }
            Task::Queens(b) => {
                if b.row == b.n {
                    return (true, Step::Leaf);
                }
                let free = b.free();
                (
                    true,
                    if free == 0 {
                        Step::Leaf
                    } else {
                        Step::Call(Task::Columns(b, free))
                    },
                )
            }
            Task::Columns(b, cands) => {
                let k = cands.count_ones();
                if k == 1 {
                    return (false, Step::Call(Task::Queens(b.place(cands))));
                }
                let (mut low, mut rest) = (0u32, cands);
                for _ in 0..k / 2 {
                    let bit = rest & rest.wrapping_neg();
                    low |= bit;
                    rest &= !bit;
                }
                (false, Step::Join(Task::Columns(b, low), Task::Columns(b, rest)))
            }
        }
    }

    /// The subtree of `task` in closed form, where it has one: BTC's
    /// `(depth, join form)`. Its nodes are `2^(depth+1) − 1`; its spawns
    /// ([`btc_spawns`]) all but its root's.
    pub(crate) fn closed_form(&self, task: &Task) -> Option<(u32, bool)> {
        match (self, task) {
            (Bench::Btc { join, .. }, Task::Btc(d)) => Some((*d, *join)),
            _ => None,
        }
    }

    /// Nodes and spawns of the tree, walked serially (what a simulation
    /// must have run, whatever the steals).
    pub fn count(&self) -> (u64, u64) {
        let (mut nodes, mut spawns) = (0, 0);
        let mut todo = vec![self.root()];
        while let Some(t) = todo.pop() {
            let (node, step) = self.expand(&t);
            nodes += node as u64;
            match step {
                Step::Leaf => {}
                Step::Call(c) => todo.push(c),
                Step::Join(a, c) => {
                    spawns += 1;
                    todo.extend([a, c]);
                }
                Step::Spawn2(a, c) => {
                    spawns += 2;
                    todo.extend([a, c]);
                }
            }
        }
        (nodes, spawns)
    }

    /// The benchmark's input as its JSON `params` would name it.
    pub fn params(&self) -> serde_json::Value {
        match *self {
            Bench::Btc { depth, join } => {
                serde_json::json!({"depth": depth, "form": if join { "join" } else { "spawn" }})
            }
            Bench::Uts { tree, seed } => serde_json::json!({
                "t": tree.kind, "b": tree.b0, "r": seed, "a": tree.shape, "d": tree.depth,
                "q": tree.q, "m": tree.m, "f": tree.f,
            }),
            Bench::Nqueens { n } => serde_json::json!({"n": n}),
        }
    }
}

/// Nodes of a BTC subtree of depth `d`.
pub(crate) fn btc_nodes(d: u32) -> u64 {
    (1u64 << (d + 1)) - 1
}

/// Spawns inside a BTC subtree of depth `d` (not its root's own): every
/// other task in the paper's form, every left child in `join`'s.
pub(crate) fn btc_spawns(d: u32, join: bool) -> u64 {
    if join {
        (1u64 << d) - 1
    } else {
        (1u64 << (d + 1)) - 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_have_the_benchmarks_node_counts() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        // BTC: 2^(d+1) - 1 tasks; spawn form spawns every non-root task.
        let b = Bench::parse(&args("btc --depth 10")).unwrap();
        assert_eq!(b.count(), (2047, 2046));
        assert_eq!((btc_nodes(10), btc_spawns(10, false)), (2047, 2046));
        let b = Bench::parse(&args("btc --depth 10 --join")).unwrap();
        assert_eq!(b.count(), (2047, 1023));
        assert_eq!(btc_spawns(10, true), 1023);
        // UTS T1 at depth 6 and the published T1 (4,130,071 nodes).
        let b = Bench::parse(&args("uts -t 1 -b 4 -r 19 -a 3 -d 10")).unwrap();
        assert_eq!(b.count().0, 4_130_071);
        // NQueens: nodes of the 8-queens search tree (benches/nqueens.rs).
        let b = Bench::parse(&args("nqueens 8")).unwrap();
        assert_eq!(b.count().0, 2057);
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        for (a, want) in [
            ("", "no benchmark"),
            ("fib 3", "unknown benchmark"),
            ("btc", "needs --depth"),
            ("btc --depth 3 --vs-seq 3", "not a flag"),
            ("uts -t 7", "-t is"),
            ("nqueens 0", "1..=20"),
        ] {
            let e = Bench::parse(&args(a)).unwrap_err();
            assert!(e.contains(want), "{a:?}: {e}");
        }
    }
}
