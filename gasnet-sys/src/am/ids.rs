//! Every Active Message handler of the job, declared once: the table below
//! is the only place a handler index is written.
//!
//! From each row come a [`HandlerId`] constant (its index, name, direction,
//! owner and purpose), which is what [`Handler::new`](super::Handler::new)
//! registers and what [`Gasnet::request`](crate::Gasnet::request) and
//! [`Token::reply`](super::Token::reply) send to, and the handler table of
//! `docs/design/settings-and-names.md` ([`markdown`], checked by a test).
//! A [`HandlerId`] cannot be made outside this table, so a handler without
//! a row does not compile; two rows with one index, or an index below the
//! client range (128..=255), fail the build (a constant assertion below).

use std::ffi::CStr;

/// Whether a handler serves requests or replies (a reply handler runs on
/// the rank that sent the request; only a request handler may reply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// It serves requests ([`Gasnet::request`](crate::Gasnet::request)).
    Request,
    /// It serves replies ([`Token::reply`](super::Token::reply)).
    Reply,
}

/// GASNet-EX's message category. Only short messages (arguments, no
/// payload) are bound; medium and long messages carry no handler of this
/// job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Up to 16 32-bit arguments, no payload.
    Short,
}

/// One row of the handler table: everything the job knows of a handler
/// but its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandlerId {
    index: u8,
    name: &'static str,
    c_name: &'static CStr,
    direction: Direction,
    category: Category,
    owner: &'static str,
    purpose: &'static str,
}

impl HandlerId {
    /// GASNet's handler index (128..=255, one per handler of the job).
    pub const fn index(self) -> u8 {
        self.index
    }

    /// The handler's name (as the refusal messages and the docs say it).
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The name given to GASNet (its diagnostics print it).
    pub const fn c_name(self) -> &'static CStr {
        self.c_name
    }

    /// Whether it serves requests or replies.
    pub const fn direction(self) -> Direction {
        self.direction
    }

    /// The message category it is registered for.
    pub const fn category(self) -> Category {
        self.category
    }

    /// The crate (and module) that implements and registers it.
    pub const fn owner(self) -> &'static str {
        self.owner
    }

    /// What it does, in one line.
    pub const fn purpose(self) -> &'static str {
        self.purpose
    }
}

/// The name as a C string, at compile time.
const fn c_name(with_nul: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(with_nul.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("a handler name holds a NUL byte"),
    }
}

/// Declares the handler table (see the module docs for what each row
/// yields).
macro_rules! handler_table {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident = $index:literal, $category:ident $direction:ident, owner $owner:literal, $purpose:literal;
    )*) => {
        $(
            $(#[doc = $doc])+
            pub const $name: HandlerId = HandlerId {
                index: $index,
                name: stringify!($name),
                c_name: c_name(concat!(stringify!($name), "\0")),
                direction: Direction::$direction,
                category: Category::$category,
                owner: $owner,
                purpose: $purpose,
            };
        )*

        /// Every handler of the job, in the table's order.
        pub const ALL: &[HandlerId] = &[$($name),*];
    };
}

