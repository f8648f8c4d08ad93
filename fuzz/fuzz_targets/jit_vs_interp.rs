//! Fuzz target: the JIT against the interpreter. The fuzzer's bytes drive the JIT differential
//! tests' program generator (`jit/tests/progen`) and input generator (`jit/tests/quadinputs`)
//! through a byte-reading stand-in for their random number generator; both JIT tiers must give
//! the interpreter's every output bit, kill mask and error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu_fuzz::MAX_PROGRAM_INPUT;
use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{ExecError, QuadShader};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;

/// The stand-in for the tests' splitmix generator: the generators' choices are read from the
/// fuzzer's bytes, so a mutation of a byte changes one choice; once the bytes run out, splitmix
/// seeded from them goes on.
mod splitmix {
    /// A source of choices.
    pub struct Rng {
        bytes: Vec<u8>,
        pos: usize,
        state: u64,
    }

    impl Rng {
        /// Choices read from `bytes`.
        pub fn from_bytes(bytes: &[u8]) -> Rng {
            let state = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
            });
            Rng {
                bytes: bytes.to_vec(),
                pos: 0,
                state,
            }
        }

        fn splitmix(&mut self) -> u64 {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn byte(&mut self) -> u8 {
            match self.bytes.get(self.pos) {
                Some(&b) => {
                    self.pos += 1;
                    b
                }
                None => self.splitmix() as u8,
            }
        }

        /// The next 64 bits.
        pub fn next(&mut self) -> u64 {
            (0..8).fold(0, |v, _| (v << 8) | self.byte() as u64)
        }

        /// A number in `0..n`.
        pub fn below(&mut self, n: usize) -> usize {
            if n <= 256 {
                self.byte() as usize % n
            } else {
                (self.next() % n as u64) as usize
            }
        }

        /// True about `percent` times in a hundred.
        pub fn chance(&mut self, percent: u64) -> bool {
            (self.byte() as u64 % 100) < percent
        }

        /// One of `items`.
        pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())]
        }
    }
}

#[allow(dead_code, clippy::all)]
#[path = "../../jit/tests/quadinputs/mod.rs"]
mod quadinputs;

#[allow(dead_code, clippy::all)]
#[path = "../../jit/tests/progen/mod.rs"]
mod progen;

use quadinputs::{random_inputs, run};
use splitmix::Rng;

/// Instruction budget of both executors: small, so inputs that make a loop infinite cost little.
const BUDGET: u64 = 1 << 14;
/// Input sets each program runs on.
const TRIALS: usize = 4;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_PROGRAM_INPUT || data.is_empty() {
        return;
    }
    let kind = data[0];
    let mut rng = Rng::from_bytes(&data[1..]);
    let statements = 4 + (kind as usize >> 3) % 24;
    let (plain, repeats, uniform) = (kind & 1 != 0, kind & 2 != 0, kind & 4 != 0);
    let text = progen::generate(&mut rng, statements, plain, repeats, uniform);
    let program = parse_program(&text).unwrap_or_else(|e| {
        panic!("the generator made a program that does not parse: {e}\n{text}")
    });
    let Ok(interp) = Interpreter::new(&program) else {
        return;
    };
    let interp = interp.with_budget(BUDGET);
    let jit = JitShader::compile(&program)
        .unwrap_or_else(|e| panic!("the JIT rejects a program the interpreter runs: {e}\n{text}"));
    let other = if jit.is_optimized() {
        JitShader::compile_fast_tier(&program)
    } else {
        JitShader::compile_optimized(&program)
    }
    .unwrap_or_else(|e| panic!("the other JIT tier rejects the program: {e}\n{text}"));
    let jits = [jit.with_budget(BUDGET), other.with_budget(BUDGET)];
    let sig = interp.signature();
    for trial in 0..TRIALS {
        let inputs = random_inputs(
            &mut rng,
            sig.num_inputs.max(3),
            sig.num_system_values,
            sig.num_outputs.max(2),
        );
        let (interp_result, interp_outputs) = run(&interp, &inputs);
        for jit in &jits {
            let (jit_result, jit_outputs) = run(jit, &inputs);
            if let Err(ExecError::BudgetExceeded { .. }) = interp_result {
                // The JIT counts loop iterations by a lower bound of the interpreter's count:
                // it may run further, and where it stops is not comparable.
                assert!(
                    matches!(jit_result, Ok(_) | Err(ExecError::BudgetExceeded { .. })),
                    "trial {trial}: interpreter ran out of budget, JIT {jit_result:?}\n{text}"
                );
                continue;
            }
            assert!(
                interp_result == jit_result && interp_outputs == jit_outputs,
                "trial {trial}: interpreter {interp_result:?} vs JIT {jit_result:?}\n\
                 live {:#x}\ninputs {:x?}\nconsts {:x?}\ninterp outputs {:x?}\n\
                 JIT outputs    {:x?}\n{text}",
                inputs.live,
                inputs.inputs,
                inputs.constants,
                interp_outputs,
                jit_outputs
            );
        }
    }
});
