//! The x86-64 context switch: three naked functions with hand-written unwind
//! info (after the IPSJ 2016 paper's appendix A.1).
//!
//! A *context record* is pushed on the running stack by
//! [`save_context_and_call`]; its address (`ctx`, the stack pointer after the
//! pushes) names the suspended caller. [`resume_context`] continues it, on
//! whatever process, as long as the frames above `ctx` are in place at the
//! same address. The record, lowest address first:
//!
//! ```text
//! ctx+0   padding (keeps the record, and so the callee's stack, 16-aligned)
//! ctx+8   r15
//! ctx+16  r14
//! ctx+24  r13
//! ctx+32  r12
//! ctx+40  rbx
//! ctx+48  rbp
//! ctx+56  return address into the caller of save_context_and_call
//! ```
//!
//! These are all the general registers the System V ABI asks a callee to
//! preserve (rsp is `ctx + 64` on return); everything else is dead across a
//! call.
//!
//! The floating-point control state (MXCSR's control bits, the x87 control
//! word) is callee-saved too, but it is not in the record: Rust code runs
//! only in the default floating-point environment (changing the rounding
//! mode, the exception masks or denormal handling is undefined behaviour in
//! Rust: see `core::arch::x86_64::_mm_setcsr`), and `spawn`, `join` and the
//! scheduler are Rust code, so at every save the state is the default one.
//! [`resume_context`] loads that default, so a context resumes in it even if
//! foreign code the scheduler called (GASNet, a signal handler) left another.
//! Saving it was not free: `stmxcsr` waits for every floating-point
//! instruction in flight (their status flags), about 8 cycles per spawn
//! after arithmetic; NQueens at one rank ran ~3% faster without it.

use std::arch::naked_asm;

/// One argument register that [`save_context_and_call`] passes through
/// untouched. It may hold uninitialized bytes: a piece of a task's closure,
/// padding included (`task_words`).
pub(crate) type Word = std::mem::MaybeUninit<usize>;

/// A function run by [`save_context_and_call`]: `f(ctx, a, b, c, d, e)`.
pub(crate) type ContextFn = unsafe extern "C-unwind" fn(ctx: *mut u8, a: Word, b: Word, c: Word, d: Word, e: Word);

/// A function run by [`call_on_stack`]: `f(a, b)`.
pub(crate) type StackFn = unsafe extern "C-unwind" fn(a: usize, b: usize);

/// Saves the caller's context as a record on the current stack and calls
/// `f(ctx, a, b, c, d, e)` just below it. Returns when `f` returns, or when anyone
/// calls `resume_context(ctx)` (with the frames above `ctx` in place), on
/// this or another process.
///
/// # Safety
/// `f` must either return normally, with the stack above `ctx` untouched,
/// or never return; if it does not return, the caller continues only
/// through `resume_context(ctx)`.
#[unsafe(naked)]
pub(crate) unsafe extern "C-unwind" fn save_context_and_call(
    f: ContextFn,
    a: Word,
    b: Word,
    c: Word,
    d: Word,
    e: Word,
) {
    naked_asm!(
        ".cfi_startproc",
        // On entry rsp = 16k + 8: the return address is at [rsp].
        "push rbp",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset rbp, 0",
        "push rbx",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset rbx, 0",
        "push r12",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r12, 0",
        "push r13",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r13, 0",
        "push r14",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r14, 0",
        "push r15",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r15, 0",
        // 8 bytes of padding: rsp is now 16-aligned, as f's call needs.
        "sub rsp, 8",
        ".cfi_adjust_cfa_offset 8",
        // f(ctx = rsp, a, b, c, d, e): a to e are already in rsi, rdx,
        // rcx, r8 and r9.
        "mov rax, rdi",
        "mov rdi, rsp",
        "call rax",
        // f returned: it preserved the callee-saved registers (ABI), so the
        // record is simply dropped.
        "add rsp, 56",
        ".cfi_adjust_cfa_offset -56",
        ".cfi_same_value rbp",
        ".cfi_same_value rbx",
        ".cfi_same_value r12",
        ".cfi_same_value r13",
        ".cfi_same_value r14",
        ".cfi_same_value r15",
        "ret",
        ".cfi_endproc",
    )
}

