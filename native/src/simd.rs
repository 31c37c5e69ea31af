//! Run-time CPU dispatch: one kernel body compiled for AVX-512, for AVX2 and for the baseline.
//!
//! A wheel is built for the x86-64 baseline (SSE2), where the slot loops of MinHash cannot use
//! the unsigned 32-bit minimum (SSE4.1) nor wide vectors. `multiversion!` wraps a body marked
//! `#[inline(always)]` in copies compiled with wider target features and picks one per call
//! from the CPU (std caches the detection): the same source, so the same bits on every path.
//! Written by hand because it is a dozen lines; the `multiversion` crate does the same with a
//! proc macro and more compile time.

/// `multiversion!(pub fn name(a: A, b: B) -> R = body;)` defines `name`, which calls
/// `body(a, b)` compiled for the best instruction set this CPU has. Call it once per batch,
/// not per element: the detection is an atomic load and a branch.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $body:path;) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,bmi2,popcnt")]
                fn v4($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,bmi2,popcnt")]
                fn v3($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512dq")
                    && std::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU has every feature v4 was compiled for.
                    return unsafe { v4($($arg),*) };
                }
                if std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("bmi2")
                    && std::is_x86_feature_detected!("popcnt")
                {
                    // SAFETY: the CPU has every feature v3 was compiled for.
                    return unsafe { v3($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use multiversion;

/// The widest instruction set of this CPU that the explicit SIMD loops use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The scalar loops (the target's baseline).
    Base,
    /// AVX2 (256-bit vectors).
    Avx2,
    /// AVX-512 F (512-bit vectors), with AVX2.
    Avx512,
}

/// This CPU's [`Level`] (std caches the detection: an atomic load per query).
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx2") {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Base
}
