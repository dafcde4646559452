//! The UTS tree's nodes (shared/reference/UTS.md): its parameters, the
//! SHA-1 node generation of the specification and the number of children.
//! Included as a module by the benchmarks' `uts_tree.rs` and by the
//! simulator (`uat-sim`), which generates the same trees.

use sha1::{Digest, Sha1};
use std::arch::x86_64::{__m128i, _mm_set_epi32, _mm_setzero_si128};

/// The tree's parameters, as plain data every task can copy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tree {
    pub(crate) kind: u32,
    pub(crate) b0: f64,
    pub(crate) shape: u32,
    pub(crate) depth: u32,
    pub(crate) q: f64,
    pub(crate) m: u32,
    pub(crate) f: f64,
}

#[derive(Clone, Copy)]
pub(crate) struct Node {
    /// The node's SHA-1 digest as its five 32-bit words (the digest's bytes
    /// are these words, big-endian).
    pub(crate) state: [u32; 5],
    pub(crate) height: u32,
}

/// SHA-1's initial state (FIPS 180-4, 5.3.1).
pub(crate) const SHA1_INIT: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];

pub(crate) fn root(seed: u32) -> Node {
    let mut msg = [0u8; 20];
    msg[16..].copy_from_slice(&seed.to_be_bytes());
    let digest: [u8; 20] = Sha1::digest(msg).into();
    Node {
        state: std::array::from_fn(|k| u32::from_be_bytes(digest[4 * k..4 * k + 4].try_into().unwrap())),
        height: 0,
    }
}

/// The child's state: SHA-1 of the parent's 20-byte digest and the index
/// (big-endian), 24 bytes, which is one padded 64-byte block.
pub(crate) fn child(parent: &Node, i: u32) -> Node {
    let mut state = SHA1_INIT;
    sha1::compress(&mut state, &[message_block(&parent.state, i).into()]);
    Node {
        state,
        height: parent.height + 1,
    }
}

/// The one SHA-1 block of a child's message: the parent's digest, the
/// index, the 0x80 that ends the message, zeros, and its length (192 bits),
/// all big-endian.
///
/// Each 16-byte quarter is built in a register and stored whole, because
/// SHA-1 loads the block a quarter at a time: a quarter written in pieces
/// (as copying the digest bytes and padding into a buffer does) makes each
/// of those loads span several stores still in the store buffer, which
/// cannot be forwarded, and the load waits for all of them to reach the
/// cache: 29% of the serial time of T1 (docs/results/2026-11-25-dev2core-uts-block/).
pub(crate) fn message_block(digest: &[u32; 5], i: u32) -> [u8; 64] {
    // Lane 0 of _mm_set_epi32 is the lowest address: each lane holds one
    // big-endian word, i.e. the native word byte-swapped.
    let be = |w: u32| w.swap_bytes() as i32;
    let [d0, d1, d2, d3, d4] = *digest;
    // SAFETY: SSE2 is part of x86-64, the only platform uat supports.
    let quarters: [__m128i; 4] = unsafe {
        [
            _mm_set_epi32(be(d3), be(d2), be(d1), be(d0)),
            _mm_set_epi32(0, be(0x8000_0000), be(i), be(d4)),
            _mm_setzero_si128(),
            _mm_set_epi32(be(24 * 8), 0, 0, 0),
        ]
    };
    // SAFETY: [__m128i; 4] and [u8; 64] have the same size, and every bit
    // pattern is a valid [u8; 64].
    unsafe { std::mem::transmute::<[__m128i; 4], [u8; 64]>(quarters) }
}

pub(crate) fn rand(state: &[u32; 5]) -> u32 {
    state[4] & 0x7fff_ffff
}

impl Tree {
    pub(crate) fn children(&self, node: &Node) -> u32 {
        let h = node.height;
        let binomial = match self.kind {
            0 => true,
            1 => false,
            _ => (h as f64) >= self.f * self.depth as f64,
        };
        if binomial {
            if h == 0 {
                return self.b0.floor() as u32; // the root draws nothing
            }
            let u = rand(&node.state) as f64 / 2147483648.0;
            return if u < self.q { self.m } else { 0 };
        }
        let (b0, d, hf) = (self.b0, self.depth as f64, h as f64);
        let bh = if h == 0 {
            b0
        } else {
            match self.shape {
                0 => b0 * (1.0 - hf / d),
                1 => b0 * hf.powf(-b0.ln() / d.ln()),
                2 => {
                    if hf > 5.0 * d {
                        0.0
                    } else {
                        b0.powf((2.0 * std::f64::consts::PI * hf / d).sin())
                    }
                }
                _ => {
                    if h < self.depth {
                        b0
                    } else {
                        0.0
                    }
                }
            }
        };
        if bh <= 0.0 {
            return 0;
        }
        let p = 1.0 / (1.0 + bh);
        let u = rand(&node.state) as f64 / 2147483648.0;
        let n = ((1.0 - u).ln() / (1.0 - p).ln()).floor();
        n.clamp(0.0, 100.0) as u32
    }
}
