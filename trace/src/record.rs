//! What a rank records: fixed-size [`Record`]s of the kinds declared once
//! in `kinds!` (name, shape, meaning), in the rank's own clock ticks.

/// How a kind of record is drawn and counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A state of the rank from `start` to `end`.
    Interval,
    /// A moment (`start`; `end` equals it).
    Instant,
    /// An arrow from `peer`'s track at `start` to this rank's at `end`.
    Flow,
    /// An arrow from `peer`'s track to this rank's at `end`; `start` holds
    /// the low [`PEER_TICK_BITS`] bits of `peer`'s clock at the arrow's
    /// tail (the merge restores the rest from `end`: [`peer_ticks`]).
    PeerFlow,
}

/// Bits of the peer's clock a [`Shape::PeerFlow`] record keeps.
pub const PEER_TICK_BITS: u32 = 48;

/// The whole tick of a [`Shape::PeerFlow`]'s tail: the value of `peer`'s
/// clock with the low bits `low` nearest to `near` (the peer's clock at
/// about the same moment, from the headers).
pub fn peer_ticks(low: u64, near: u64) -> u64 {
    let span = 1u64 << PEER_TICK_BITS;
    let mask = span - 1;
    let candidate = (near & !mask) | (low & mask);
    // The nearest of candidate - span, candidate, candidate + span.
    [candidate.wrapping_sub(span), candidate, candidate.wrapping_add(span)]
        .into_iter()
        .min_by_key(|&c| c.abs_diff(near))
        .expect("three candidates")
}

/// One kind of record: its code, name, shape and meaning.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    /// The code in [`Record::kind`].
    pub code: u32,
    /// The name in every output (snake case).
    pub name: &'static str,
    /// How it is drawn and counted.
    pub shape: Shape,
    /// What it means, and what `peer` and `value` hold.
    pub doc: &'static str,
}

macro_rules! kinds {
    ($( $(#[doc = $doc:literal])* $variant:ident = $code:literal, $name:literal, $shape:ident; )*) => {
        /// The kinds of record.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Kind {
            $( $(#[doc = $doc])* $variant = $code, )*
        }

        impl Kind {
            /// Every kind, in code order.
            pub const ALL: &'static [KindInfo] = &[
                $( KindInfo { code: $code, name: $name, shape: Shape::$shape, doc: concat!($($doc, "\n",)*) }, )*
            ];

            /// The kind of a code, if it names one.
            pub fn from_code(code: u32) -> Option<Kind> {
                match code {
                    $( $code => Some(Kind::$variant), )*
                    _ => None,
                }
            }

            /// Its declaration.
            pub fn info(self) -> &'static KindInfo {
                Kind::ALL.iter().find(|k| k.code == self as u32).expect("every kind is declared")
            }
        }
    };
}

kinds! {
    /// Running a task (a thread in the uni-address region), from the moment
    /// the worker resumes it until the worker enters its scheduler.
    Task = 1, "task", Interval;
    /// One steal attempt; `peer`: the victim, `value`: its [`Outcome`].
    Steal = 2, "steal", Interval;
    /// Asleep on lifelines, from quiescing to waking.
    Quiescent = 3, "quiescent", Interval;
    /// Serving other ranks at a spawn or poll point (polling for Active
    /// Messages, exposing work, waking ranks on lifelines).
    Poll = 4, "poll", Interval;
    /// A thread suspended in a join on this rank, from its suspension to its
    /// resumption here; `value`: its frames' bytes.
    Suspended = 5, "suspended", Interval;
    /// Global memory fetched into this rank's cache; `peer`: the home rank,
    /// `value`: bytes.
    Fetch = 6, "fetch", Interval;
    /// Dirty cached bytes written back at a release point; `peer`: their
    /// home rank (this rank when they went to several), `value`: bytes.
    WriteBack = 7, "write_back", Interval;
    /// Woken on lifelines; `peer`: the rank that woke this one.
    Wakeup = 8, "wakeup", Instant;
    /// The job failed here (a panic, a fatal error).
    Failure = 9, "failure", Instant;
    /// A continuation stolen from `peer`: from the claim (on the victim's
    /// track) to its resumption on this rank.
    StealFlow = 10, "steal_flow", Flow;
    /// A join here took the result of a child that finished on `peer`: from
    /// the child's end there to the join here; `value`: the cell's address.
    JoinFlow = 11, "join_flow", PeerFlow;
}

/// How a steal attempt ended ([`Kind::Steal`]'s `value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Outcome {
    /// A continuation was stolen.
    Success = 0,
    /// The empty check found nothing.
    Empty = 1,
    /// The claim failed: nothing shared, or the victim's lock taken.
    ClaimFailed = 2,
    /// Claimed, but lost to the owner or another thief.
    Lost = 3,
    /// Not asked: the victim sleeps (lifelines).
    Asleep = 4,
}

