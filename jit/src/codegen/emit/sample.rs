//! Texture sampling (gallivm's `lp_bld_sample_soa`): which texture instructions get an inline
//! site in optimized kernels and which are answered once per kernel call (constant lookups),
//! the calls into the sampler (`tex_sample`) or, where a site's descriptor asks for it, into
//! the general path (`texpaths`), and the inline level-0 sampler: one filter and one wrap mode
//! per site, with softpipe's exact arithmetic, falling back to those calls for quads it cannot
//! take bit for bit. Sites compiled for one sampler state are `sample_shaped`'s, the general
//! path's code (mip levels, per-lane filters and wraps) is `sample_mip`'s; texel loads are
//! `format`'s. The descriptors read here are `abi::FastTex`.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, I32, I32X4, I8X16};
use cranelift_codegen::ir::{
    Block, ConstantData, InstBuilder, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::FunctionBuilder;

use super::arith::SIGN;
use super::sample_mip::MIP_OPS;
use super::Emitter;
use crate::codegen::abi::Address;
use crate::interp::decode::{Decoded, Inst};
use crate::ir::{InlineShape, Opcode, OpcodeClass};

/// Most texture instructions of one program sampled inline (each adds ~150 instructions); they
/// share one descriptor per distinct (view, sampler).
pub const MAX_INLINE_TEX: usize = 64;

/// The values of one inline texture site's descriptor, as vectors where lanes use them.
#[derive(Clone, Copy)]
pub(super) struct FastSite {
    pub ok: Value,
    pub data: Value,
    /// `linear` as a scalar (0 or !0), for branching.
    pub linear_flag: Value,
    pub linear: Value,
    pub clamp: Value,
    pub border: Value,
    /// Index of the all-zero texel, which corners outside a border-clamped texture read.
    pub zero: Value,
    pub width: Value,
    pub wmax: Value,
    pub hmax: Value,
    pub fwidth: Value,
    pub fheight: Value,
    pub off: Value,
    pub lo: Value,
    pub hi_w: Value,
    pub hi_h: Value,
}

/// How a texture site's fallback calls the general path (see `tex_call`): the site's
/// descriptor, its opcode, the shape the site was compiled for (if any) and its texel offset.
#[derive(Clone, Copy)]
pub(super) struct GeneralPath {
    pub base: Value,
    pub op: Opcode,
    pub shape: Option<InlineShape>,
    pub offset: [i32; 2],
}

impl GeneralPath {
    /// `None` for TXD with an offset: the general path reads TXD's gradients where other
    /// lookups pass their offset, so such a site calls the sampler.
    pub(super) fn of(
        base: Value,
        op: Opcode,
        shape: Option<InlineShape>,
        offset: [i32; 2],
    ) -> Option<GeneralPath> {
        (op != Opcode::TXD || offset == [0, 0]).then_some(GeneralPath {
            base,
            op,
            shape,
            offset,
        })
    }
}

/// Whether `inst` gets an inline texture site in an optimized kernel (while fewer than
/// [`MAX_INLINE_TEX`] sites exist): a TEX-family 2D lookup with its operands in src0 (not TXP),
/// or a TXD.
pub(super) fn inline_site_candidate(d: &Decoded, inst: &Inst) -> bool {
    matches!(
        inst.op,
        Opcode::TEX | Opcode::TXB | Opcode::TXL | Opcode::TEX_LZ | Opcode::TXD
    ) && crate::codegen::shims::tex_fast_path(d, inst)
        && d.textures.get(inst.aux as usize).is_some_and(|t| {
            // Texel offsets must be known when the site is compiled.
            t.target == crate::ir::TextureTarget::Tex2D
                && crate::codegen::shims::constant_tex_offset(d, t).is_some()
        })
}

/// Whether every texture instruction of `d` gets an inline site in an optimized kernel, so that
/// the kernel calls the Rust sampler only on the rare quads an inline site cannot take.
pub(crate) fn every_texture_site_inline(d: &Decoded) -> bool {
    let mut sites = 0;
    d.insts
        .iter()
        .filter(|inst| {
            inst.op.class() == OpcodeClass::Texture && constant_lookup(d, inst).is_none()
        })
        .all(|inst| {
            sites += 1;
            sites <= MAX_INLINE_TEX && inline_site_candidate(d, inst)
        })
}

/// What a texture instruction asks when all its operands are known before the kernel runs
/// (see [`constant_lookup`]): equal questions get equal answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ConstantLookup {
    op: Opcode,
    view: u32,
    sampler: u32,
    target: crate::ir::TextureTarget,
    offset: [i32; 3],
    /// src0's channels (immediates hold the same bits in every lane).
    src: [u32; 4],
}

