//! Code and statics at the same address in every process, with no build
//! settings: the program re-executes itself once with address
//! randomisation off.
//!
//! A stolen continuation carries return addresses and pointers to statics;
//! they must mean the same thing in the process that resumes it. Linking
//! non-PIE fixes code and statics, but a build setting of the final
//! executable does not reach a user's crate. Instead, before GASNet starts,
//! [`fix`] sets `ADDR_NO_RANDOMIZE` in the process's personality and
//! `exec`s `/proc/self/exe` with the same arguments and environment: the
//! kernel then loads the executable (PIE or not), its shared libraries and
//! its stacks at the same addresses in every process of the same binary on
//! the same kernel. Processes a rank spawns inherit the personality (udp's
//! workers, smp's forked ranks); processes started by a launcher (mpirun)
//! each re-execute themselves. The runtime's start-up check then proves it
//! on every rank, and names the cause when it fails.
//!
//! With randomisation off, heaps coincide across ranks too: a heap pointer
//! that moved with a thread then reads the other process's heap *silently*.
//! The migration checker (`UAT_CHECK_MIGRATION=1`) does not depend on
//! addresses differing: it gives each rank's heap its own range.
//!
//! `UAT_FIX_ADDRESSES=off` skips the re-execution (to show that the check
//! catches different layouts, or where `personality` is not allowed).

use std::os::unix::process::CommandExt;

/// Set across the re-execution, so that a kernel that accepts the
/// personality but does not apply it cannot make us loop.
const REEXEC_MARKER: &str = "UAT_ADDRESSES_REEXEC";

/// Re-executes this process with address randomisation off, unless it is
/// off already (or `UAT_FIX_ADDRESSES=off`). Returns only when no re-execution
/// is needed or possible; call it before GASNet starts and before any other
/// thread exists.
pub fn fix() {
    if std::env::var_os(REEXEC_MARKER).is_some() {
        keep_program_name();
    }
    // A bad value of any setting is reported by the runtime's start.
    if crate::Config::from_env().is_ok_and(|c| !c.get_fix_addresses()) {
        return;
    }
    // SAFETY: personality(0xffffffff) only reads the current persona.
    let persona = unsafe { libc::personality(0xffff_ffff) };
    if persona == -1 || persona & libc::ADDR_NO_RANDOMIZE != 0 {
        return;
    }
    if std::env::var_os(REEXEC_MARKER).is_some() {
        crate::gasnet::report(format_args!(
            "warning: address randomisation is still on after re-executing with ADDR_NO_RANDOMIZE; \
             the start-up check will tell whether the ranks' addresses agree"
        ));
        return;
    }
    // SAFETY: sets a flag of this process's persona (applied at exec).
    if unsafe { libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) } == -1 {
        return; // not allowed here: the start-up check will tell
    }
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_default();
    let err = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env(REEXEC_MARKER, "1")
        .exec();
    crate::gasnet::report(format_args!(
        "warning: cannot re-execute with address randomisation off ({err}); continuing"
    ));
}

/// Names this re-executed process after its program again: exec'ing
/// `/proc/self/exe` names it `exe` in `ps`, `top`, `pkill` and `perf`. The
/// kernel keeps 15 bytes of a name.
fn keep_program_name() {
    let Some(name) = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return;
    };
    let mut bytes: Vec<u8> = name.bytes().filter(|&b| b != 0).take(15).collect();
    bytes.push(0);
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes,
    // which `bytes` is, alive for the call.
    unsafe { libc::prctl(libc::PR_SET_NAME, bytes.as_ptr() as libc::c_ulong, 0, 0, 0) };
}

/// Removes the re-execution marker from the environment (after GASNet
/// started), so that processes this one starts decide for themselves.
pub(crate) fn forget_reexec_marker() {
    // SAFETY: called right after GASNet's init, before the runtime starts
    // any thread of ours; GASNet's own threads do not read this variable.
    unsafe { std::env::remove_var(REEXEC_MARKER) };
}
