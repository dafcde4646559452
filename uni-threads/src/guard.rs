//! Turning a uni-address stack overflow into a clear message.
//!
//! Below the stack region lies a PROT_NONE guard (≥ 64 KiB; x86-64 Rust code
//! probes its stack, so a deep recursion touches the guard before anything
//! beyond it). A SIGSEGV handler, running on an alternate signal stack (the
//! faulting stack is full), recognises faults in the guard, prints which
//! setting to raise, and ends the whole job. Other faults go to the handler
//! that was installed before ours (GASNet's), which is restored and re-run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use gasnet_sys::Gasnet;

static GUARD_LO: AtomicUsize = AtomicUsize::new(0);
static GUARD_HI: AtomicUsize = AtomicUsize::new(0);
static MESSAGE: OnceLock<Vec<u8>> = OnceLock::new();
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Installs the handler for guard range `[lo, hi)` (after GASNet's init, so
/// GASNet's own handler is the one we chain to).
pub fn install(gasnet: Gasnet, lo: usize, hi: usize, stack_size: usize) -> std::io::Result<()> {
    GUARD_LO.store(lo, Ordering::Relaxed);
    GUARD_HI.store(hi, Ordering::Relaxed);
    let _ = MESSAGE.set(
        format!(
            "[rank {}] error: uni-address stack overflow: a task recursed past the {} MiB stack region; \
             raise UAT_STACK_SIZE (e.g. UAT_STACK_SIZE={}M) or Config::stack_size\n",
            gasnet.rank(),
            stack_size >> 20,
            (stack_size >> 20).max(1) * 4
        )
        .into_bytes(),
    );
    const ALT_SIZE: usize = 256 << 10;
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
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGSEGV, &action, &mut previous) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = PREVIOUS.set(previous);
    }
    Ok(())
}

extern "C" fn on_segv(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    if addr >= GUARD_LO.load(Ordering::Relaxed) && addr < GUARD_HI.load(Ordering::Relaxed) {
        if let Some(msg) = MESSAGE.get() {
            // SAFETY: write(2) is async-signal-safe; the buffer is static.
            unsafe { libc::write(2, msg.as_ptr() as *const _, msg.len()) };
        }
        // Ending the job from a signal handler: GASNet's own fatal-signal
        // path does the same, and this process cannot continue anyway.
        if let Some(g) = Gasnet::current() {
            g.exit(1);
        }
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(1) };
    }
    // Not ours: restore the previous handler and let the fault recur.
    if let Some(previous) = PREVIOUS.get() {
        // SAFETY: re-installs the action we replaced.
        unsafe { libc::sigaction(libc::SIGSEGV, previous, std::ptr::null_mut()) };
    }
}
