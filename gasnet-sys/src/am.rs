//! Active Messages: typed short-AM handlers, requests, replies and polling.
//!
//! A handler is an `extern "C" fn(Token, Arg, ...)` taking 0 to 16 [`Arg`]s;
//! its argument count is part of its type ([`HandlerFn`]), registered with it
//! ([`Handler`]) and checked against every request and reply that names it.
//! Handlers run inside GASNet's polling (any thread that polls or makes a
//! blocking call), must not block, and may reply at most once through their
//! [`Token`]. Client handler indices are `128..=255`, each declared once in
//! the job's handler table ([`ids`]): a handler registers, and a message
//! names its handler, through that table's [`HandlerId`]s.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::{raw, Error, Gasnet};

pub mod ids;

pub use ids::{Direction, HandlerId};

/// One AM argument (GASNet's `gex_AM_Arg_t`, a 32-bit integer; identical
/// ABI for signed and unsigned on x86-64). 64-bit values travel as two.
pub type Arg = u32;

/// The handle of the AM being handled. The lifetime ties it to one handler
/// invocation: it cannot be kept after the handler returns.
#[repr(transparent)]
pub struct Token<'a> {
    raw: raw::gex_Token_t,
    _handler_call: PhantomData<&'a ()>,
}

impl Token<'_> {
    /// The rank that sent this message.
    pub fn source(&self) -> u32 {
        // SAFETY: a Token only exists during its handler's invocation.
        unsafe { raw::uat_token_srcrank(self.raw) }
    }

    /// Sends the reply to a request (at most once per request handler; never
    /// from a reply handler).
    pub fn reply(self, handler: HandlerId, args: &[Arg]) {
        check_args(handler, args.len(), KIND_REPLY);
        let handler = handler.index();
        // SAFETY: valid token (see above); handler registered with this arity.
        let code = unsafe { raw::uat_am_reply_short(self.raw, handler, args.len() as u32, args.as_ptr() as *const _) };
        assert_eq!(code, raw::UAT_OK as i32, "gex_AM_ReplyShort failed");
    }
}

/// Function types usable as short-AM handlers, by argument count.
///
/// # Safety
/// Implemented only for `extern "C" fn(Token, Arg × NARGS)`, whose ABI is the
/// one GASNet calls a short handler with.
pub unsafe trait HandlerFn: Copy {
    /// The handler's argument count (after the token).
    const NARGS: usize;
    /// The function, as GASNet's handler table stores it.
    fn as_raw(self) -> unsafe extern "C" fn();
}