/// The question texture instruction `inst` asks when the kernel can answer it once per call,
/// before the quads, instead of per quad: a size query (TXQ, SVIEWINFO) of a level known
/// when compiling, or a TEX-family lookup or texel fetch at coordinates (and level or bias)
/// known when compiling, of units named directly. The bound textures do not change during a call, a
/// lookup has no effect besides its result, and at equal coordinates in every lane the quad's
/// derivatives are zero whether it runs per quad or once. Mega Bezel's passes read the values
/// its first pass caches in a texture at fixed coordinates (up to 13 per pixel), and ask up to
/// 20 texture sizes per pixel.
pub(super) fn constant_lookup(d: &Decoded, inst: &Inst) -> Option<ConstantLookup> {
    let t = d.textures.get(inst.aux as usize)?;
    if t.view.index_reg.is_some() || t.sampler.index_reg.is_some() {
        return None;
    }
    let src = crate::codegen::shims::constant_src(d, &inst.src[0])?;
    match inst.op {
        Opcode::TXQ | Opcode::SVIEWINFO => Some(ConstantLookup {
            op: inst.op,
            view: t.view.index,
            sampler: 0,
            target: t.target,
            offset: [0; 3],
            src: [src[0], 0, 0, 0],
        }),
        Opcode::TEX
        | Opcode::TXP
        | Opcode::TXB
        | Opcode::TXL
        | Opcode::TEX_LZ
        | Opcode::TXF
        | Opcode::TXF_LZ
            if crate::codegen::shims::tex_fast_path(d, inst) =>
        {
            Some(ConstantLookup {
                op: inst.op,
                view: t.view.index,
                sampler: t.sampler.index,
                target: t.target,
                offset: crate::codegen::shims::constant_tex_offset(d, t)?,
                src,
            })
        }
        _ => None,
    }
}

/// The distinct questions of `d`'s [`constant_lookup`]s, each with the first instruction
/// asking it, and which question each such instruction asks.
pub(super) fn constant_lookups(
    d: &Decoded,
) -> (Vec<(ConstantLookup, usize)>, HashMap<usize, usize>) {
    let mut questions: Vec<(ConstantLookup, usize)> = Vec::new();
    let mut asked = HashMap::default();
    for (pc, inst) in d.insts.iter().enumerate() {
        if inst.op.class() != OpcodeClass::Texture {
            continue;
        }
        let Some(q) = constant_lookup(d, inst) else {
            continue;
        };
        let k = match questions.iter().position(|&(a, _)| a == q) {
            Some(k) => k,
            None => {
                questions.push((q, pc));
                questions.len() - 1
            }
        };
        asked.insert(pc, k);
    }
    (questions, asked)
}

