//! The general texture path (gallivm's mipmapped `lp_bld_sample_soa` paths): softpipe's level
//! of detail, level choice and blend per lane (`mip_filter_{none,nearest,linear}` and
//! `mip_filter_linear_2d_linear_repeat_POT`), per-lane filters, and per-axis wraps including
//! REPEAT on any size and MIRRORED_REPEAT. Compiled out of line, once per process and opcode
//! of [`MIP_OPS`] ([`compile_mip_fns`], on `texpaths`' thread), and called by inline sites
//! whose descriptor selects it; quads it cannot take bit for bit call the sampler.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, I32, I32X4};
use cranelift_codegen::ir::{
    AbiParam, Block, Endianness, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Type,
    UserFuncName, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::arith::{EXP, MANT, ONE, SIGN};
use super::sample::FastSite;
use super::{unsupported, Emitter};
use crate::codegen::abi::CtxOffsets;
use crate::codegen::shims::Shims;
use crate::exec::ExecError;
use crate::interp::decode::Decoded;
use crate::ir::Opcode;

/// The sampling opcodes of inline texture sites, in the order of [`Shims::mip`].
pub(crate) const MIP_OPS: [Opcode; 5] = [
    Opcode::TEX,
    Opcode::TXB,
    Opcode::TXL,
    Opcode::TEX_LZ,
    Opcode::TXD,
];

/// Compiles the general inline texture path ([`Emitter::tex_mip`]) for each of `ops` (of
/// [`MIP_OPS`]) as functions `(ctx, pc, io, fast)` of `shims`' calling convention: `io`
/// holds src0 and (TXD) the gradients as `tex_sample` takes them, `fast` the site's `FastTex`;
/// the texels are returned in `io[0]`. Kernels call them instead of carrying the ~500
/// Cranelift instructions at every site (compile time), and they run in the kernel's DAZ
/// environment like inline code.
pub(crate) fn compile_mip_fns(
    module: &mut JITModule,
    offsets: CtxOffsets,
    shims: Shims,
    ops: &[Opcode],
) -> Result<Vec<FuncId>, ExecError> {
    let cl = |e: &dyn std::fmt::Display| unsupported(0, format!("cranelift: {e}"));
    let ptr = module.target_config().pointer_type();
    let call_conv = shims.call_conv(module);
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let d = Decoded {
        insts: Vec::new(),
        indirects: Vec::new(),
        textures: Vec::new(),
        memory: Vec::new(),
        cases: Vec::new(),
        imms: Vec::new(),
        num_locals: 0,
        structure: crate::ir::structure::Structure::of(&[]).expect("no instructions nest"),
    };
    let mut ids = Vec::new();
    for &op in ops {
        let mut sig = module.make_signature();
        for ty in [ptr, I32, ptr, ptr] {
            sig.params.push(AbiParam::new(ty));
        }
        sig.call_conv = call_conv;
        let func_id = module
            .declare_anonymous_function(&sig)
            .map_err(|e| cl(&e))?;
        module.clear_context(&mut ctx);
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, func_id.as_u32());
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let mut tex = module.make_signature();
            for ty in [ptr, I32, ptr, ptr] {
                tex.params.push(AbiParam::new(ty));
            }
            tex.call_conv = call_conv;
            let tex_sig = b.import_signature(tex);
            // 64 bytes: `bilerp_lanes` pins its four lane results there.
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 4));
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let [ctx_p, pc, io, fast] = [0, 1, 2, 3].map(|i| b.block_params(entry)[i]);
            let mf = MemFlagsData::new().with_notrap();
            let body = b.create_block();
            let entry_end = b.ins().jump(body, &[]);
            let dummy = ctx_p;
            let mut e = Emitter {
                b,
                d: &d,
                ptr,
                mf,
                le: MemFlagsData::new().with_endianness(Endianness::Little),
                ctx: ctx_p,
                regs: dummy,
                inp: dummy,
                sv: dummy,
                out: dummy,
                live: dummy,
                budget: dummy,
                const_addr: HashMap::default(),
                const_vals: HashMap::default(),
                masks: [Variable::from_u32(0); 5],
                exec: Variable::from_u32(0),
                kill: Variable::from_u32(0),
                counter: Variable::from_u32(0),
                exit: Block::from_u32(0),
                step_sig: tex_sig,
                lanes_sig: tex_sig,
                tex_sig,
                slot,
                shims,
                offsets,
                emitted: 0,
                ret_in_main: false,
                uniform: Vec::new(),
                unmasked: Vec::new(),
                consts: HashMap::default(),
                const_bits: HashMap::default(),
                entry,
                entry_end: Some(entry_end),
                cast_entry: HashMap::default(),
                var_types: Vec::new(),
                zero_addr: dummy,
                cb: dummy,
                indirect_cache: HashMap::default(),
                flushed_locals: Vec::new(),
                lazy: Vec::new(),
                reg_vars: Vec::new(),
                fast_vals: HashMap::default(),
                cast_of: HashMap::default(),
                cast_here: HashMap::default(),
                konst_here: HashMap::default(),
                cmp_here: HashMap::default(),
                cast_block: None,
                neg_zero: dummy,
                vector_libm: false,
                lp_math: false,
                optimize: true,
                op_stats: None,
                tex_io: Some((io, pc)),
                general_ops: [false; 5],
                answered: None,
            };
            e.enter(body);
            let src: [Value; 4] =
                std::array::from_fn(|c| e.b.ins().load(I32X4, mf, io, c as i32 * 16));
            let mut grads = Vec::new();
            if op == Opcode::TXD {
                for k in 0..2 {
                    grads.push(
                        (0..2)
                            .map(|c| e.b.ins().load(I32X4, mf, io, 64 + k * 64 + c * 16))
                            .collect(),
                    );
                }
            }
            let r = e.tex_mip(fast, 0, op, src, &grads);
            for (c, v) in r.iter().enumerate() {
                e.b.ins().store(mf, *v, io, c as i32 * 16);
            }
            e.b.ins().return_(&[]);
            e.b.seal_all_blocks();
            e.b.finalize(module.target_config());
        }
        module
            .define_function(func_id, &mut ctx)
            .map_err(|e| cl(&format!("{e:?}")))?;
        module.clear_context(&mut ctx);
        ids.push(func_id);
    }
    module.finalize_definitions().map_err(|e| cl(&e))?;
    Ok(ids)
}

