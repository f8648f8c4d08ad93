//! Differential test: the JIT must reproduce the interpreter bit for bit — every output bit, the
//! kill mask and the error — on (a) every TGSI program of the test suite and the reference
//! images, and (b) thousands of randomly generated programs, all on random inputs that include
//! NaN, ±Inf, ±0, denormals and extreme integers.

use softgpu_jit::codegen::{JitShader, MAX_INLINE_TEX};
use softgpu_jit::exec::{
    ExecError, LodMode, QuadBatch, QuadShader, QuadVec4, SampleRequest, ShaderResources,
    TextureAccess,
};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::{Program, TextureTarget};
use softgpu_jit::opt::SpecializeOptions;

mod splitmix;
use splitmix::Rng;

mod quadinputs;
use quadinputs::*;

mod progen;
use progen::generate;

/// Instruction budget of both executors: small, so that random inputs that make a loop infinite
/// cost little time.
const BUDGET: u64 = 1 << 16;

/// Runs `program` through both executors on `trials` random input sets; panics on a difference.
/// Returns false when the interpreter rejects the program.
fn compare(program: &Program, what: &str, rng: &mut Rng, trials: usize) -> bool {
    let Ok(interp) = Interpreter::new(program) else {
        return false;
    };
    let interp = interp.with_budget(BUDGET);
    let jit = match JitShader::compile(program) {
        Ok(j) => j.with_budget(BUDGET),
        Err(e) => panic!("{what}: the JIT rejects a program the interpreter runs: {e}"),
    };
    // A large program first runs a kernel compiled for compile time, then (once recompiled in
    // the background) one compiled for speed: both must match, whichever is running. A small
    // program's kernel is already the one compiled for speed (the same build a background
    // recompilation makes); it gets the compile-time kernel too, which it never runs otherwise.
    let other = if jit.is_optimized() {
        JitShader::compile_fast_tier(program)
    } else {
        JitShader::compile_optimized(program)
    };
    let other = match other {
        Ok(j) => j.with_budget(BUDGET),
        Err(e) => panic!("{what}: the other tier rejects the program: {e}"),
    };
    let jits = [jit, other];
    let sig = interp.signature();
    let mut batch = Vec::new();
    for trial in 0..trials {
        let inp = random_inputs(
            rng,
            sig.num_inputs.max(3),
            sig.num_system_values,
            sig.num_outputs.max(2),
        );
        batch.push(random_inputs(
            rng,
            sig.num_inputs.max(3),
            sig.num_system_values,
            sig.num_outputs.max(2),
        ));
        let (ri, oi) = run(&interp, &inp);
        for jit in &jits {
            let (rj, oj) = run(jit, &inp);
            if let Err(ExecError::BudgetExceeded { .. }) = ri {
                // The JIT counts loop iterations by a lower bound of the interpreter's count (see
                // `codegen`): it may run further, and where it stops is not comparable.
                assert!(
                    matches!(rj, Ok(_) | Err(ExecError::BudgetExceeded { .. })),
                    "{what}, trial {trial}: interpreter ran out of budget, JIT {rj:?}"
                );
                continue;
            }
            if ri != rj || oi != oj {
                let text = softgpu_jit::ir::text::print_program(program);
                panic!(
                    "{what}, trial {trial}: interpreter {ri:?} vs JIT {rj:?}\n\
                 live {:#x}\ninputs {:x?}\nconsts {:x?}\ninterp outputs {:x?}\n\
                 JIT outputs    {:x?}\n{text}",
                    inp.live, inp.inputs, inp.constants, oi, oj
                );
            }
        }
    }
    for jit in &jits {
        compare_batch(program, what, &interp, jit, &batch);
    }
    true
}

