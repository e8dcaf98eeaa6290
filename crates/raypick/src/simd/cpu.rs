//! CPU detection, the one dispatch point, and cache hints.
//!
//! SSE2 is part of the x86-64 baseline; AVX and the x86-64-v3 level (AVX2, FMA, BMI1/2, LZCNT,
//! POPCNT) are asked of the CPU once per process ([`Isa::detected`]). The hot loops (the wide
//! BVH's walks) are compiled once per instruction set and entered through [`dispatch`], which
//! hands the loop an [`Isa`] that is a constant in each compiled copy, so the routines the loop
//! calls with it ([`super::box8_on`], [`super::qbox8_on`], [`super::packet_box8_on`]) pick their
//! AVX or SSE body at compile time. Routines also called outside such a loop (the triangle tests,
//! a packet's set-up) ask [`Isa::detected`] themselves: one relaxed load, predicted.
//!
//! An [`Isa`] is a token: only detection makes one that claims more than the baseline, which is
//! what makes calling the AVX routines it selects sound.

use std::sync::atomic::{AtomicU8, Ordering};

/// The instruction sets the SIMD code is compiled for, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    /// No run-time choice: the scalar twins (`force-scalar`, or a target other than x86-64), or,
    /// in a WebAssembly module compiled with `simd128`, the 4-lane routines it was compiled with
    /// (WebAssembly has no feature detection: a module runs whole or fails to compile).
    Scalar = 1,
    /// x86-64's baseline, SSE2.
    Sse2,
    /// AVX: 8-lane float operations.
    Avx,
    /// x86-64-v3: AVX2, FMA, BMI1/2, LZCNT, POPCNT.
    X86_64V3,
}

/// What this CPU can run, as a token that only detection makes (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isa(Level);

impl Isa {
    /// Claims nothing beyond the target's baseline: SSE2 on x86-64, the scalar twins with
    /// `force-scalar` or on other targets.
    pub const BASELINE: Self = Self(
        if cfg!(all(target_arch = "x86_64", not(feature = "force-scalar"))) {
            Level::Sse2
        } else {
            Level::Scalar
        },
    );

    /// The best this CPU has: asked once per process, then one relaxed load. With
    /// `force-scalar`, or on a target other than x86-64, [`Isa::BASELINE`].
    #[inline(always)]
    pub fn detected() -> Self {
        static LEVEL: AtomicU8 = AtomicU8::new(0);
        match LEVEL.load(Ordering::Relaxed) {
            0 => Self::detect(&LEVEL),
            4 => Self(Level::X86_64V3),
            3 => Self(Level::Avx),
            _ => Self::BASELINE,
        }
    }

    /// The first question: out of line, so [`Isa::detected`] inlines to a load and a compare.
    /// Two threads asking at once detect the same answer, so a race only repeats the question.
    #[cold]
    #[inline(never)]
    fn detect(cache: &AtomicU8) -> Self {
        let level = Self::ask();
        cache.store(level as u8, Ordering::Relaxed);
        Self(level)
    }

    /// What the CPU reports.
    fn ask() -> Level {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2")
                && has!("fma")
                && has!("bmi1")
                && has!("bmi2")
                && has!("lzcnt")
                && has!("popcnt")
            {
                return Level::X86_64V3;
            }
            if has!("avx") {
                return Level::Avx;
            }
        }
        Self::BASELINE.0
    }

    /// Every level from the baseline up to [`Isa::detected`], for tests that compare the copies
    /// [`dispatch_to`] runs.
    #[cfg(test)]
    pub fn available() -> Vec<Self> {
        let best = Self::detected();
        [Level::Scalar, Level::Sse2, Level::Avx, Level::X86_64V3]
            .into_iter()
            .filter(|&l| l >= Self::BASELINE.0 && l <= best.0)
            .map(Self)
            .collect()
    }

    /// Whether the CPU has AVX (8-lane float operations).
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
        allow(dead_code, reason = "the x86 SIMD paths are compiled out")
    )]
    #[inline(always)]
    pub fn has_avx(self) -> bool {
        self.0 >= Level::Avx
    }

    /// Whether the CPU is x86-64-v3 (AVX2 and the rest of that level).
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
        allow(dead_code, reason = "the x86 SIMD paths are compiled out")
    )]
    #[inline(always)]
    pub fn has_x86_64_v3(self) -> bool {
        self.0 >= Level::X86_64V3
    }
}