impl Emitter<'_, '_> {
    /// Samples through the `tex_sample` shim: `src` is src0 (swizzled, modifiers applied),
    /// `grads` a TXD's gradient channels (src1 then src2; empty for other opcodes). With
    /// `general` (an inline site's `FastTex` address and opcode), a site whose descriptor
    /// selects the general path calls that compiled path (see
    /// [`compile_mip_fns`](super::compile_mip_fns)) instead, which has the same signature. The
    /// texels come back as `ty` vectors.
    pub(super) fn tex_call(
        &mut self,
        pc: usize,
        src: [Value; 4],
        grads: &[Vec<Value>],
        ty: Type,
        general: Option<GeneralPath>,
    ) -> [Value; 4] {
        let null = self.b.ins().iconst(self.ptr, 0);
        if let Some((io, pcv)) = self.tex_io {
            // Out of line: the operands are in `io` already.
            let callee = self.address(Address::TEX);
            self.b
                .ins()
                .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, io, null]);
            return std::array::from_fn(|c| self.b.ins().load(ty, self.mf, io, c as i32 * 16));
        }
        let addr = self.tex_operands(src, grads);
        let pcv = self.b.ins().iconst(I32, pc as i64);
        let tex = self.address(Address::TEX);
        // Without general paths (the fast tier) every site calls the sampler.
        let with_paths = self.shims.mip.is_some();
        let mip = general.filter(|_| with_paths).and_then(|g| {
            let k = MIP_OPS.iter().position(|&o| o == g.op)?;
            self.general_ops[k] = true;
            Some((g, Address::general_path_slot(k)))
        });
        let (callee, fast) = match mip {
            Some((
                GeneralPath {
                    base,
                    op,
                    shape,
                    offset,
                },
                slot,
            )) => {
                use crate::codegen::abi::FastTex;
                if op != Opcode::TXD {
                    // The general path reads the texel offset after the coordinates (where
                    // TXD's gradients would be).
                    let x = self.splat(offset[0] as u32);
                    let y = self.b.ins().iconst(I32, i64::from(offset[1]));
                    let o = self.b.ins().insertlane(x, y, 1);
                    self.b.ins().store(self.mf, o, addr, 64);
                }
                let mode = self.b.ins().load(
                    I32,
                    self.mf,
                    base,
                    std::mem::offset_of!(FastTex, mode) as i32,
                );
                let is_general = match shape {
                    // A site compiled for a mipmapped shape leaves to the general path every
                    // view, its own shape's quads that do not magnify in every lane included.
                    Some(shape) if shape.mipmapped => {
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, mode, 0)
                    }
                    // A site compiled for one shape leaves every other view to the general
                    // path; only its own shape's odd quads call the sampler.
                    Some(shape) => {
                        let actual = self.b.ins().load(
                            I32,
                            self.mf,
                            base,
                            std::mem::offset_of!(FastTex, shape) as i32,
                        );
                        let other = self.b.ins().icmp_imm_s(
                            IntCC::NotEqual,
                            actual,
                            i64::from(shape.code()),
                        );
                        let viewed = self.b.ins().icmp_imm_s(IntCC::NotEqual, mode, 0);
                        self.b.ins().band(other, viewed)
                    }
                    None => self.b.ins().icmp_imm_s(IntCC::Equal, mode, 2),
                };
                // Loaded per call, not assumed constant: the slot holds the sampler call until
                // the general path is compiled, then that path (see
                // `crate::codegen::texpaths::GeneralPaths`).
                let slot = self.address(slot);
                let f = self.b.ins().load(self.ptr, self.mf, slot, 0);
                (self.b.ins().select(is_general, f, tex), base)
            }
            None => (tex, null),
        };
        self.b
            .ins()
            .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, addr, fast]);
        std::array::from_fn(|c| self.b.ins().load(ty, self.mf, addr, c as i32 * 16))
    }

    /// Asks the sampler the questions of `d`'s constant lookups (see [`constant_lookup`]),
    /// here in the entry block, once per kernel call; `asked` says which instruction asks
    /// which, and where its texels will be.
    pub(super) fn answer_constant_lookups(
        &mut self,
        questions: &[(ConstantLookup, usize)],
        asked: &HashMap<usize, usize>,
    ) {
        if questions.is_empty() {
            return;
        }
        // `tex_sample` reads three operand blocks (192 bytes) from its `io` address.
        let bytes = questions.len() as u32 * 64 + 128;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            4,
        ));
        let offsets = asked.iter().map(|(&pc, &k)| (pc, k as i32 * 64)).collect();
        self.answered = Some((slot, offsets));
        let null = self.b.ins().iconst(self.ptr, 0);
        let callee = self.address(Address::TEX);
        for (k, &(question, pc)) in questions.iter().enumerate() {
            let addr = self.b.ins().stack_addr(self.ptr, slot, k as i32 * 64);
            for (c, &bits) in question.src.iter().enumerate() {
                let v = self.splat(bits);
                self.b.ins().store(self.mf, v, addr, c as i32 * 16);
            }
            let pcv = self.b.ins().iconst(I32, pc as i64);
            self.b
                .ins()
                .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, addr, null]);
        }
    }

    /// Stores a texture instruction's operands in the stack slot as `tex_sample` reads them
    /// (src0, then the gradients from byte 64) and returns the slot's address.
    fn tex_operands(&mut self, src: [Value; 4], grads: &[Vec<Value>]) -> Value {
        // One address for all accesses (`stack_store`/`stack_load` each make their own).
        let addr = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (c, v) in src.iter().enumerate() {
            self.b.ins().store(self.mf, *v, addr, c as i32 * 16);
        }
        for (k, g) in grads.iter().enumerate() {
            for (c, v) in g.iter().enumerate() {
                self.b
                    .ins()
                    .store(self.mf, *v, addr, 64 + k as i32 * 64 + c as i32 * 16);
            }
        }
        addr
    }

    /// Loads an inline texture site's descriptor (see `FastTex`) and broadcasts its fields.
    fn fast_site(&mut self, base: Value) -> FastSite {
        use crate::codegen::abi::FastTex;
        use std::mem::offset_of;
        // Pure loads: the descriptor is valid and unchanged for the whole call, so the optimizer
        // may merge the loads of sites sharing it and move them.
        let mf = self.mf.with_readonly().with_can_move();
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldf = |b: &mut FunctionBuilder, off: usize| b.ins().load(F32, mf, base, off as i32);
        let data = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, data) as i32);
        let ok = ld32(&mut self.b, offset_of!(FastTex, ok));
        let lin = ld32(&mut self.b, offset_of!(FastTex, linear));
        let clamp = ld32(&mut self.b, offset_of!(FastTex, clamp));
        let border = ld32(&mut self.b, offset_of!(FastTex, border));
        let w = ld32(&mut self.b, offset_of!(FastTex, width));
        let h = ld32(&mut self.b, offset_of!(FastTex, height));
        let fw = ldf(&mut self.b, offset_of!(FastTex, fwidth));
        let fh = ldf(&mut self.b, offset_of!(FastTex, fheight));
        let lo = ldf(&mut self.b, offset_of!(FastTex, lo));
        let hi_add = ldf(&mut self.b, offset_of!(FastTex, hi_add));
        // Exact: sizes are at most 2^16.
        let hw = self.b.ins().fadd(fw, hi_add);
        let hh = self.b.ins().fadd(fh, hi_add);
        let wm = self.b.ins().iadd_imm_s(w, -1);
        let hm = self.b.ins().iadd_imm_s(h, -1);
        let half = self.b.ins().iconst(I32, 0x3f00_0000);
        let off = self.b.ins().band(lin, half);
        let zero = ld32(&mut self.b, offset_of!(FastTex, zero));
        let [linear, clamp, border, width, wmax, hmax, off, zero] =
            [lin, clamp, border, w, wm, hm, off, zero].map(|x| self.b.ins().splat(I32X4, x));
        let [fwidth, fheight, lo, hi_w, hi_h] =
            [fw, fh, lo, hw, hh].map(|x| self.b.ins().splat(F32X4, x));
        FastSite {
            ok,
            data,
            linear_flag: lin,
            linear,
            clamp,
            border,
            zero,
            width,
            wmax,
            hmax,
            fwidth,
            fheight,
            off,
            lo,
            hi_w,
            hi_h,
        }
    }

    /// softpipe's `ifloor` of lanes with |u| < 2^22: truncate, step down where that rounded up.
    pub(super) fn ifloor(&mut self, u: Value) -> Value {
        let t = self.b.ins().x86_cvtt2dq(I32X4, u);
        let tf = self.b.ins().fcvt_from_sint(F32X4, t);
        let up = self.b.ins().fcmp(FloatCC::GreaterThan, tf, u);
        self.b.ins().iadd(t, up)
    }

    /// A compile-time texel offset as the float vector the texture paths add, `None` for 0
    /// (adding +0.0 would turn a -0.0 coordinate into +0.0).
    pub(super) fn offset_vector(&mut self, offset: i32) -> Option<Value> {
        (offset != 0).then(|| self.splatf((offset as f32).to_bits()))
    }

    /// `v + offset`, or `v` without one.
    pub(super) fn plus_offset(&mut self, v: Value, offset: Option<Value>) -> Value {
        match offset {
            Some(o) => self.b.ins().fadd(v, o),
            None => v,
        }
    }

    /// One axis of the inline sampler: the coordinate scaled and wrapped as softpipe's
    /// `img_filter_2d_{nearest,linear}_repeat_POT` (repeat) or `wrap_{nearest,linear}_clamp_to_
    /// {edge,border}` (clamp) compute it, for both filters at once (nearest: no -0.5, weight 0).
    /// Returns (u, in-range mask) — the kernel checks |u| < 2^22 before trusting `ifloor`, and
    /// hands NaN coordinates of border mode to the sampler (its nearest filter floors them
    /// unclamped). A texel `offset` is added as softpipe adds it: to the scaled coordinate
    /// before the clamp in clamping modes, after the half-texel shift in REPEAT on
    /// power-of-two sizes (`img_filter_2d_{nearest,linear}_repeat_POT`).
    pub(super) fn tex_axis_u(
        &mut self,
        s: Value,
        size: Value,
        hi: Value,
        site: FastSite,
        offset: Option<Value>,
    ) -> (Value, Value) {
        let p = self.f(s);
        let p = self.b.ins().fmul(p, size);
        let off = self.f(site.off);
        let ur = self.b.ins().fsub(p, off);
        let ur = self.plus_offset(ur, offset);
        let pc = self.plus_offset(p, offset);
        let c = self.mesa_clamp(pc, site.lo, hi);
        let uc = self.b.ins().fsub(c, off);
        let uc = self.i(uc);
        let ur = self.i(ur);
        let u = self.b.ins().bitselect(site.clamp, uc, ur);
        let abs = self.splat(!SIGN);
        let a = self.b.ins().band(u, abs);
        let a = self.f(a);
        let lim = self.splat(0x4a80_0000); // 2^22
        let lim = self.f(lim);
        let ok = self.b.ins().fcmp(FloatCC::LessThan, a, lim);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, p, p);
        let bad = self.b.ins().band(nan, site.border);
        let ok = self.b.ins().band_not(ok, bad);
        (u, ok)
    }

    /// Texel indices and weight of one axis from `u`: (i0, i1, weight bits, i0 inside, i1
    /// inside). Outside the texture (border mode only) the index is clamped for the load and
    /// the texel then replaced by the transparent black border.
    pub(super) fn tex_axis_idx(&mut self, u: Value, max: Value, site: FastSite) -> [Value; 5] {
        let (w, fl) = self.frac_floor(u);
        let w = self.i(w);
        let w = self.b.ins().band(w, site.linear);
        let one = self.splat(1);
        let fl1 = self.b.ins().iadd(fl, one);
        let zero = self.splat(0);
        let i0r = self.b.ins().band(fl, max);
        let i1r = self.b.ins().band(fl1, max);
        let c0 = self.b.ins().smax(fl, zero);
        let i0c = self.b.ins().smin(c0, max);
        let c1 = self.b.ins().smax(fl1, zero);
        let i1c = self.b.ins().smin(c1, max);
        let i0 = self.b.ins().bitselect(site.clamp, i0c, i0r);
        let i1 = self.b.ins().bitselect(site.clamp, i1c, i1r);
        let in0 = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fl, max);
        let in1 = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fl1, max);
        let in0 = self.b.ins().bor_not(in0, site.border);
        let in1 = self.b.ins().bor_not(in1, site.border);
        [i0, i1, w, in0, in1]
    }

    /// Inline sampling of decoded texels (see [`TextureAccess::texel_view`]) with the sampler's
    /// exact arithmetic; falls back to [`Self::tex_call`] when the unit has no view, a coordinate
    /// is denormal (the kernel's DAZ would read it as zero where the sampler does not) or a
    /// scaled coordinate is NaN or beyond 2^22 (softpipe's wide `ifloor`).
    ///
    /// [`TextureAccess::texel_view`]: crate::exec::TextureAccess::texel_view
    pub(super) fn tex_inline(
        &mut self,
        site: FastSite,
        pc: usize,
        src: [Value; 4],
        grads: &[Vec<Value>],
        general: Option<GeneralPath>,
        offset: [i32; 2],
    ) -> [Value; 4] {
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.texel_join();
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let [os, ot] = offset.map(|o| self.offset_vector(o));
        let (us, oks) = self.tex_axis_u(s, site.fwidth, site.hi_w, site, os);
        let (ut, okt) = self.tex_axis_u(t, site.fheight, site.hi_h, site, ot);
        let ds = self.denormal_mask(s);
        let dt = self.denormal_mask(t);
        let denormal = self.b.ins().bor(ds, dt);
        let in_range = self.b.ins().band(oks, okt);
        let good = self.b.ins().band_not(in_range, denormal);
        let all = self.b.ins().vall_true(good);
        let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, site.ok, 0);
        let go = self.b.ins().band(all, ok);
        self.b.ins().brif(go, fast, &[], slow, &[]);

        self.enter(slow);
        let r = self.tex_call(pc, src, grads, I32X4, general);
        self.jump_texels(join, r);

        self.enter(fast);
        let [x0, x1, xw, xin0, xin1] = self.tex_axis_idx(us, site.wmax, site);
        let [y0, y1, yw, yin0, yin1] = self.tex_axis_idx(ut, site.hmax, site);
        let row0 = self.b.ins().imul(y0, site.width);
        let linear_block = self.b.create_block();
        let nearest_block = self.b.create_block();
        self.b
            .ins()
            .brif(site.linear_flag, linear_block, &[], nearest_block, &[]);

        // Nearest: the texel itself (a lerp with weight 0 would turn -0.0 into +0.0).
        self.enter(nearest_block);
        let t = self.texel_channels(site, row0, x0, yin0, xin0);
        self.jump_texels(join, t);

        self.enter(linear_block);
        let row1 = self.b.ins().imul(y1, site.width);
        let corners = [
            self.texel_index(site, row0, x0, yin0, xin0),
            self.texel_index(site, row0, x1, yin0, xin1),
            self.texel_index(site, row1, x0, yin1, xin0),
            self.texel_index(site, row1, x1, yin1, xin1),
        ];
        let out = self.bilerp_lanes(site.data, corners, xw, yw, None);
        self.jump_texels(join, out);
        self.texels_at(join)
    }

    /// An inline texture site: the level-0 code (`tex_inline`), whose sampler fallback calls
    /// the out-of-line general path instead when the site's descriptor says so (see
    /// `FastTex::mode`), so that a site has one call in all.
    pub(super) fn tex_site(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
        offset: [i32; 2],
    ) -> [Value; 4] {
        let site = self.fast_site(base);
        let general = GeneralPath::of(base, op, None, offset);
        self.tex_inline(site, pc, src, grads, general, offset)
    }

    /// A block taking four `i32x4` texel channels, where a texture site's paths meet.
    pub(super) fn texel_join(&mut self) -> Block {
        let join = self.b.create_block();
        for _ in 0..4 {
            self.b.append_block_param(join, I32X4);
        }
        join
    }

    /// Jumps to `join` (see [`Self::texel_join`]) with `texels`.
    pub(super) fn jump_texels(&mut self, join: Block, texels: [Value; 4]) {
        let args: Vec<_> = texels.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &args);
    }

    /// Continues at `join` (see [`Self::texel_join`]) and returns its texels.
    pub(super) fn texels_at(&mut self, join: Block) -> [Value; 4] {
        self.enter(join);
        let p = self.b.block_params(join);
        [p[0], p[1], p[2], p[3]]
    }

    /// softpipe's `lerp(a, v0, v1)`: `v0 + a * (v1 - v0)` (`a` a float, `v0`/`v1` any type; bits).
    pub(super) fn lerp(&mut self, a: Value, v0: Value, v1: Value) -> Value {
        let (v0, v1) = (self.f(v0), self.f(v1));
        let d = self.b.ins().fsub(v1, v0);
        let m = self.b.ins().fmul(a, d);
        let r = self.b.ins().fadd(v0, m);
        self.i(r)
    }

    /// `a > b ? a : b` on floats (softpipe's comparisons: a NaN gives `b`).
    pub(super) fn gt_select(&mut self, a: Value, b: Value) -> Value {
        let (a, b) = (self.f(a), self.f(b));
        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, a, b);
        let (a, b) = (self.i(a), self.i(b));
        self.b.ins().bitselect(gt, a, b)
    }

    /// Mesa's `CLAMP(x, lo, hi)` as softpipe compiles it, on floats: `x > lo ? (x > hi ? hi :
    /// x) : lo` (a NaN gives `lo`).
    pub(super) fn mesa_clamp(&mut self, x: Value, lo: Value, hi: Value) -> Value {
        let (x, lo, hi) = (self.f(x), self.f(lo), self.f(hi));
        let gt_lo = self.b.ins().fcmp(FloatCC::GreaterThan, x, lo);
        let gt_hi = self.b.ins().fcmp(FloatCC::GreaterThan, x, hi);
        let (xi, lo, hi) = (self.i(x), self.i(lo), self.i(hi));
        let r = self.b.ins().bitselect(gt_hi, hi, xi);
        let r = self.b.ins().bitselect(gt_lo, r, lo);
        self.f(r)
    }

    /// softpipe's `lerp_2d` of the texels at indices `idx` (top-left, top-right, bottom-left,
    /// bottom-right; along x on both rows, then along y), lane by lane: each lane lerps its own
    /// four texels as whole `[r, g, b, a]` vectors with its weights broadcast, and one transpose
    /// makes channels of the four results — the same operations on the same values as lerping
    /// channel by channel after four transposes (so the same bits), with four live texels
    /// instead of sixteen. `linear`: a lane mask; other lanes take the top-left texel itself
    /// (nearest filtering).
    pub(super) fn bilerp_lanes(
        &mut self,
        base: Value,
        idx: [Value; 4],
        xw: Value,
        yw: Value,
        linear: Option<Value>,
    ) -> [Value; 4] {
        let idx = idx.map(|i| self.twice(i));
        self.bilerp_rows(xw, yw, linear, |e, l| idx.map(|i| e.texel_row(base, i, l)))
    }

    /// [`Self::bilerp_lanes`] of the texels `corners(lane)` loads (top-left, top-right,
    /// bottom-left, bottom-right, as 16-byte rows).
    pub(super) fn bilerp_rows(
        &mut self,
        xw: Value,
        yw: Value,
        linear: Option<Value>,
        mut corners: impl FnMut(&mut Self, u8) -> [Value; 4],
    ) -> [Value; 4] {
        let (xw, yw) = (self.f(xw), self.f(yw));
        let texels: [Value; 4] = std::array::from_fn(|l| {
            let l = l as u8;
            let [c00, c10, c01, c11] = corners(self, l);
            let wx = self.broadcast_lane(xw, l);
            let wy = self.broadcast_lane(yw, l);
            let t0 = self.lerp(wx, c00, c10);
            let t1 = self.lerp(wx, c01, c11);
            let r = self.lerp(wy, t0, t1);
            let r = match linear {
                // A lerp with weight 0 would turn -0.0 into +0.0: the texel itself.
                Some(lin) => {
                    let lin = self.f(lin);
                    let m = self.broadcast_lane(lin, l);
                    let m = self.i(m);
                    let c00 = self.i(c00);
                    self.b.ins().bitselect(m, r, c00)
                }
                None => r,
            };
            if self.optimize {
                // The optimizer computes pure values where first used, after every side
                // effect before that use: without a use here, all sixteen loads would come
                // first and their texels be spilled. A store (to scratch nobody reads; one place
                // per lane, so that no store overwrites another and dies) is such a use.
                let scratch = self.b.ins().stack_addr(self.ptr, self.slot, 0);
                self.b.ins().store(self.mf, r, scratch, 16 * i32::from(l));
            }
            r
        });
        self.transpose(texels)
    }

    /// Lane `l` of the `f32x4` `v` in every lane.
    fn broadcast_lane(&mut self, v: Value, l: u8) -> Value {
        let bytes: Vec<u8> = (0..16).map(|k| l * 4 + k % 4).collect();
        let mask = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let v = self.b.ins().bitcast(I8X16, self.le, v);
        let r = self.b.ins().shuffle(v, v, mask);
        self.b.ins().bitcast(F32X4, self.le, r)
    }

    /// `x - floor(x)` for lanes with |x| < 2^22 (softpipe's `frac`), with the floor.
    pub(super) fn frac_floor(&mut self, x: Value) -> (Value, Value) {
        let x = self.f(x);
        let fl = self.ifloor(x);
        let flf = self.b.ins().fcvt_from_sint(F32X4, fl);
        (self.b.ins().fsub(x, flf), fl)
    }
}