impl Outcome {
    /// Every outcome with its name, in code order.
    pub const ALL: [(Outcome, &'static str); 5] = [
        (Outcome::Success, "success"),
        (Outcome::Empty, "empty"),
        (Outcome::ClaimFailed, "claim_failed"),
        (Outcome::Lost, "lost"),
        (Outcome::Asleep, "asleep"),
    ];

    /// The outcome of a code.
    pub fn from_code(code: u64) -> Option<Outcome> {
        Outcome::ALL.get(code as usize).map(|&(o, _)| o)
    }

    /// Its name in every output.
    pub fn name(self) -> &'static str {
        Outcome::ALL[self as usize].1
    }
}

/// One record: 32 bytes, written by the rank's worker thread only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// A [`Kind`] code.
    pub kind: u32,
    /// The other rank involved, if any (else this rank).
    pub peer: u32,
    /// Ticks of this rank's clock.
    pub start: u64,
    /// Ticks; equals `start` for instants.
    pub end: u64,
    /// Kind-specific (see [`Kind`]).
    pub value: u64,
}

/// Bytes per record in a file.
pub const RECORD_BYTES: usize = 32;
const _: () = assert!(std::mem::size_of::<Record>() == RECORD_BYTES);

impl Record {
    /// The record as stored: little-endian fields in declaration order.
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..4].copy_from_slice(&self.kind.to_le_bytes());
        b[4..8].copy_from_slice(&self.peer.to_le_bytes());
        b[8..16].copy_from_slice(&self.start.to_le_bytes());
        b[16..24].copy_from_slice(&self.end.to_le_bytes());
        b[24..32].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    /// The inverse of [`Record::to_bytes`].
    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> Record {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Record {
            kind: u32_at(0),
            peer: u32_at(4),
            start: u64_at(8),
            end: u64_at(16),
            value: u64_at(24),
        }
    }

    /// Its kind, if the code names one.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_code(self.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_round_trip() {
        let mut names = std::collections::HashSet::new();
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert!(names.insert(k.name), "{} twice", k.name);
            assert_eq!(Kind::from_code(k.code).map(|k| k as u32), Some(k.code));
            assert!(i == 0 || Kind::ALL[i - 1].code < k.code, "codes ascend");
            assert!(!k.doc.is_empty());
        }
        for (i, &(o, name)) in Outcome::ALL.iter().enumerate() {
            assert_eq!(o as usize, i);
            assert_eq!(Outcome::from_code(i as u64), Some(o));
            assert_eq!(o.name(), name);
        }
    }

    #[test]
    fn a_peer_tick_is_restored_from_its_low_bits() {
        let span = 1u64 << PEER_TICK_BITS;
        for t in [5u64, span - 3, span + 7, 7 * span + 12345, u64::MAX / 2] {
            let low = t & (span - 1);
            for near in [
                t,
                t + 1000,
                t.saturating_sub(1000),
                t + span / 3,
                t.saturating_sub(span / 3),
            ] {
                assert_eq!(peer_ticks(low, near), t, "t {t} near {near}");
            }
        }
    }

    #[test]
    fn a_record_round_trips_through_its_bytes() {
        let r = Record {
            kind: Kind::Steal as u32,
            peer: 7,
            start: u64::MAX - 3,
            end: 1 << 40,
            value: Outcome::Lost as u64,
        };
        assert_eq!(Record::from_bytes(&r.to_bytes()), r);
    }
}