/// Continues the context saved at `ctx`: restores its registers and returns
/// from its `save_context_and_call`.
///
/// # Safety
/// The frames above `ctx` (the record and its caller's frames) must be in
/// place at their original addresses, and nothing live may lie in
/// the stack below `ctx` that anyone still needs.
#[unsafe(naked)]
pub(crate) unsafe extern "C-unwind" fn resume_context(ctx: *mut u8) -> ! {
    naked_asm!(
        ".cfi_startproc",
        // Nothing to unwind to: this function never returns to its caller.
        ".cfi_undefined rip",
        "mov rsp, rdi",
        // Rust's default floating-point environment (module docs): MXCSR
        // with every exception masked, round to nearest, no flush to zero;
        // the x87 control word likewise (all masked, 64-bit precision).
        "ldmxcsr [rip + {mxcsr}]",
        "fldcw [rip + {fcw}]",
        "add rsp, 8",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        // Returns from the save_context_and_call that made the record.
        "ret",
        ".cfi_endproc",
        mxcsr = sym DEFAULT_MXCSR,
        fcw = sym DEFAULT_X87_CONTROL_WORD,
    )
}

/// MXCSR in the default floating-point environment: all six exceptions
/// masked, round to nearest, flush-to-zero and denormals-are-zero off.
static DEFAULT_MXCSR: u32 = 0x1f80;
/// The x87 control word in the default environment: all exceptions masked,
/// 64-bit mantissa, round to nearest.
static DEFAULT_X87_CONTROL_WORD: u16 = 0x037f;

/// Calls `f(a, b)` with the stack pointer at `stack_top` (aligned down to 16
/// bytes), then returns to the original stack. (The scheduler enters its
/// stack with [`start_on_stack`], which never comes back; this is the
/// returning variant, for callers that need one.)
///
/// # Safety
/// `[stack_top - need, stack_top)` must be writable memory that nothing else
/// uses while `f` runs, `need` being the stack `f` uses.
#[unsafe(naked)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) unsafe extern "C-unwind" fn call_on_stack(stack_top: usize, f: StackFn, a: usize, b: usize) {
    naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset rbp, 0",
        // The CFA is found through rbp from here on, so an unwinder walks
        // from f's frames back onto the original stack.
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "mov rsp, rdi",
        "and rsp, -16",
        "mov rax, rsi",
        "mov rdi, rdx",
        "mov rsi, rcx",
        "call rax",
        "mov rsp, rbp",
        ".cfi_def_cfa_register rsp",
        "pop rbp",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_same_value rbp",
        "ret",
        ".cfi_endproc",
    )
}