handler_table! {
    /// gasnet-check's latency and round-trip probe.
    GASNET_CHECK_PING = 128, Short Request, owner "uat-bench (`gasnet-check`)",
        "a round trip's request: answered with `GASNET_CHECK_PONG` (nonce, answer)";
    /// gasnet-check's answer to a ping.
    GASNET_CHECK_PONG = 129, Short Reply, owner "uat-bench (`gasnet-check`)",
        "the answer to `GASNET_CHECK_PING`, checked against the nonce";
    /// A fetch-and-add request (address, operand, slot, sequence number).
    FAD_REQUEST = 200, Short Request, owner "am-fad (`service`)",
        "fetch-and-add on a registered word (`am`, `rdma-emulated`), answered with `FAD_REPLY`";
    /// The reply to a fetch-and-add or global atomic request (the old
    /// value, or a refusal).
    FAD_REPLY = 201, Short Reply, owner "am-fad (`service`)",
        "the old value (or a refusal) for the slot and sequence number waiting for it";
    /// An atomic on a word of the target's global heap (address, operation,
    /// operands, slot, sequence number), answered with `FAD_REPLY`.
    GLOBAL_ATOMIC_REQUEST = 202, Short Request, owner "am-fad (`service`)",
        "an atomic on a word of the target's global heap, answered with `FAD_REPLY`";
    /// A future cell of the receiver is handed back (cell address).
    CELL_FREE = 210, Short Request, owner "uni-threads (`future`)",
        "a joined future cell returns to the receiver's pool";
    /// The sender waits on the receiver's lifeline of one dimension.
    LIFELINE_REGISTER = 212, Short Request, owner "uni-threads (`lifeline`)",
        "the sender sleeps on the receiver's lifeline of the given dimension";
    /// The sender woke the receiver (the `WOKEN_BY` tag).
    LIFELINE_WAKE = 213, Short Request, owner "uni-threads (`lifeline`)",
        "the receiver is woken: work waits for it (the `WOKEN_BY` tag)";
    /// A global heap block of the receiver's local zone was freed by
    /// another rank (data address; its header already cleared).
    GLOBAL_FREE = 214, Short Request, owner "uat-memory (`heap`)",
        "a block of the receiver's local zone, freed on another rank, returns to its heap";
    /// The sender's one-sided operations on the receiver's memory waited
    /// long for the receiver's polls (it sleeps on its lifelines): the
    /// receiver polls without sleeping for the given microseconds.
    KEEP_POLLING = 215, Short Request, owner "uni-threads (`lifeline`)",
        "the receiver polls without sleeping for the given µs: the sender's gets, puts and atomics on its memory wait for its polls";
    /// The sender asks rank 0 for its clock.
    CLOCK_REQUEST = 216, Short Request, owner "uni-threads (`trace::clock`)",
        "a trace's clock alignment: rank 0 answers with `CLOCK_REPLY`";
    /// Rank 0's monotonic clock, in ns.
    CLOCK_REPLY = 217, Short Reply, owner "uni-threads (`trace::clock`)",
        "rank 0's monotonic clock in ns, one round trip of the alignment";
}

// Every index in the client range, each once.
const _: () = {
    let mut i = 0;
    while i < ALL.len() {
        assert!(ALL[i].index >= 128, "handler indices below 128 are GASNet's");
        let mut j = i + 1;
        while j < ALL.len() {
            assert!(
                ALL[i].index != ALL[j].index,
                "two Active Message handlers share an index"
            );
            j += 1;
        }
        i += 1;
    }
};

/// The handler table of `docs/design/settings-and-names.md`, generated from
/// [`ALL`].
pub fn markdown() -> String {
    let mut t = String::from("| index | name | kind | owner | purpose |\n|---|---|---|---|---|\n");
    for h in ALL {
        let kind = match (h.category, h.direction) {
            (Category::Short, Direction::Request) => "short request",
            (Category::Short, Direction::Reply) => "short reply",
        };
        t.push_str(&format!(
            "| {} | `{}` | {kind} | {} | {} |\n",
            h.index, h.name, h.owner, h.purpose
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_shows_the_generated_handler_table() {
        let table = markdown();
        let doc = "docs/design/settings-and-names.md";
        let text = std::fs::read_to_string(format!("{}/../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(
            text.contains(&table),
            "{doc}'s Active Message handler table differs from the one gasnet-sys declares \
             (gasnet-sys/src/am/ids.rs); replace it with:\n\n{table}"
        );
    }

    #[test]
    fn names_and_indices_are_unique_and_c_names_match() {
        for (i, a) in ALL.iter().enumerate() {
            assert_eq!(a.c_name().to_str().unwrap(), a.name());
            for b in &ALL[i + 1..] {
                assert_ne!(a.index(), b.index(), "{} and {}", a.name(), b.name());
                assert_ne!(a.name(), b.name());
            }
        }
    }
}
