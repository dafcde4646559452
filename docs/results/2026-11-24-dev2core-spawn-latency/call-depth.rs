// Two extra call levels per spawn, no runtime: NQueens (the benchmark's
// serial code) with its first recursive call made through one or two
// out-of-line wrappers. `rustc -O call-depth.rs && taskset -c 1 ./call-depth 15`.
use std::time::Instant;
#[derive(Clone, Copy)]
struct Board { n: u32, row: u32, cols: u32, diag_l: u32, diag_r: u32 }
#[derive(Clone, Copy, Default)]
struct Counts { solutions: u64, nodes: u64 }
impl Board {
    fn free(&self) -> u32 { !(self.cols | self.diag_l | self.diag_r) & ((1u32 << self.n) - 1) }
    fn place(&self, bit: u32) -> Board { Board { n: self.n, row: self.row + 1, cols: self.cols | bit, diag_l: (self.diag_l | bit) << 1, diag_r: (self.diag_r | bit) >> 1 } }
}
fn solve<const W: usize>(b: Board) -> Counts {
    if b.row == b.n { return Counts { solutions: 1, nodes: 1 }; }
    let free = b.free();
    let below = if free == 0 { Counts::default() } else { try_columns::<W>(b, free) };
    Counts { solutions: below.solutions, nodes: below.nodes + 1 }
}
#[inline(never)] fn wrap1<const W: usize>(b: &Board, c: u32) -> Counts { if W >= 2 { wrap2::<W>(b, c) } else { try_columns::<W>(*b, c) } }
#[inline(never)] fn wrap2<const W: usize>(b: &Board, c: u32) -> Counts { let r = try_columns::<W>(*b, c); std::hint::black_box(()); r }
fn try_columns<const W: usize>(b: Board, cands: u32) -> Counts {
    let k = cands.count_ones();
    if k == 1 { return solve::<W>(b.place(cands)); }
    let mut low = 0u32; let mut rest = cands;
    for _ in 0..k / 2 { let bit = rest & rest.wrapping_neg(); low |= bit; rest &= !bit; }
    let a = if W == 0 { try_columns::<W>(b, low) } else { wrap1::<W>(&b, low) };
    let c = try_columns::<W>(b, rest);
    Counts { solutions: a.solutions + c.solutions, nodes: a.nodes + c.nodes }
}
fn main() {
    let n: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let b = Board { n, row: 0, cols: 0, diag_l: 0, diag_r: 0 };
    for _ in 0..3 {
        let t = Instant::now(); let c0 = solve::<0>(b); let t0 = t.elapsed().as_secs_f64();
        let t = Instant::now(); let c1 = solve::<1>(b); let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now(); let c2 = solve::<2>(b); let t2 = t.elapsed().as_secs_f64();
        println!("{} {} {} seq {:.3} +1 {:.3} ({:.3}) +2 {:.3} ({:.3})", c0.solutions, c1.solutions, c2.nodes, t0, t1, t1/t0, t2, t2/t0);
    }
}