/// Runs the quads of `quads` (with the first one's constants) as one batch through the JIT's
/// `shade_quads` and compares each quad with the interpreter on that quad alone. The batch ends
/// before the first quad the interpreter fails on.
fn compare_batch(
    program: &Program,
    what: &str,
    interp: &Interpreter,
    jit: &JitShader,
    quads: &[Inputs],
) {
    let Some(first) = quads.first() else { return };
    let mut expected = Vec::new();
    for q in quads {
        let quad = Inputs {
            inputs: q.inputs.clone(),
            system_values: q.system_values.clone(),
            constants: first.constants.clone(),
            outputs: q.outputs.clone(),
            live: q.live,
        };
        match run(interp, &quad) {
            (Ok(k), out) => expected.push((k, out)),
            _ => break,
        }
    }
    let n = expected.len();
    let (ni, ns, no) = (
        first.inputs.len(),
        first.system_values.len(),
        first.outputs.len(),
    );
    let inputs: Vec<QuadVec4> = quads[..n].iter().flat_map(|q| q.inputs.clone()).collect();
    let svs: Vec<QuadVec4> = quads[..n]
        .iter()
        .flat_map(|q| q.system_values.clone())
        .collect();
    let mut outputs: Vec<QuadVec4> = quads[..n].iter().flat_map(|q| q.outputs.clone()).collect();
    let live: Vec<u8> = quads[..n].iter().map(|q| q.live).collect();
    let mut killed = vec![0xAAu8; n];
    let consts: Vec<&[[u32; 4]]> = first.constants.iter().map(|c| c.as_slice()).collect();
    let res = ShaderResources {
        constants: &consts,
        textures: &HashTextures,
        storage: Default::default(),
    };
    let mut b = QuadBatch {
        count: n,
        inputs: &inputs,
        inputs_stride: ni,
        system_values: &svs,
        system_values_stride: ns,
        outputs: &mut outputs,
        outputs_stride: no,
        live: &live,
        killed: &mut killed,
    };
    if let Err(e) = jit.shade_quads(&res, &mut b) {
        panic!("{what}: batch of {n} failed where every quad alone succeeds: {e}");
    }
    for (q, (k, out)) in expected.iter().enumerate() {
        let got = &outputs[q * no..(q + 1) * no];
        if killed[q] != *k || got != out.as_slice() {
            let text = softgpu_jit::ir::text::print_program(program);
            panic!(
                "{what}: batch quad {q}: kill {:#x} vs {:#x}\ninterp outputs {:x?}\n\
                 JIT outputs    {:x?}\n{text}",
                k, killed[q], out, got
            );
        }
    }
}

#[test]
fn every_suite_program_matches_the_interpreter() {
    let files = tgsi_files();
    assert!(
        files.len() >= 40,
        "expected the TGSI corpus, found {files:?}"
    );
    let mut rng = Rng(1);
    let mut ran = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable corpus file");
        let program = parse_program(&src).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if compare(&program, &f.display().to_string(), &mut rng, 96) {
            ran += 1;
        }
    }
    assert!(ran >= 40, "only {ran} corpus programs ran");
}

// ---- random programs ---------------------------------------------------------------------------

/// A random valid fragment program of about `statements` top-level statements (`plain`: see
/// [`progen::Gen::plain`]).
fn random_program(seed: u64, statements: usize, plain: bool) -> String {
    random_program_with(seed, statements, plain, false)
}

/// [`random_program`], with earlier lines repeated now and then when `repeats` is set.
fn random_program_with(seed: u64, statements: usize, plain: bool, repeats: bool) -> String {
    generate(&mut Rng(seed), statements, plain, repeats, false)
}

