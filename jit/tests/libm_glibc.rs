//! `interp::libm` (our ports of glibc's `powf`/`logf`/`sinf`/`cosf`) against the system's glibc, bit for bit.
//! Rust's `f32::powf` and `f32::ln` call glibc's `powf` and `logf`; on a machine with FMA (where
//! the goldens were made) glibc picks `__powf_fma`/`__logf_fma`, the variants ported. Elsewhere
//! glibc's SSE2 variants round a few results differently, so the comparison only runs with FMA.
//! The ignored tests cover every float (unary) and 2^28 pairs; run them with
//! `cargo test --release -p softgpu-jit --test libm_glibc -- --ignored`.

use std::hint::black_box;

use softgpu_jit::interp::libm;

fn have_fma() -> bool {
    cfg!(all(
        target_arch = "x86_64",
        target_os = "linux",
        target_env = "gnu"
    )) && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("avx2")
}

fn glibc_pow(x: f32, y: f32) -> f32 {
    // `black_box` keeps LLVM from folding or rewriting the call (e.g. into `exp2f`).
    black_box(x).powf(black_box(y))
}

fn glibc_log(x: f32) -> f32 {
    black_box(x).ln()
}

/// xorshift64*: reproducible random bits without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Mostly ordinary floats, sometimes special ones and integers (odd/even exponents).
    fn float(&mut self) -> f32 {
        let r = self.next();
        match r % 16 {
            0 => f32::from_bits(self.next()),
            1 => [
                0.0,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                1.0,
                -1.0,
                2.0,
            ][(r >> 8) as usize % 8],
            2 => (self.next() % 64) as f32 - 32.0,
            3 => f32::from_bits(self.next() & 0x807f_ffff), // subnormals and zeros
            4 => f32::from_bits(0x7f80_0001 | (self.next() & 0x803f_ffff)), // signalling NaNs
            _ => {
                // |value| in [2^-20, 2^20], either sign.
                let e = 107 + self.next() % 40;
                f32::from_bits((self.next() & 0x807f_ffff) | (e << 23))
            }
        }
    }
}

fn check_pow_pairs(n: u64, seed: u64) {
    let mut rng = Rng(seed);
    let mut bad = Vec::new();
    for _ in 0..n {
        let (x, y) = (rng.float(), rng.float());
        let (want, got) = (glibc_pow(x, y), libm::powf(x, y));
        if want.to_bits() != got.to_bits() && bad.len() < 10 {
            bad.push(format!(
                "powf({:#010x}, {:#010x}): glibc {:#010x}, ours {:#010x}",
                x.to_bits(),
                y.to_bits(),
                want.to_bits(),
                got.to_bits()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every float input of `f` in `[lo, hi)` (bits), split over the cores.
fn check_unary(name: &str, lo: u64, hi: u64, ours: fn(f32) -> f32, theirs: fn(f32) -> f32) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let chunk = (hi - lo).div_ceil(threads);
    let bad: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut bad = Vec::new();
                    let start = lo + t * chunk;
                    for bits in start..(start + chunk).min(hi) {
                        let x = f32::from_bits(bits as u32);
                        let (want, got) = (theirs(x), ours(x));
                        if want.to_bits() != got.to_bits() && bad.len() < 5 {
                            bad.push(format!(
                                "{name}({:#010x}): glibc {:#010x}, ours {:#010x}",
                                bits,
                                want.to_bits(),
                                got.to_bits()
                            ));
                        }
                    }
                    bad
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("checker thread"))
            .collect()
    });
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn powf_random_pairs() {
    if !have_fma() {
        return;
    }
    check_pow_pairs(300_000, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn exp2_and_logf_strided() {
    if !have_fma() {
        return;
    }
    // Every 997th float: all exponents, both signs, the special values nearby.
    let mut bits = 0u64;
    while bits < 1 << 32 {
        let x = f32::from_bits(bits as u32);
        assert_eq!(
            libm::powf(2.0, x).to_bits(),
            glibc_pow(2.0, x).to_bits(),
            "powf(2, {bits:#010x})"
        );
        assert_eq!(
            libm::logf(x).to_bits(),
            glibc_log(x).to_bits(),
            "logf({bits:#010x})"
        );
        bits += 997;
    }
    for x in [
        0.0f32,
        -0.0,
        1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
    ] {
        assert_eq!(libm::logf(x).to_bits(), glibc_log(x).to_bits(), "logf({x})");
    }
}

#[test]
#[ignore = "every float: about a minute per function in release mode"]
fn exp2_every_float() {
    if !have_fma() {
        return;
    }
    check_unary(
        "powf(2, x)",
        0,
        1 << 32,
        |x| libm::powf(2.0, x),
        |x| glibc_pow(2.0, x),
    );
}

#[test]
#[ignore = "every float: about a minute in release mode"]
fn logf_every_float() {
    if !have_fma() {
        return;
    }
    check_unary("logf", 0, 1 << 32, libm::logf, glibc_log);
}

#[test]
#[ignore = "every float: about a minute in release mode"]
fn sinf_every_float() {
    if !have_fma() {
        return;
    }
    check_unary("sinf", 0, 1 << 32, libm::sinf, |x| black_box(x).sin());
}

#[test]
#[ignore = "every float: about a minute in release mode"]
fn cosf_every_float() {
    if !have_fma() {
        return;
    }
    check_unary("cosf", 0, 1 << 32, libm::cosf, |x| black_box(x).cos());
}

#[test]
#[ignore = "2^28 random pairs: about a minute in release mode"]
fn powf_many_pairs() {
    if !have_fma() {
        return;
    }
    std::thread::scope(|s| {
        for t in 0..2u64 {
            s.spawn(move || check_pow_pairs(1 << 27, 0x1234_5678 + t));
        }
    });
}