impl Emitter<'_, '_> {
    /// softpipe's `compute_lambda_2d` from the s and t derivatives along x and y, with
    /// `util_fast_log2` (exponent plus the sampler's 257-entry table, one load per lane).
    fn lambda(&mut self, d: [Value; 4], fw: Value, fh: Value, log2: Value) -> Value {
        let abs = self.splat(!SIGN);
        let [sx, sy, tx, ty] = d.map(|v| {
            let v = self.i(v);
            self.b.ins().band(v, abs)
        });
        let ms = self.gt_select(sx, sy);
        let mt = self.gt_select(tx, ty);
        let (ms, mt) = (self.f(ms), self.f(mt));
        let maxx = self.b.ins().fmul(ms, fw);
        let maxy = self.b.ins().fmul(mt, fh);
        let rho = self.gt_select(maxx, maxy);
        let exp = self.splat(EXP);
        let mant = self.splat(MANT);
        let e = self.b.ins().band(rho, exp);
        let e = self.b.ins().ushr_imm_u(e, 23);
        let bias = self.splat(127);
        let e = self.b.ins().isub(e, bias);
        let epart = self.b.ins().fcvt_from_sint(F32X4, e);
        let m = self.b.ins().band(rho, mant);
        let round = self.splat(1 << 14);
        let m = self.b.ins().iadd(m, round);
        let idx = self.b.ins().ushr_imm_u(m, 15);
        let mut table = self.splat(0);
        for l in 0..4u8 {
            let o = self.b.ins().extractlane(idx, l);
            let o = self.b.ins().uextend(self.ptr, o);
            let o = self.b.ins().ishl_imm_u(o, 2);
            let a = self.b.ins().iadd(log2, o);
            let x = self.b.ins().load(I32, self.mf, a, 0);
            table = self.b.ins().insertlane(table, x, l);
        }
        let table = self.f(table);
        self.b.ins().fadd(epart, table)
    }