fn random_programs(first_seed: u64, count: u64, statements: usize, trials: usize, plain: bool) {
    let mut rng = Rng(first_seed ^ 0xabcdef);
    for seed in first_seed..first_seed + count {
        let text = random_program(seed, statements, plain);
        let program = parse_program(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert!(
            compare(
                &program,
                &format!("random program {seed}"),
                &mut rng,
                trials
            ),
            "seed {seed}: the interpreter rejects a generated program\n{text}"
        );
    }
}

#[test]
fn random_programs_match_the_interpreter() {
    random_programs(1000, 1500, 16, 8, false);
}

/// Without subroutines and SWITCH, arithmetic results whose every reader does float arithmetic
/// stay unflushed in the JIT (`codegen::lazy`): the random values make denormal results often,
/// and moves, selects, integer ops and outputs read them.
#[test]
fn random_programs_without_calls_match_the_interpreter() {
    random_programs(3000, 1500, 16, 8, true);
}

/// Programs past the JIT's optimizer threshold take its fast-compile path first and its
/// optimized recompilation later; `compare` runs both.
#[test]
fn large_random_programs_match_the_interpreter() {
    random_programs(5000, 6, 600, 8, false);
    random_programs(6000, 6, 600, 8, true);
}

/// Programs full of flow the JIT finds uniform (branches and loops it compiles as plain jumps,
/// with unmasked writes under them) and of near misses that it must not; SWITCH included.
#[test]
fn uniform_flow_random_programs_match_the_interpreter() {
    let uniform = uniform_flow_programs(7000, 1500);
    assert!(
        uniform > 1000,
        "only {uniform} of 1,500 programs have uniform flow"
    );
}

/// Runs `count` programs of uniform flow from seed `first`; returns how many the JIT found
/// uniform flow in.
fn uniform_flow_programs(first: u64, count: u64) -> usize {
    let mut rng = Rng(first ^ 0x0f1f);
    let mut uniform = 0;
    for seed in first..first + count {
        let text = generate(&mut Rng(seed), 16, false, false, true);
        let program = parse_program(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        if softgpu_jit::codegen::uniform_construct_count(&program).unwrap_or(0) > 0 {
            uniform += 1;
        }
        assert!(
            compare(
                &program,
                &format!("uniform-flow program {seed}"),
                &mut rng,
                8
            ),
            "seed {seed}: the interpreter rejects a generated program\n{text}"
        );
    }
    uniform
}

#[test]
#[ignore = "nightly-size run: cargo test --release -p softgpu-jit --test jit_diff -- --ignored"]
fn many_random_programs_match_the_interpreter() {
    random_programs(1_000_000, 40_000, 16, 16, false);
    random_programs(1_500_000, 40_000, 16, 16, true);
    random_programs(2_000_000, 200, 400, 16, false);
    uniform_flow_programs(3_000_000, 40_000);
}

/// Texture units whose sampling is level-independent in [`LaneTextures`]: unit 0.
const LANE_LOCAL_UNITS: u64 = 1;

/// [`HashTextures`] made lane-local where the real sampler is: each lane's texel is hashed from
/// that lane's part of the request alone for every fetch (with lane 0's level, as softpipe),
/// gather and explicit-level or gradient sample, and for implicit-level samples on view and
/// sampler unit 0 — what a sampler with one
/// filter and no mipmaps does, and what `specialize` may assume of the units it is told about.
/// Implicit-level samples on other units hash the whole quad, as the level of detail does.
struct LaneTextures;

/// `texel` of a request rebuilt from lane `lane` of `request` alone.
fn lane_texel(request: &SampleRequest, lane: usize, salt: u64) -> QuadVec4 {
    let mut lane_request = *request;
    for c in 0..4 {
        lane_request.coords[c] = [request.coords[c][lane]; 4];
    }
    lane_request.compare = request.compare.map(|v| [v[lane]; 4]);
    lane_request.lod = match request.lod {
        LodMode::Implicit => LodMode::Implicit,
        LodMode::Zero => LodMode::Zero,
        LodMode::Bias(b) => LodMode::Bias([b[lane]; 4]),
        LodMode::Explicit(l) => LodMode::Explicit([l[lane]; 4]),
        LodMode::Gradient { ddx, ddy } => LodMode::Gradient {
            ddx: ddx.map(|d| [d[lane]; 4]),
            ddy: ddy.map(|d| [d[lane]; 4]),
        },
    };
    texel(mix(hash_request(&lane_request), salt))
}

/// Lane `l` of each channel taken from `per_lane(l)`.
fn by_lane(per_lane: impl Fn(usize) -> QuadVec4) -> QuadVec4 {
    let mut out = [[0u32; 4]; 4];
    for lane in 0..4 {
        let t = per_lane(lane);
        for c in 0..4 {
            out[c][lane] = t[c][lane];
        }
    }
    out
}

impl TextureAccess for LaneTextures {
    fn sample(&self, request: &SampleRequest) -> QuadVec4 {
        let implicit = matches!(request.lod, LodMode::Implicit | LodMode::Bias(_));
        if implicit && (request.view != 0 || request.sampler != 0) {
            return HashTextures.sample(request);
        }
        by_lane(|lane| lane_texel(request, lane, 0))
    }
    fn gather(&self, request: &SampleRequest, component: u32) -> QuadVec4 {
        by_lane(|lane| lane_texel(request, lane, component as u64 + 77))
    }
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4 {
        // Lane 0's level for the quad, as softpipe's fetch (and `draw`) does.
        by_lane(|lane| {
            let lane_coords = coords.map(|c| [c[lane]; 4]);
            HashTextures.fetch(view, target, lane_coords, [lod[0]; 4], offset)
        })
    }
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4] {
        HashTextures.size(view, target, lod)
    }
    fn query_lod(&self, request: &SampleRequest) -> [[f32; 4]; 2] {
        HashTextures.query_lod(request)
    }
}

/// `opt::specialize` (if-conversion, value numbering, unrolling, liveness-based removal,
/// compaction) must not change a bit: 1,500 random programs with repeated lines, run by the
/// interpreter before and after on textures that keep its promise for unit 0 (and not for
/// unit 1), and the specialized program through the JIT against the interpreter.
#[test]
fn specialized_random_programs_match_the_originals() {
    let (changed, flattened) = specialized_programs(9000, 1500);
    assert!(changed > 800, "only {changed} of 1,500 programs changed");
    assert!(flattened > 100, "only {flattened} programs lost a branch");
}

#[test]
#[ignore = "nightly-size run: cargo test --release -p softgpu-jit --test jit_diff -- --ignored"]
fn many_specialized_random_programs_match_the_originals() {
    specialized_programs(100_000, 20_000);
}

/// `program` specialized for textures that keep [`LANE_LOCAL_UNITS`]' promise.
fn specialize(program: &Program) -> Program {
    let options = SpecializeOptions {
        lane_local_units: LANE_LOCAL_UNITS,
        ..SpecializeOptions::new(MAX_INLINE_TEX)
    };
    softgpu_jit::opt::specialize(program, &options).program
}

/// Runs `count` random programs from seed `first` through the comparison above; returns how
/// many specialization changed and how many of those lost a branch.
fn specialized_programs(first: u64, count: u64) -> (usize, usize) {
    let mut rng = Rng(0x5bec_1a11 ^ first);
    let mut changed = 0;
    let mut flattened = 0;
    for seed in first..first + count {
        let text = random_program_with(seed, 24, true, true);
        let original = parse_program(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let specialized = specialize(&original);
        if specialized == original {
            continue;
        }
        changed += 1;
        let uifs = |p: &Program| {
            p.instructions
                .iter()
                .filter(|i| i.opcode == softgpu_jit::ir::Opcode::UIF)
                .count()
        };
        if uifs(&specialized) < uifs(&original) {
            flattened += 1;
        }
        let what = format!("specialized random program {seed}");
        assert_rewrite_matches(
            (&original, &text),
            (&specialized, "specialized"),
            &what,
            &mut rng,
            &LaneTextures,
            None,
        );
    }
    (changed, flattened)
}

/// Constants folded into immediates (`opt::fold_known_constants`, what a filter chain does
/// with its shader parameters): each random program gets one set of constant-buffer values, a
/// random part of which is declared known and folded (then unrolled and optimized); with those
/// values in its buffers the original must give the same bits and kill mask as the folded
/// program through the interpreter, and the folded one the same through both JIT tiers.
#[test]
fn folded_random_programs_match_the_originals() {
    let (changed, flattened) = folded_programs(31_000, 1500);
    assert!(changed > 1000, "only {changed} of 1,500 programs changed");
    assert!(flattened > 50, "only {flattened} programs lost a branch");
}

#[test]
#[ignore = "nightly-size run: cargo test --release -p softgpu-jit --test jit_diff -- --ignored"]
fn many_folded_random_programs_match_the_originals() {
    folded_programs(200_000, 20_000);
}

/// Runs `count` random programs from seed `first` through the comparison above; returns how
/// many folding changed and how many of those lost a branch.
fn folded_programs(first: u64, count: u64) -> (usize, usize) {
    let mut rng = Rng(0xf01d_c0de ^ first);
    let mut changed = 0;
    let mut flattened = 0;
    for seed in first..first + count {
        let text = random_program_with(seed, 24, true, true);
        let original = parse_program(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let values = random_inputs(&mut rng, 1, 0, 1).constants;
        let mut known = softgpu_jit::opt::KnownConstants::default();
        for (buffer, vectors) in values.iter().enumerate() {
            for (index, vector) in vectors.iter().enumerate() {
                let components = vector.map(|bits| rng.chance(75).then_some(bits));
                known.insert((buffer as u32, index as u32), components);
            }
        }
        let mut folded = original.clone();
        if softgpu_jit::opt::fold_known_constants(&mut folded, &known, MAX_INLINE_TEX) == 0 {
            continue;
        }
        changed += 1;
        let flow = |p: &Program| {
            p.instructions
                .iter()
                .filter(|i| {
                    use softgpu_jit::ir::Opcode;
                    matches!(i.opcode, Opcode::IF | Opcode::UIF | Opcode::BGNLOOP)
                })
                .count()
        };
        if flow(&folded) < flow(&original) {
            flattened += 1;
        }
        let what = format!("folded random program {seed}");
        assert_rewrite_matches(
            (&original, &text),
            (&folded, "folded"),
            &what,
            &mut rng,
            &HashTextures,
            Some(&values),
        );
    }
    (changed, flattened)
}

/// A program rewritten by an `opt` pass against its original `(program, text)`: the
/// interpreter runs both on 8 random input sets (with `constants` in the buffers when given) and
/// must give the same bits and kill mask, unless either runs out of budget; then the rewrite
/// must give the interpreter's bits through both JIT tiers.
fn assert_rewrite_matches(
    (original, text): (&Program, &str),
    (rewritten, how): (&Program, &str),
    what: &str,
    rng: &mut Rng,
    textures: &dyn TextureAccess,
    constants: Option<&Vec<Vec<[u32; 4]>>>,
) {
    let Ok(before) = Interpreter::new(original) else {
        return;
    };
    let before = before.with_budget(BUDGET);
    let after = Interpreter::new(rewritten)
        .unwrap_or_else(|e| panic!("{what}: the interpreter rejects it: {e}"))
        .with_budget(BUDGET);
    let sig = before.signature();
    for trial in 0..8 {
        let mut inp = random_inputs(
            rng,
            sig.num_inputs.max(3),
            sig.num_system_values,
            sig.num_outputs.max(2),
        );
        if let Some(constants) = constants {
            inp.constants = constants.clone();
        }
        let (rb, ob) = run_with(&before, &inp, textures);
        let (ra, oa) = run_with(&after, &inp, textures);
        let out_of_budget =
            |r: &Result<u8, ExecError>| matches!(r, Err(ExecError::BudgetExceeded { .. }));
        if out_of_budget(&rb) || out_of_budget(&ra) {
            continue;
        }
        if rb != ra || ob != oa {
            panic!(
                "{what}, trial {trial}: original {rb:?} vs {how} {ra:?}\n\
                 live {:#x}\nconstants {:x?}\noriginal outputs {ob:x?}\n{how} outputs {oa:x?}\n\
                 original:\n{text}\n{how}:\n{}",
                inp.live,
                inp.constants,
                softgpu_jit::ir::text::print_program(rewritten)
            );
        }
    }
    assert!(compare(rewritten, what, rng, 4), "{what}: rejected");
}

/// An indirect TEMP access without a declared array may reach any temporary: the optimizer's
/// dead-write removal (and specialization) must treat every TEMP as read, or `TEMP[2]`'s only
/// write below disappears (it did, in `softgpu draw --exec jit` on hand-written TGSI).
#[test]
fn indirect_temps_without_an_array_keep_their_writes() {
    let text = "FRAG\n\
                DCL IN[0], GENERIC[0], PERSPECTIVE\n\
                DCL OUT[0], COLOR\n\
                DCL TEMP[0..3]\n\
                DCL ADDR[0]\n\
                IMM[0] FLT32 {0.25, 0.5, 0.75, 1.0}\n\
                IMM[1] UINT32 {2, 0, 0, 0}\n\
                0: MOV TEMP[2], IMM[0].yzxw\n\
                1: MOV TEMP[1], IN[0]\n\
                2: UARL ADDR[0].x, IMM[1].xxxx\n\
                3: MOV OUT[0], TEMP[ADDR[0].x]\n\
                4: END\n";
    let original = parse_program(text).expect("program");
    let mut optimized = original.clone();
    softgpu_jit::opt::cleanup(&mut optimized);
    let specialized = specialize(&original);
    let reference = Interpreter::new(&original).expect("interpreter");
    let mut rng = Rng(77);
    let inp = random_inputs(&mut rng, 1, 0, 1);
    let (_, expected) = run(&reference, &inp);
    assert_eq!(
        expected[0][0][0],
        0.5f32.to_bits(),
        "the reference reads TEMP[2]"
    );
    for (what, program) in [("optimized", &optimized), ("specialized", &specialized)] {
        let interp = Interpreter::new(program).expect("interpreter");
        assert_eq!(run(&interp, &inp).1, expected, "{what}");
        assert!(compare(program, what, &mut rng, 4), "{what}: rejected");
    }
}

/// `LODQ` writes x and y whatever its mask says: register compaction must not take its mask for
/// a definition of z and w, or a temporary whose z/w `LODQ` leaves alone inherits another's
/// leftovers (found by the nightly-size specialization run).
#[test]
fn compaction_keeps_lodq_z_and_w_unwritten() {
    let text = "FRAG\n\
                DCL IN[0], GENERIC[0], PERSPECTIVE\n\
                DCL OUT[0], COLOR\n\
                DCL SAMP[0]\n\
                DCL TEMP[0..1]\n\
                IMM[0] FLT32 {0.5, 0.25, 2.0, 3.0}\n\
                0: ADD TEMP[0], IN[0], IMM[0]\n\
                1: MOV OUT[0].w, TEMP[0].wwww\n\
                2: LODQ TEMP[1], IN[0], SAMP[0], 2D\n\
                3: MOV OUT[0].xyz, TEMP[1].xyww\n\
                4: END\n";
    let original = parse_program(text).expect("program");
    let mut compacted = original.clone();
    softgpu_jit::opt::compact::compact_temps(&mut compacted);
    let reference = Interpreter::new(&original).expect("interpreter");
    let after = Interpreter::new(&compacted).expect("interpreter");
    let mut rng = Rng(5);
    for _ in 0..8 {
        let mut inp = random_inputs(&mut rng, 1, 0, 1);
        inp.live = 0xF;
        let (_, expected) = run(&reference, &inp);
        assert_eq!(expected[0][2], [0; 4], "TEMP[1].w is never written");
        assert_eq!(run(&after, &inp).1, expected);
    }
}