macro_rules! handler_fn {
    ($n:expr; $($a:ident)*) => {
        // SAFETY: the signature is GASNet's short-handler ABI with $n args.
        unsafe impl HandlerFn for for<'a> extern "C" fn(Token<'a>, $($a),*) {
            const NARGS: usize = $n;
            fn as_raw(self) -> unsafe extern "C" fn() {
                // SAFETY: only transmuted back to its real type by GASNet.
                unsafe { std::mem::transmute::<Self, unsafe extern "C" fn()>(self) }
            }
        }
    };
}
handler_fn!(0;);
handler_fn!(1; Arg);
handler_fn!(2; Arg Arg);
handler_fn!(3; Arg Arg Arg);
handler_fn!(4; Arg Arg Arg Arg);
handler_fn!(5; Arg Arg Arg Arg Arg);
handler_fn!(6; Arg Arg Arg Arg Arg Arg);
handler_fn!(7; Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(8; Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(9; Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(10; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(11; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(12; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(13; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(14; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(15; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);
handler_fn!(16; Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg Arg);

const KIND_REQUEST: u8 = 1;
const KIND_REPLY: u8 = 2;

/// A handler to register: its row of the handler table ([`ids`]) and its
/// function.
#[derive(Clone, Copy)]
pub struct Handler {
    index: u8,
    kind: u8,
    nargs: usize,
    fnptr: unsafe extern "C" fn(),
    name: &'static std::ffi::CStr,
}

impl Handler {
    /// The handler `id` (a request or reply handler, as its row says),
    /// implemented by `f`.
    pub fn new<F: HandlerFn>(id: HandlerId, f: F) -> Handler {
        Handler {
            index: id.index(),
            kind: match id.direction() {
                Direction::Request => KIND_REQUEST,
                Direction::Reply => KIND_REPLY,
            },
            nargs: F::NARGS,
            fnptr: f.as_raw(),
            name: id.c_name(),
        }
    }
}

// Per index: (kind << 5) | nargs, 0 = unregistered. Written at registration,
// before any message can name the index; read by every request and reply.
static REGISTERED: [AtomicU8; 256] = [const { AtomicU8::new(0) }; 256];

#[inline]
fn check_args(handler: HandlerId, nargs: usize, kind: u8) {
    let entry = REGISTERED[handler.index() as usize].load(Ordering::Relaxed);
    assert!(
        entry == (kind << 5) | nargs as u8,
        "AM handler {} ({}) is not registered as a {} handler taking {nargs} arguments",
        handler.name(),
        handler.index(),
        if kind == KIND_REQUEST { "request" } else { "reply" }
    );
}

impl Gasnet {
    /// Registers `handlers` (rows of the handler table, [`ids`], each once).
    pub fn register_handlers(self, handlers: &[Handler]) -> Result<(), Error> {
        // SAFETY: init succeeded.
        let max_args = unsafe { raw::uat_am_max_args() } as usize;
        let mut table = Vec::with_capacity(handlers.len());
        for h in handlers {
            // The index is in the client range: the table asserts it.
            if h.nargs > max_args {
                return Err(Error::Handlers {
                    why: format!(
                        "handler {} ({}) takes {} arguments; this conduit allows {max_args}",
                        h.name.to_string_lossy(),
                        h.index,
                        h.nargs
                    ),
                });
            }
            if REGISTERED[h.index as usize].load(Ordering::Relaxed) != 0 {
                return Err(Error::Handlers {
                    why: format!(
                        "handler {} (index {}) is registered twice",
                        h.name.to_string_lossy(),
                        h.index
                    ),
                });
            }
            let flags = raw::UAT_FLAG_AM_SHORT
                | if h.kind == KIND_REQUEST {
                    raw::UAT_FLAG_AM_REQUEST
                } else {
                    raw::UAT_FLAG_AM_REPLY
                };
            table.push(raw::gex_AM_Entry_t {
                gex_index: h.index,
                gex_fnptr: Some(h.fnptr),
                gex_flags: flags as _,
                gex_nargs: h.nargs as _,
                gex_cdata: std::ptr::null(),
                gex_name: h.name.as_ptr(),
            });
        }
        // SAFETY: a valid table of entries whose functions have the ABI their
        // nargs says (HandlerFn); names are 'static.
        let code = unsafe { raw::uat_register_handlers(table.as_mut_ptr(), table.len()) };
        if code != raw::UAT_OK as i32 {
            return Err(Error::Handlers {
                why: format!("gex_EP_RegisterHandlers returned {code}"),
            });
        }
        for h in handlers {
            REGISTERED[h.index as usize].store((h.kind << 5) | h.nargs as u8, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Sends a short AM request to `rank`'s handler `handler`. May poll (and
    /// so run handlers) while waiting for resources; never call it from a
    /// handler.
    #[inline]
    pub fn request(self, rank: u32, handler: HandlerId, args: &[Arg]) {
        check_args(handler, args.len(), KIND_REQUEST);
        let handler = handler.index();
        debug_assert!(rank < self.size());
        crate::ops::count(|c| c.am_requests += 1);
        crate::hosts::before_op_to(rank);
        // SAFETY: init succeeded; handler registered with this arity.
        let code = unsafe { raw::uat_am_request_short(rank, handler, args.len() as u32, args.as_ptr() as *const _) };
        assert_eq!(code, raw::UAT_OK as i32, "gex_AM_RequestShort to rank {rank} failed");
    }

    /// Runs the handlers of messages that have arrived (`gasnet_AMPoll`).
    #[inline]
    pub fn poll(self) {
        // SAFETY: init succeeded; polling is thread-safe in PAR mode.
        unsafe { raw::uat_poll() };
    }
}

/// Splits a u64 into two AM arguments (low, high).
#[inline]
pub const fn split_u64(v: u64) -> [Arg; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Joins two AM arguments (low, high) into a u64.
#[inline]
pub const fn join_u64(lo: Arg, hi: Arg) -> u64 {
    lo as u64 | ((hi as u64) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_round_trips_through_two_args() {
        for v in [0, 1, u32::MAX as u64, 1 << 32, u64::MAX, 0x1000_0000_1234] {
            let [lo, hi] = split_u64(v);
            assert_eq!(join_u64(lo, hi), v);
        }
    }

    extern "C" fn h2(_: Token, _: Arg, _: Arg) {}

    #[test]
    fn arity_is_part_of_the_type() {
        let h = Handler::new(ids::CELL_FREE, h2 as for<'a> extern "C" fn(Token<'a>, Arg, Arg));
        assert_eq!((h.nargs, h.kind, h.index), (2, KIND_REQUEST, 210));
    }
}