#[cfg(test)]
mod tests {
    use super::every_texture_site_inline;
    use crate::interp::decode::decode;
    use crate::ir::text::parse_program;

    fn decoded(body: &str) -> crate::interp::decode::Decoded {
        let text = format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
             DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..1]\n{body}END\n"
        );
        decode(&parse_program(&text).expect("test program parses")).expect("decodes")
    }

    #[test]
    fn sampler_calls_are_rare_only_when_every_texture_site_is_inline() {
        // No texture instruction, or only 2D TEX-family lookups: calls are fallbacks.
        assert!(every_texture_site_inline(&decoded("MOV OUT[0], IN[0]\n")));
        assert!(every_texture_site_inline(&decoded(
            "TEX TEMP[0], IN[0], SAMP[0], 2D\nTXL TEMP[1], IN[0], SAMP[0], 2D\n\
             ADD OUT[0], TEMP[0], TEMP[1]\n"
        )));
        // texelFetch and size queries call Rust on every quad; so does a projective lookup.
        for op in [
            "TXF TEMP[0], IN[0], SAMP[0], 2D",
            "TXQ TEMP[0], IN[0], SAMP[0], 2D",
            "TXP TEMP[0], IN[0], SAMP[0], 2D",
        ] {
            let body =
                format!("TEX TEMP[1], IN[0], SAMP[0], 2D\n{op}\nADD OUT[0], TEMP[0], TEMP[1]\n");
            assert!(!every_texture_site_inline(&decoded(&body)), "{op}");
        }
        // Past MAX_INLINE_TEX lookups, the rest call the sampler.
        let many = "TEX TEMP[0], IN[0], SAMP[0], 2D\n".repeat(super::MAX_INLINE_TEX + 1);
        assert!(!every_texture_site_inline(&decoded(&format!(
            "{many}MOV OUT[0], TEMP[0]\n"
        ))));
        let most = "TEX TEMP[0], IN[0], SAMP[0], 2D\n".repeat(super::MAX_INLINE_TEX);
        assert!(every_texture_site_inline(&decoded(&format!(
            "{most}MOV OUT[0], TEMP[0]\n"
        ))));
    }
}
