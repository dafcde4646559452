//! The SIGSEGV handler: a uni-address stack overflow and a migrated heap
//! pointer become clear messages; every other fault goes to GASNet.
//!
//! - **Overflow.** Below the stack region lies a 1 TiB PROT_NONE guard
//!   ([`crate::arena`]). Rust code probes its stack, and a frame without
//!   probes (C, `alloca`) smaller than the guard lands in it too, so a fault
//!   whose address *or* stack pointer is in the guard is an overflow. The
//!   handler writes a message built at start-up and calls `_exit(1)`: only
//!   async-signal-safe calls (the fault may have interrupted `malloc`, a
//!   `println!` holding stdout's lock, or an AM handler). The job ends
//!   because GASNet's other ranks see this one die (within ~3 s, tested).
//! - **Migration** (`UAT_CHECK_MIGRATION=1`): a fault inside another rank's
//!   heap range ([`crate::migration`]) is a pointer that travelled with a
//!   stolen thread. The handler writes the origin and the faulting
//!   instruction (async-signal-safe), then, best effort, a backtrace
//!   (symbolising allocates: safe here because the faulting code was user
//!   code touching a foreign address, not the allocator), then `_exit(1)`.
//! - Anything else: the previous handler (GASNet's) is restored and the
//!   fault recurs into it.
//!
//! The handler runs on an alternate signal stack of the worker thread (the
//! faulting stack is full).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

static GUARD_LO: AtomicUsize = AtomicUsize::new(0);
static GUARD_HI: AtomicUsize = AtomicUsize::new(0);
static MESSAGE: OnceLock<Vec<u8>> = OnceLock::new();
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
/// Set while the handler reports a migration fault: a fault inside the
/// best-effort backtrace ends the process at once.
static REPORTING: AtomicBool = AtomicBool::new(false);

/// Bytes of the alternate signal stack (room for symbolising a backtrace).
const ALT_SIZE: usize = 1 << 20;

/// Installs the handler for guard range `[lo, hi)` (after GASNet's init, so
/// GASNet's own handler is the one we chain to). `message` is the overflow
/// message, written as is.
pub(crate) fn install(lo: usize, hi: usize, message: String) -> std::io::Result<()> {
    GUARD_LO.store(lo, Ordering::Relaxed);
    GUARD_HI.store(hi, Ordering::Relaxed);
    let _ = MESSAGE.set(message.into_bytes());
    // SAFETY: a fresh private mapping for the alternate signal stack; it is
    // never unmapped (the handler may run until the process ends).
    unsafe {
        let alt = libc::mmap(
            std::ptr::null_mut(),
            ALT_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if alt == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ss = libc::stack_t {
            ss_sp: alt,
            ss_flags: 0,
            ss_size: ALT_SIZE,
        };
        if libc::sigaltstack(&ss, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_segv as *const () as usize;
        // NODEFER: a fault inside the migration report re-enters and ends
        // the process instead of being blocked.
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGSEGV, &action, &mut previous) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = PREVIOUS.set(previous);
    }
    Ok(())
}

extern "C" fn on_segv(_sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if REPORTING.load(Ordering::Relaxed) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(1) };
    }
    // SAFETY: the kernel passes a valid siginfo and ucontext to SA_SIGINFO
    // handlers.
    let (addr, sp, ip) = unsafe {
        let regs = &(*(ctx as *const libc::ucontext_t)).uc_mcontext.gregs;
        (
            (*info).si_addr() as usize,
            regs[libc::REG_RSP as usize] as usize,
            regs[libc::REG_RIP as usize] as usize,
        )
    };
    let (lo, hi) = (GUARD_LO.load(Ordering::Relaxed), GUARD_HI.load(Ordering::Relaxed));
    if (lo..hi).contains(&addr) || (lo..hi).contains(&sp) {
        if let Some(msg) = MESSAGE.get() {
            gasnet_sys::write_stderr(msg);
        }
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(1) };
    }
    if let Some(origin) = crate::migration::foreign_rank(addr) {
        REPORTING.store(true, Ordering::Relaxed);
        crate::migration::report_fault(origin, addr, ip);
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(1) };
    }
    // Not ours: restore the previous handler and let the fault recur.
    if let Some(previous) = PREVIOUS.get() {
        // SAFETY: re-installs the action we replaced.
        unsafe { libc::sigaction(libc::SIGSEGV, previous, std::ptr::null_mut()) };
    }
}