/// Runs `body` compiled for the CPU's best instruction set, with that [`Isa`]: the one place where
/// the engine enters code compiled for more than the baseline. `body` is inlined into a function
/// compiled for x86-64-v3, one compiled for AVX, and the baseline (mark it `#[inline(always)]`, and
/// the closures it passes on), and the `Isa` it is given is a constant in each, so the routines
/// that take it choose their body at compile time. Every copy computes the same answers: the SIMD
/// routines are bit for bit their scalar twins, and Rust never fuses a multiply and an add unless
/// asked to.
#[inline(always)]
pub fn dispatch<R>(body: impl FnOnce(Isa) -> R) -> R {
    dispatch_to(Isa::detected(), body)
}

/// [`dispatch`] to the copy compiled for `isa` (which the CPU has: only detection makes a token
/// above the baseline). The tests run every copy the CPU can run this way.
#[inline(always)]
pub fn dispatch_to<R>(isa: Isa, body: impl FnOnce(Isa) -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        if isa.has_x86_64_v3() {
            // SAFETY: the CPU has every feature `on_x86_64_v3` is compiled for (`isa` says so).
            return unsafe { on_x86_64_v3(isa, body) };
        }
        if isa.has_avx() {
            // SAFETY: the CPU has AVX (`isa` says so).
            return unsafe { on_avx(isa, body) };
        }
    }
    body(isa)
}

/// `body` compiled for x86-64-v3.
///
/// # Safety
/// The CPU must be x86-64-v3.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn on_x86_64_v3<R>(isa: Isa, body: impl FnOnce(Isa) -> R) -> R {
    body(isa)
}

/// `body` compiled for AVX.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx")]
unsafe fn on_avx<R>(isa: Isa, body: impl FnOnce(Isa) -> R) -> R {
    body(isa)
}

/// Asks the CPU to start loading every cache line of `values` (at most [`PREFETCH_MAX`] bytes from
/// the start) into all cache levels; a hint with no effect on results. Used by the BVH traversal
/// for the node it tests next (a whole 8-wide node is four lines, whose last one, the child
/// references, is read only after the box test); the children it defers go through
/// [`prefetch_lines`], a fixed count from an address chosen without a branch.
#[inline(always)]
pub fn prefetch<T>(values: &[T]) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        let start = values.as_ptr().cast::<i8>();
        let bytes = std::mem::size_of_val(values).min(PREFETCH_MAX);
        // Every line from the one holding the first byte to the one holding the last.
        let mut offset = -((start as usize & 63) as isize);
        while offset < bytes as isize {
            // SAFETY: SSE is part of the x86-64 baseline, always available; PREFETCHT0 never
            // faults and reads nothing architecturally, whatever the address (`wrapping_offset`
            // keeps the pointer computation defined).
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_offset(offset));
            }
            offset += 64;
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        let _ = values;
    }
}

/// Asks the CPU to start loading the `LINES` cache lines from the one holding `start` on; a hint
/// with no effect on results, for any address (nothing is read). A fixed count, so no loop branch
/// depends on the data.
#[inline(always)]
pub fn prefetch_lines<const LINES: usize>(start: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    for line in 0..LINES {
        // SAFETY: as in `prefetch`: SSE is always available on x86-64, PREFETCHT0 never faults
        // and reads nothing architecturally, and `wrapping_add` keeps the address defined.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(64 * line).cast::<i8>());
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        let _ = start;
    }
}

/// Most bytes [`prefetch`] asks for: a wide node, or two triangle blocks.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
    allow(dead_code, reason = "prefetching is compiled out")
)]
pub const PREFETCH_MAX: usize = 320;

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[test]
    fn the_cached_answer_is_the_detected_one_every_time() {
        use std::arch::is_x86_feature_detected as has;
        let v3 = has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt");
        for _ in 0..2 {
            let isa = Isa::detected();
            assert_eq!(isa.has_x86_64_v3(), v3);
            assert_eq!(isa.has_avx(), v3 || has!("avx"));
        }
    }

    #[test]
    fn dispatch_hands_the_detected_isa_over() {
        assert_eq!(dispatch(|isa| isa), Isa::detected());
        assert!(!Isa::BASELINE.has_avx());
    }
}