/// Calls `f(a, b)` on the stack at `stack_top` as the *root* of a chain of
/// frames: the unwinder stops here (backtraces end at the thread's base
/// instead of walking into whatever lies above it). `f` must not return.
///
/// # Safety
/// As [`call_on_stack`]; and `f` never returns.
#[unsafe(naked)]
pub(crate) unsafe extern "C-unwind" fn start_on_stack(stack_top: usize, f: StackFn, a: usize, b: usize) -> ! {
    naked_asm!(
        ".cfi_startproc",
        ".cfi_undefined rip",
        "mov rsp, rdi",
        "and rsp, -16",
        "xor ebp, ebp",
        "mov rax, rsi",
        "mov rdi, rdx",
        "mov rsi, rcx",
        "call rax",
        "ud2",
        ".cfi_endproc",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static SAVED: Cell<usize> = const { Cell::new(0) };
        static TRACE: Cell<u64> = const { Cell::new(0) };
    }

    fn trace(step: u64) {
        TRACE.with(|t| t.set(t.get() * 10 + step));
    }

    fn w(x: usize) -> Word {
        Word::new(x)
    }

    unsafe extern "C-unwind" fn returns_normally(ctx: *mut u8, a: Word, b: Word, c: Word, d: Word, e: Word) {
        assert_eq!(ctx as usize % 16, 0, "the record is 16-byte aligned");
        // SAFETY: the test passes every argument initialized.
        let [a, b, c, d, e] = [a, b, c, d, e].map(|x| unsafe { x.assume_init() });
        trace((a + 10 * b + 100 * c + 1000 * d + 10_000 * e) as u64);
    }

    #[test]
    #[inline(never)]
    fn save_and_call_returns_normally_with_registers_intact() {
        let keep = std::hint::black_box([1u64, 2, 3, 4, 5, 6, 7, 8]);
        TRACE.with(|t| t.set(0));
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { save_context_and_call(returns_normally, w(1), w(2), w(3), w(4), w(5)) };
        assert_eq!(TRACE.with(|t| t.get()), 54_321, "a to e arrive, in order");
        assert_eq!(std::hint::black_box(keep), [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    // A 64 KiB private stack for the tests that switch stacks.
    struct TestStack(Vec<u8>);
    impl TestStack {
        fn new() -> TestStack {
            TestStack(vec![0u8; 64 << 10])
        }
        fn top(&self) -> usize {
            self.0.as_ptr() as usize + self.0.len()
        }
    }

    unsafe extern "C-unwind" fn on_other_stack(top: usize, out: usize) {
        let local = 0u8;
        let sp = &local as *const u8 as usize;
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { *(out as *mut usize) = sp };
        assert!(sp < top && sp > top - (64 << 10), "running on the given stack");
    }

    #[test]
    fn call_on_stack_runs_there_and_comes_back() {
        let stack = TestStack::new();
        let mut seen = 0usize;
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe {
            call_on_stack(
                stack.top(),
                on_other_stack,
                stack.top(),
                &mut seen as *mut usize as usize,
            )
        };
        assert!(seen < stack.top() && seen > stack.top() - (64 << 10));
    }

    // Suspend: save a context, jump away (to another stack) without
    // returning, then resume the saved context from there.
    unsafe extern "C-unwind" fn save_then_leave(ctx: *mut u8, stack_top: Word, _: Word, _: Word, _: Word, _: Word) {
        // SAFETY: the test passes it initialized.
        let stack_top = unsafe { stack_top.assume_init() };
        SAVED.with(|s| s.set(ctx as usize));
        trace(1);
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { start_on_stack(stack_top, resume_from_elsewhere, 0, 0) }
    }

    unsafe extern "C-unwind" fn resume_from_elsewhere(_: usize, _: usize) {
        trace(2);
        let ctx = SAVED.with(|s| s.get());
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { resume_context(ctx as *mut u8) }
    }

    #[test]
    #[inline(never)]
    fn resume_context_returns_from_save_context_and_call() {
        let stack = TestStack::new();
        let canary = std::hint::black_box(0xdead_beef_u64);
        let fp_before = read_mxcsr();
        TRACE.with(|t| t.set(0));
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { save_context_and_call(save_then_leave, w(stack.top()), w(0), w(0), w(0), w(0)) };
        trace(3);
        assert_eq!(TRACE.with(|t| t.get()), 123);
        assert_eq!(std::hint::black_box(canary), 0xdead_beef);
        assert_eq!(read_mxcsr() & MXCSR_CONTROL_BITS, fp_before & MXCSR_CONTROL_BITS);
    }

    // Resume from a place whose floating-point environment is not the
    // default (rounding toward zero, flush to zero): the context continues in
    // the default one. The switch is one asm block, so no Rust code runs in
    // the other environment.
    unsafe extern "C-unwind" fn save_then_leave_odd_fp(
        ctx: *mut u8,
        stack_top: Word,
        _: Word,
        _: Word,
        _: Word,
        _: Word,
    ) {
        // SAFETY: the test passes it initialized.
        let stack_top = unsafe { stack_top.assume_init() };
        SAVED.with(|s| s.set(ctx as usize));
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { start_on_stack(stack_top, resume_with_odd_fp, 0, 0) }
    }

    unsafe extern "C-unwind" fn resume_with_odd_fp(_: usize, _: usize) {
        let ctx = SAVED.with(|s| s.get());
        let odd_mxcsr: u32 = 0x1f80 | 0x6000 | 0x8000;
        let odd_fcw: u16 = 0x0c7f;
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe {
            std::arch::asm!(
                "ldmxcsr [{m}]",
                "fldcw [{f}]",
                "jmp {resume}",
                m = in(reg) &odd_mxcsr,
                f = in(reg) &odd_fcw,
                resume = sym resume_context,
                in("rdi") ctx,
                options(noreturn),
            )
        }
    }

    #[test]
    #[inline(never)]
    fn a_context_resumes_in_the_default_floating_point_environment() {
        let stack = TestStack::new();
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { save_context_and_call(save_then_leave_odd_fp, w(stack.top()), w(0), w(0), w(0), w(0)) };
        assert_eq!(read_mxcsr() & MXCSR_CONTROL_BITS, 0x1f80);
        assert_eq!(read_x87_control_word(), 0x037f);
    }

    fn read_x87_control_word() -> u16 {
        let mut v = 0u16;
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { std::arch::asm!("fnstcw [{}]", in(reg) &mut v) };
        v
    }

    /// MXCSR without its six sticky exception flags.
    const MXCSR_CONTROL_BITS: u32 = !0x3f;

    // Move the frames: copy [ctx, frame top) out, scribble over it, copy it
    // back at the same address, resume. This is what suspend/resume and a
    // steal do to a thread's frames.
    static mut COPY: [u8; 4096] = [0; 4096];

    unsafe extern "C-unwind" fn copy_out_and_back(ctx: *mut u8, top: Word, stack_top: Word, _: Word, _: Word, _: Word) {
        // SAFETY: the test passes them initialized.
        let (top, stack_top) = unsafe { (top.assume_init(), stack_top.assume_init()) };
        SAVED.with(|s| s.set(ctx as usize));
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { start_on_stack(stack_top, swap_frames, ctx as usize, top) }
    }

    unsafe extern "C-unwind" fn swap_frames(ctx: usize, top: usize) {
        let len = top - ctx;
        assert!(len <= 4096, "frames of {len} bytes");
        // SAFETY: [ctx, top) are the suspended frames; we run on another stack.
        unsafe {
            let copy = &raw mut COPY as *mut u8;
            std::ptr::copy_nonoverlapping(ctx as *const u8, copy, len);
            std::ptr::write_bytes(ctx as *mut u8, 0xcc, len);
            std::ptr::copy_nonoverlapping(copy, ctx as *mut u8, len);
            resume_context(ctx as *mut u8)
        }
    }

    #[inline(never)]
    fn frames_survive_a_round_trip(depth: u32, stack_top: usize) -> u64 {
        let mine = std::hint::black_box(depth as u64 * 1_000_003);
        if depth > 0 {
            return mine + frames_survive_a_round_trip(depth - 1, stack_top);
        }
        // The frames of this test function's callers up to the test body lie
        // above; copy them all (up to `top`, a local of the test body).
        let top = TOP.with(|t| t.get());
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { save_context_and_call(copy_out_and_back, w(top), w(stack_top), w(0), w(0), w(0)) };
        mine
    }

    thread_local! {
        static TOP: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn frames_copied_out_and_back_at_the_same_address_resume() {
        let stack = TestStack::new();
        let marker = 0u8;
        // Everything between the deepest frame and this marker is moved.
        TOP.with(|t| t.set(&marker as *const u8 as usize));
        let sum = frames_survive_a_round_trip(5, stack.top());
        assert_eq!(sum, (0..=5u64).map(|d| d * 1_000_003).sum::<u64>());
    }

    fn read_mxcsr() -> u32 {
        let mut v = 0u32;
        // SAFETY: a test of the context switch: its own stacks and contexts, alive for the call.
        unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut v) };
        v
    }

    unsafe extern "C-unwind" fn panics(_: *mut u8, _: Word, _: Word, _: Word, _: Word, _: Word) {
        panic!("unwinds through save_context_and_call");
    }

    #[test]
    fn a_panic_unwinds_through_the_saved_context() {
        // The CFI of save_context_and_call must let the unwinder pass.
        // SAFETY: `panics` runs on this thread's stack and unwinds out.
        let r = std::panic::catch_unwind(|| unsafe { save_context_and_call(panics, w(0), w(0), w(0), w(0), w(0)) });
        assert!(r.is_err());
    }
}