    /// Inline sampling of mipmapped (or min/mag-switching, or per-axis wrapped) textures: the
    /// level of detail, level choice and blend of softpipe's `mip_filter_{none,nearest,linear}`
    /// and `mip_filter_linear_2d_linear_repeat_POT` per lane, each level filtered as `tex_inline`
    /// does with per-lane level sizes and filters. Falls back to [`Self::tex_call`] for quads
    /// with denormal coordinates, derivatives, gradients, bias or lod (the kernel's DAZ would
    /// read them as zero), NaN border coordinates and scaled coordinates beyond 2^22.
    fn tex_mip(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
    ) -> [Value; 4] {
        use crate::codegen::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf;
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldp = |b: &mut FunctionBuilder, ptr: Type, off: usize| {
            b.ins().load(ptr, mf, base, off as i32)
        };
        let ptr = self.ptr;
        let data = ldp(&mut self.b, ptr, offset_of!(FastTex, data));
        let levels = ldp(&mut self.b, ptr, offset_of!(FastTex, levels));
        let zero_texel = ld32(&mut self.b, offset_of!(FastTex, zero));
        let zero_texel = self.b.ins().splat(I32X4, zero_texel);
        let [kind, mag_lin, min_lin, clamp_s, border_s, clamp_t, border_t, last] = self
            .splat_fields(
                base,
                I32,
                [
                    offset_of!(FastTex, mip_kind),
                    offset_of!(FastTex, mag_linear),
                    offset_of!(FastTex, min_linear),
                    offset_of!(FastTex, clamp_s),
                    offset_of!(FastTex, border_s),
                    offset_of!(FastTex, clamp_t),
                    offset_of!(FastTex, border_t),
                    offset_of!(FastTex, last),
                ],
            );
        let [npot_s, mirror_s, npot_t, mirror_t] = self.splat_fields(
            base,
            I32,
            [
                offset_of!(FastTex, npot_s),
                offset_of!(FastTex, mirror_s),
                offset_of!(FastTex, npot_t),
                offset_of!(FastTex, mirror_t),
            ],
        );

        // ---- level of detail (softpipe's compute_lambda_lod_unclamped, then CLAMP) ----
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let (lod, mut bad) = self.mip_lod(base, op, s, t, src[3], grads);
        // The texel offset the site passes after the coordinates (TXD's gradients are there:
        // its sites pass none). REPEAT on other sizes or on one axis only and MIRRORED_REPEAT
        // add it unlike `tex_axis_u`: such lookups go to the sampler.
        let offsets = match (op, self.tex_io) {
            (Opcode::TXD, _) | (_, None) => None,
            (_, Some((io, _))) => {
                let o = self.b.ins().load(I32X4, self.mf, io, 64);
                let [ox, oy] = [[0u8; 4], [1; 4]].map(|l| self.lanes(o, l));
                let either = self.b.ins().bor(ox, oy);
                let zero = self.splat(0);
                let any = self.b.ins().icmp(IntCC::NotEqual, either, zero);
                // softpipe adds an offset in float only through the clamps and its
                // `img_filter_2d_*_repeat_POT` (both axes REPEAT, power-of-two sizes); REPEAT
                // on one axis only takes its generic filter, which adds it after the floor.
                let [rep_s, rep_t] = [(clamp_s, mirror_s), (clamp_t, mirror_t)].map(|(c, m)| {
                    let other = self.b.ins().bor(c, m);
                    self.b.ins().bnot(other)
                });
                let mixed = self.b.ins().bxor(rep_s, rep_t);
                let odd = [npot_s, mirror_s, npot_t, mirror_t, mixed]
                    .into_iter()
                    .reduce(|a, b| self.b.ins().bor(a, b))
                    .expect("five masks");
                let odd = self.b.ins().band(any, odd);
                bad = self.b.ins().bor(bad, odd);
                let [os, ot] = [ox, oy].map(|v| self.b.ins().fcvt_from_sint(F32X4, v));
                Some((os, ot))
            }
        };

        // ---- levels and blend per lane (softpipe's mip filters) ----
        let zero_f = self.splatf(0);
        let le0 = self.b.ins().fcmp(FloatCC::LessThanOrEqual, lod, zero_f);
        let lin = self.b.ins().bitselect(le0, mag_lin, min_lin);
        // Within [-64, 64] the conversions below cannot overflow; levels are at most 31.
        let lim = self.splatf(64f32.to_bits());
        let nlim = self.splatf((-64f32).to_bits());
        let lodc = self.mesa_clamp(lod, nlim, lim);
        let tr = self.b.ins().x86_cvtt2dq(I32X4, lodc);
        let (frac, _) = self.frac_floor(lodc);
        let zero = self.splat(0);
        let ones = self.splat(!0);
        let le0 = self.i(le0);
        // Nearest: (int)(lod + 0.5) capped at the last level; level 0 when magnifying.
        let half = self.splatf(0x3f00_0000);
        let nr = self.b.ins().fadd(lodc, half);
        let nr = self.b.ins().x86_cvtt2dq(I32X4, nr);
        let nr = self.b.ins().smin(nr, last);
        let nr = self.b.ins().smax(nr, zero);
        let n_a = self.b.ins().bitselect(le0, zero, nr);
        // Linear: level 0 when magnifying, the last level from (int)lod >= last, else a blend.
        let top = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, tr, last);
        let g_a = self.b.ins().bitselect(top, last, tr);
        let g_a = self.b.ins().bitselect(le0, zero, g_a);
        let g_blend = self.b.ins().bor(top, le0);
        let g_blend = self.b.ins().bxor(g_blend, ones);
        // The POT repeat shortcut: `(unsigned)level0 >= last` picks level 0 or the last one.
        let q_top = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, tr, last);
        let q_neg = self.b.ins().icmp(IntCC::SignedLessThan, tr, zero);
        let q_end = self.b.ins().bitselect(q_neg, zero, last);
        let q_a = self.b.ins().bitselect(q_top, q_end, tr);
        let q_blend = self.b.ins().bxor(q_top, ones);
        let kinds: [Value; 4] = std::array::from_fn(|k| {
            if k == 0 {
                return zero;
            }
            let kv = self.splat(k as u32);
            self.b.ins().icmp(IntCC::Equal, kind, kv)
        });
        let mut level_a = self.b.ins().band(kinds[1], n_a);
        let ga = self.b.ins().band(kinds[2], g_a);
        level_a = self.b.ins().bor(level_a, ga);
        let qa = self.b.ins().band(kinds[3], q_a);
        level_a = self.b.ins().bor(level_a, qa);
        let gb = self.b.ins().band(kinds[2], g_blend);
        let qb = self.b.ins().band(kinds[3], q_blend);
        let blend = self.b.ins().bor(gb, qb);
        // Clamped for the level-table loads (the selection already keeps them in range).
        let level_a = self.b.ins().smax(level_a, zero);
        let level_a = self.b.ins().smin(level_a, last);
        let one = self.splat(1);
        let next = self.b.ins().iadd(level_a, one);
        let next = self.b.ins().smin(next, last);
        let level_b = self.b.ins().bitselect(blend, next, level_a);

        // ---- per-level sizes and scaled coordinates ----
        let half_i = self.splat(0x3f00_0000);
        let off = self.b.ins().band(lin, half_i);
        let lo_lin = self.splat((-1f32).to_bits());
        let lo_near = self.splat((-0.5f32).to_bits());
        let lo_border = self.b.ins().bitselect(lin, lo_lin, lo_near);
        let lo_s = self.b.ins().band(border_s, lo_border);
        let lo_t = self.b.ins().band(border_t, lo_border);
        let hi_s = self.b.ins().band(border_s, half_i);
        let hi_t = self.b.ins().band(border_t, half_i);
        // One level's texel addressing, and its lanes' in-range mask.
        let addressing = |e: &mut Self, level: Value| {
            let [offset, width, height, _] = e.gather_rows(levels, level);
            let fw = e.b.ins().fcvt_from_sint(F32X4, width);
            let fh = e.b.ins().fcvt_from_sint(F32X4, height);
            let wmax = e.b.ins().isub(width, one);
            let hmax = e.b.ins().isub(height, one);
            let (hs, ht) = (e.f(hi_s), e.f(hi_t));
            let hi_w = e.b.ins().fadd(fw, hs);
            let hi_h = e.b.ins().fadd(fh, ht);
            let axis = |clamp: Value, border: Value, lo: Value| FastSite {
                ok: zero,
                data,
                linear_flag: zero,
                linear: lin,
                clamp,
                border,
                zero: zero_texel,
                width,
                wmax,
                hmax,
                fwidth: fw,
                fheight: fh,
                off,
                lo,
                hi_w,
                hi_h,
            };
            let (lo_sf, lo_tf) = (e.f(lo_s), e.f(lo_t));
            let site_s = axis(clamp_s, border_s, lo_sf);
            let site_t = axis(clamp_t, border_t, lo_tf);
            let (us, oks) = e.tex_axis_u(s, fw, hi_w, site_s, offsets.map(|o| o.0));
            let (ut, okt) = e.tex_axis_u(t, fh, hi_h, site_t, offsets.map(|o| o.1));
            let (xi, oks) = e.wrap_axis(s, us, oks, width, fw, site_s, npot_s, mirror_s);
            let (yi, okt) = e.wrap_axis(t, ut, okt, height, fh, site_t, npot_t, mirror_t);
            let ok = e.b.ins().band(oks, okt);
            ((xi, yi, offset, width, site_s), ok)
        };
        let good = self.b.ins().bxor(bad, ones);
        let (level_a_rows, ok_a) = addressing(self, level_a);
        let good_a = self.b.ins().band(good, ok_a);
        let join = self.texel_join();
        let slow = self.b.create_block();
        // Level B is addressed only when a lane blends two levels (when none does, it is level
        // A in every lane, whose range was checked): magnified quads address one level.
        let single = self.b.create_block();
        let blending = self.b.create_block();
        let any_blend = self.b.ins().vany_true(blend);
        self.b.ins().brif(any_blend, blending, &[], single, &[]);

        self.enter(single);
        let fast_single = self.b.create_block();
        let all = self.b.ins().vall_true(good_a);
        self.b.ins().brif(all, fast_single, &[], slow, &[]);
        self.enter(fast_single);
        let a = self.tex_level(level_a_rows, lin);
        self.jump_texels(join, a);

        self.enter(blending);
        let (level_b_rows, ok_b) = addressing(self, level_b);
        let good_ab = self.b.ins().band(good_a, ok_b);
        let fast_two = self.b.create_block();
        let all = self.b.ins().vall_true(good_ab);
        self.b.ins().brif(all, fast_two, &[], slow, &[]);
        self.enter(fast_two);
        let a = self.tex_level(level_a_rows, lin);
        let bv = self.tex_level(level_b_rows, lin);
        let w = frac;
        let mut out = a;
        for (c, o) in out.iter_mut().enumerate() {
            // softpipe's lerp(blend, a, b) where the lane blends, else level A's texel.
            let r = self.lerp(w, a[c], bv[c]);
            *o = self.b.ins().bitselect(blend, r, a[c]);
        }
        self.jump_texels(join, out);

        self.enter(slow);
        let r = self.tex_call(pc, src, grads, I32X4, None);
        self.jump_texels(join, r);
        self.texels_at(join)
    }

    /// The `FastTex` fields at `offsets` from `base`, each loaded as `ty` (I32 or F32) and
    /// splatted to a vector of four.
    fn splat_fields<const N: usize>(
        &mut self,
        base: Value,
        ty: Type,
        offsets: [usize; N],
    ) -> [Value; N] {
        let vector = if ty == F32 { F32X4 } else { I32X4 };
        offsets.map(|o| {
            let x = self.b.ins().load(ty, self.mf, base, o as i32);
            self.b.ins().splat(vector, x)
        })
    }

    /// The level of detail of a lookup by mipmapped site `base` (its `FastTex`) per lane, as
    /// softpipe's `compute_lambda_lod_unclamped` and CLAMP compute it from the quad's
    /// derivatives of `s`, `t` (TXD: its gradients), the bias or level in `modifier` and the
    /// sampler's bias and limits; with the lanes whose inputs the kernel's DAZ would read
    /// differently (denormal coordinates, derivatives, bias, level or level of detail), which
    /// the sampler must answer.
    pub(super) fn mip_lod(
        &mut self,
        base: Value,
        op: Opcode,
        s: Value,
        t: Value,
        modifier: Value,
        grads: &[Vec<Value>],
    ) -> (Value, Value) {
        use crate::codegen::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf;
        let log2 = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, log2) as i32);
        let [fw0, fh0, lod_bias, min_lod, max_lod] = self.splat_fields(
            base,
            F32,
            [
                offset_of!(FastTex, fwidth),
                offset_of!(FastTex, fheight),
                offset_of!(FastTex, lod_bias),
                offset_of!(FastTex, min_lod),
                offset_of!(FastTex, max_lod),
            ],
        );
        let mut bad = self.denormal_mask(s);
        let dt = self.denormal_mask(t);
        bad = self.b.ins().bor(bad, dt);
        let derivs = match op {
            Opcode::TXD => {
                let z = self.splat(0);
                let g = |k: usize, c: usize| grads.get(k).and_then(|g| g.get(c)).copied();
                Some([
                    g(0, 0).unwrap_or(z),
                    g(1, 0).unwrap_or(z),
                    g(0, 1).unwrap_or(z),
                    g(1, 1).unwrap_or(z),
                ])
            }
            Opcode::TXL | Opcode::TEX_LZ => None,
            _ => {
                // The quad's corners: x = BR - BL, y = TL - BL (one value for all lanes).
                let mut d = [s; 4];
                for (k, v) in [s, t].into_iter().enumerate() {
                    let br = self.lanes(v, [3, 3, 3, 3]);
                    let bl = self.lanes(v, [2, 2, 2, 2]);
                    let tl = self.lanes(v, [0, 0, 0, 0]);
                    let (br, bl, tl) = (self.f(br), self.f(bl), self.f(tl));
                    d[2 * k] = self.b.ins().fsub(br, bl);
                    d[2 * k + 1] = self.b.ins().fsub(tl, bl);
                }
                Some(d)
            }
        };
        let lambda = match derivs {
            Some(d) => {
                for v in d {
                    let m = self.denormal_mask(v);
                    bad = self.b.ins().bor(bad, m);
                }
                Some(self.lambda(d, fw0, fh0, log2))
            }
            None => None,
        };
        let modifier = self.f(modifier);
        let lod = match (op, lambda) {
            (Opcode::TXD, Some(l)) => l,
            (Opcode::TXB, Some(l)) => {
                let m = self.denormal_mask(modifier);
                bad = self.b.ins().bor(bad, m);
                let l = self.b.ins().fadd(l, lod_bias);
                self.b.ins().fadd(l, modifier)
            }
            (_, Some(l)) => self.b.ins().fadd(l, lod_bias),
            (Opcode::TXL, None) => {
                let m = self.denormal_mask(modifier);
                bad = self.b.ins().bor(bad, m);
                self.b.ins().fadd(modifier, lod_bias)
            }
            (_, None) => lod_bias,
        };
        // The clamp's comparisons would read a denormal lod as zero.
        let m = self.denormal_mask(lod);
        bad = self.b.ins().bor(bad, m);
        (self.mesa_clamp(lod, min_lod, max_lod), bad)
    }

    /// Texel indices, weight and inside masks of one axis of [`Self::tex_mip`] (as
    /// `tex_axis_idx` returns them) and its in-range mask: `tex_axis_idx` for REPEAT on
    /// power-of-two sizes and the clamps; softpipe's `repeat` for REPEAT on other sizes in
    /// `npot` lanes (`(coord + size * 1024) % size` in unsigned arithmetic: coordinates below
    /// `-1024 * size` texels, where that wraps around 2^32, go to the sampler); its mirrored
    /// `wrap_{nearest,linear}_mirror_repeat` in `mirror` lanes (for |coord| < 2^22).
    #[allow(clippy::too_many_arguments)]
    fn wrap_axis(
        &mut self,
        coord: Value,
        u: Value,
        ok: Value,
        size: Value,
        fsize: Value,
        site: FastSite,
        npot: Value,
        mirror: Value,
    ) -> ([Value; 5], Value) {
        let one = self.splat(1);
        let max = self.b.ins().isub(size, one);
        let [i0, i1, w, in0, in1] = self.tex_axis_idx(u, max, site);
        // The other wraps only where a lane has one (every lane or none: wraps are per site).
        let special = self.b.ins().bor(npot, mirror);
        let any = self.b.ins().vany_true(special);
        let extra = self.b.create_block();
        let join = self.b.create_block();
        for _ in 0..6 {
            self.b.append_block_param(join, I32X4);
        }
        let common: Vec<_> = [i0, i1, w, in0, in1, ok]
            .iter()
            .map(|&v| self.i(v).into())
            .collect();
        self.b.ins().brif(any, extra, &[], join, &common);
        self.enter(extra);
        let one = self.splat(1);
        let zero = self.splat(0);
        // REPEAT, any size: floor(u) mod size through a float quotient (|u| < 2^22, so the
        // quotient is at most one too large) and one correction.
        let uf = self.f(u);
        let fl = self.ifloor(uf);
        let flf = self.b.ins().fcvt_from_sint(F32X4, fl);
        let q = self.b.ins().fdiv(flf, fsize);
        let q = self.ifloor(q);
        let qs = self.b.ins().imul(q, size);
        let r = self.b.ins().isub(fl, qs);
        let neg = self.b.ins().icmp(IntCC::SignedLessThan, r, zero);
        let add = self.b.ins().band(neg, size);
        let r = self.b.ins().iadd(r, add);
        let big = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, r, size);
        let sub = self.b.ins().band(big, size);
        let n0 = self.b.ins().isub(r, sub);
        let n1 = self.b.ins().iadd(n0, one);
        let wraps = self.b.ins().icmp(IntCC::Equal, n1, size);
        let n1 = self.b.ins().bitselect(wraps, zero, n1);
        let k = self.splat((-1024i32) as u32);
        let lim = self.b.ins().imul(size, k);
        let far = self.b.ins().icmp(IntCC::SignedLessThan, fl, lim);
        let far = self.b.ins().band(far, npot);
        let ok = self.b.ins().band_not(ok, far);
        // MIRRORED_REPEAT from the coordinate itself.
        let (fr, flr) = self.frac_floor(coord);
        let odd = self.b.ins().band(flr, one);
        let odd = self.b.ins().icmp(IntCC::NotEqual, odd, zero);
        let onef = self.splatf(ONE);
        let half = self.splatf(0x3f00_0000);
        let inv = self.b.ins().fsub(onef, fr);
        // Linear: the scaled position, mirrored on odd repeats.
        let a = self.b.ins().fmul(fr, fsize);
        let a = self.b.ins().fsub(a, half);
        let bm = self.b.ins().fmul(inv, fsize);
        let bm = self.b.ins().fadd(bm, half);
        let (ai, bi) = (self.i(a), self.i(bm));
        let um = self.b.ins().bitselect(odd, bi, ai);
        let umf = self.f(um);
        let (wa, m0) = self.frac_floor(umf);
        let onem = self.b.ins().fsub(onef, umf);
        let (wb, _) = self.frac_floor(onem);
        let (wa, wb) = (self.i(wa), self.i(wb));
        let mw = self.b.ins().bitselect(odd, wb, wa);
        let mw = self.b.ins().band(mw, site.linear);
        let m0p = self.b.ins().iadd(m0, one);
        let m0m = self.b.ins().isub(m0, one);
        let m1 = self.b.ins().bitselect(odd, m0m, m0p);
        let m0n = self.b.ins().icmp(IntCC::SignedLessThan, m0, zero);
        let m0a = self.b.ins().band(m0n, one);
        let m0 = self.b.ins().iadd(m0, m0a);
        let m0 = self.b.ins().smin(m0, max);
        let m1 = self.b.ins().smin(m1, max);
        let m1n = self.b.ins().icmp(IntCC::SignedLessThan, m1, zero);
        let m1a = self.b.ins().band(m1n, one);
        let m1 = self.b.ins().iadd(m1, m1a);
        // Nearest: u (mirrored on odd repeats) against 1/(2 size) and 1 - that.
        let two = self.splatf(2f32.to_bits());
        let twice = self.b.ins().fmul(two, fsize);
        let lo = self.b.ins().fdiv(onef, twice);
        let hi = self.b.ins().fsub(onef, lo);
        let (fri, invi) = (self.i(fr), self.i(inv));
        let un = self.b.ins().bitselect(odd, invi, fri);
        let un = self.f(un);
        let scaled = self.b.ins().fmul(un, fsize);
        let nf = self.ifloor(scaled);
        let below = self.b.ins().fcmp(FloatCC::LessThan, un, lo);
        let above = self.b.ins().fcmp(FloatCC::GreaterThan, un, hi);
        let nf = self.b.ins().bitselect(above, max, nf);
        let nf = self.b.ins().bitselect(below, zero, nf);
        let mi0 = self.b.ins().bitselect(site.linear, m0, nf);
        let cf = self.f(coord);
        let abs = self.splat(!SIGN);
        let ac = self.i(cf);
        let ac = self.b.ins().band(ac, abs);
        let ac = self.f(ac);
        let lim22 = self.splatf(0x4a80_0000);
        let mok = self.b.ins().fcmp(FloatCC::LessThan, ac, lim22);
        let ok = self.b.ins().bitselect(mirror, mok, ok);
        // Per lane: mirrored, repeated (any size) or the common result; indices kept inside
        // the level whatever the lane computed (only all-good quads load).
        let pick = |b: &mut FunctionBuilder, m: Value, n: Value, c: Value| {
            let v = b.ins().bitselect(npot, n, c);
            b.ins().bitselect(mirror, m, v)
        };
        let i0 = pick(&mut self.b, mi0, n0, i0);
        let i1 = pick(&mut self.b, m1, n1, i1);
        let w = {
            let v = self.b.ins().bitselect(mirror, mw, w);
            self.i(v)
        };
        let in0 = self.b.ins().bor(in0, special);
        let in1 = self.b.ins().bor(in1, special);
        let [i0, i1] = [i0, i1].map(|i| {
            let i = self.b.ins().smax(i, zero);
            self.b.ins().smin(i, max)
        });
        let args: Vec<_> = [i0, i1, w, in0, in1, ok]
            .iter()
            .map(|&v| self.i(v).into())
            .collect();
        self.b.ins().jump(join, &args);
        self.enter(join);
        let p = self.b.block_params(join);
        ([p[0], p[1], p[2], p[3], p[4]], p[5])
    }

    /// One level of [`Self::tex_mip`]: the four corners (per-lane level offset and size), the
    /// bilinear lerp in linear lanes and the first corner itself in nearest ones
    /// ([`Self::bilerp_lanes`]).
    fn tex_level(
        &mut self,
        (xi, yi, offset, width, site_s): ([Value; 5], [Value; 5], Value, Value, FastSite),
        lin: Value,
    ) -> [Value; 4] {
        let [x0, x1, xw, xin0, xin1] = xi;
        let [y0, y1, yw, yin0, yin1] = yi;
        let r0 = self.b.ins().imul(y0, width);
        let row0 = self.b.ins().iadd(offset, r0);
        let r1 = self.b.ins().imul(y1, width);
        let row1 = self.b.ins().iadd(offset, r1);
        let corners = [
            self.texel_index(site_s, row0, x0, yin0, xin0),
            self.texel_index(site_s, row0, x1, yin0, xin1),
            self.texel_index(site_s, row1, x0, yin1, xin0),
            self.texel_index(site_s, row1, x1, yin1, xin1),
        ];
        self.bilerp_lanes(site_s.data, corners, xw, yw, Some(lin))
    }
}
