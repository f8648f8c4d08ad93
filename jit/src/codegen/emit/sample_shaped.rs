//! Inline texture sites compiled for one sampler state (a `SamplerHint`'s `InlineShape`: one
//! filter, one wrap mode, mipmapped or not): `sample`'s level-0 arithmetic without the per-lane
//! selections between modes, reading the unit's padded level 0, whose apron holds what the wrap
//! mode reads beyond each edge. Views of any other shape, and the quads the code cannot take,
//! call the general path (`sample_mip`) or the sampler.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, I32, I32X4, I8};
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use super::arith::SIGN;
use super::sample::GeneralPath;
use super::Emitter;
use crate::ir::{InlineShape, InlineWrap, Opcode};

/// Where in a kernel's scratch slot a padded texture site stores its four lane offsets, which
/// it then loads as scalars: `extractlane` of lanes 1-3 is two µops on the shuffle port, which
/// the sites' transposes keep busy (after the 192 bytes the sampler calls' operands take).
pub(super) const LANE_OFFSETS_AT: i32 = 192;

impl Emitter<'_, '_> {
    /// An inline texture site compiled for views of one `shape` (see `SamplerHint`): the
    /// arithmetic of [`Self::tex_inline`] for that filter and wrap mode only, without the
    /// per-lane selections between modes. Views of any other shape take the general path (or
    /// the sampler), as do the quads `tex_inline` leaves to the sampler. A texel `offset` is
    /// added as `tex_axis_u` adds it. For a mipmapped shape, only quads whose every lane
    /// magnifies read level 0 here; the others take the general path.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tex_shaped(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
        shape: InlineShape,
        offset: [i32; 2],
    ) -> [Value; 4] {
        use crate::codegen::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf.with_readonly().with_can_move();
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldf = |b: &mut FunctionBuilder, off: usize| b.ins().load(F32, mf, base, off as i32);
        let border = shape.wrap == InlineWrap::ClampToBorder;
        let clamp = shape.wrap != InlineWrap::RepeatPot;
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.texel_join();
        let actual = ld32(&mut self.b, offset_of!(FastTex, shape));
        let fw = ldf(&mut self.b, offset_of!(FastTex, fwidth));
        let fh = ldf(&mut self.b, offset_of!(FastTex, fheight));
        let (lo, hi_add) = crate::codegen::abi::coordinate_clamp(border, shape.linear);
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let axis = |e: &mut Self, coord: Value, fsize: Value, offset: i32| {
            let offset = e.offset_vector(offset);
            let size = e.b.ins().splat(F32X4, fsize);
            let p = e.f(coord);
            let p = e.b.ins().fmul(p, size);
            if clamp {
                let hi = e.b.ins().f32const(hi_add);
                let hi = e.b.ins().fadd(fsize, hi);
                let hi = e.b.ins().splat(F32X4, hi);
                let lo = e.splatf(lo.to_bits());
                let pc = e.plus_offset(p, offset);
                let c = e.mesa_clamp(pc, lo, hi);
                // Clamped coordinates are in range; NaN ones become `lo`, as in the sampler,
                // except that its nearest border filter floors them unclamped.
                let nan =
                    (border && !shape.linear).then(|| e.b.ins().fcmp(FloatCC::Unordered, p, p));
                (e.shaped_offset(c, shape), nan)
            } else {
                let u = e.shaped_offset(p, shape);
                let u = e.plus_offset(u, offset);
                let abs = e.splat(!SIGN);
                let ui = e.i(u);
                let a = e.b.ins().band(ui, abs);
                let a = e.f(a);
                let lim = e.splatf(0x4a80_0000); // 2^22
                let ok = e.b.ins().fcmp(FloatCC::LessThan, a, lim);
                let bad = e.b.ins().bnot(ok);
                (u, Some(bad))
            }
        };
        let (us, bad_s) = axis(self, s, fw, offset[0]);
        let (ut, bad_t) = axis(self, t, fh, offset[1]);
        // The kernel reads a denormal coordinate as a zero of its sign, the sampler does not:
        // the scaled coordinate is then below 2^-110 in magnitude either way, which a bilinear
        // filter's -0.5 absorbs and CLAMP_TO_EDGE's clamp to [0, size] sends to the same texel
        // 0. Only the nearest filter's other wraps floor -tiny to -1 where -0 gives 0.
        let denormals_matter = !shape.linear && shape.wrap != InlineWrap::ClampToEdge;
        let mut bad = if denormals_matter {
            let ds = self.denormal_mask(s);
            let dt = self.denormal_mask(t);
            Some(self.b.ins().bor(ds, dt))
        } else {
            None
        };
        for b in [bad_s, bad_t].into_iter().flatten() {
            bad = Some(match bad {
                Some(x) => self.b.ins().bor(x, b),
                None => b,
            });
        }
        let all = match bad {
            Some(bad) => {
                let good = self.b.ins().bnot(bad);
                self.b.ins().vall_true(good)
            }
            None => self.b.ins().iconst(I8, 1),
        };
        let ours = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, actual, i64::from(shape.code()));
        let go = self.b.ins().band(all, ours);
        if shape.mipmapped {
            // Level 0 with the magnification filter is what softpipe's `mip_filter_nearest`
            // and `mip_filter_linear` read for lanes whose level of detail is at most 0 (and
            // the only filter of the shape, as minification uses the same one).
            let magnify = self.b.create_block();
            self.b.ins().brif(go, magnify, &[], slow, &[]);
            self.enter(magnify);
            let (lod, bad) = self.mip_lod(base, op, s, t, src[3], grads);
            let zero = self.splatf(0);
            let magnified = self.b.ins().fcmp(FloatCC::LessThanOrEqual, lod, zero);
            let magnified = self.i(magnified);
            let good = self.b.ins().band_not(magnified, bad);
            let all = self.b.ins().vall_true(good);
            self.b.ins().brif(all, fast, &[], slow, &[]);
        } else {
            self.b.ins().brif(go, fast, &[], slow, &[]);
        }

        self.enter(slow);
        let general = GeneralPath::of(base, op, Some(shape), offset);
        let r = self.tex_call(pc, src, grads, I32X4, general);
        self.jump_texels(join, r);

        self.enter(fast);
        let out = self.padded_sample(base, us, ut, shape);
        self.jump_texels(join, out);
        self.texels_at(join)
    }

    /// The texels of a site compiled for `shape` at the (offset, clamped or range-checked)
    /// texel coordinates `us`, `ut`, from the unit's padded level 0 (see
    /// `TextureAccess::padded_level0`): the apron holds what the wrap mode reads beyond each
    /// edge, so clamped coordinates need no index clamp and no border test, and a bilinear
    /// lane's four texels are at its top-left texel's address, one texel and one row further
    /// (one index per lane instead of four).
    fn padded_sample(
        &mut self,
        base: Value,
        us: Value,
        ut: Value,
        shape: InlineShape,
    ) -> [Value; 4] {
        use crate::codegen::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf.with_readonly().with_can_move();
        let padded = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, padded) as i32);
        let pitch = self
            .b
            .ins()
            .load(I32, mf, base, offset_of!(FastTex, pitch) as i32);
        let (xw, fx) = self.frac_floor(us);
        let (yw, fy) = self.frac_floor(ut);
        // Clamped coordinates are in the apron already (from -2 for a bilinear CLAMP_TO_BORDER
        // to the column after the last); REPEAT's wrap into the texture.
        let (x0, y0) = if shape.wrap == InlineWrap::RepeatPot {
            let w = self
                .b
                .ins()
                .load(I32, mf, base, offset_of!(FastTex, width) as i32);
            let h = self
                .b
                .ins()
                .load(I32, mf, base, offset_of!(FastTex, height) as i32);
            let wm = self.b.ins().iadd_imm_s(w, -1);
            let hm = self.b.ins().iadd_imm_s(h, -1);
            let wmax = self.b.ins().splat(I32X4, wm);
            let hmax = self.b.ins().splat(I32X4, hm);
            (self.b.ins().band(fx, wmax), self.b.ins().band(fy, hmax))
        } else {
            (fx, fy)
        };
        let pitch_v = self.b.ins().splat(I32X4, pitch);
        let row = self.b.ins().imul(y0, pitch_v);
        let index = self.b.ins().iadd(row, x0);
        let twice = self.twice(index);
        // Lane `l`'s texel address; indices may be negative (the apron before the first texel).
        let scratch = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        self.b.ins().store(self.mf, twice, scratch, LANE_OFFSETS_AT);
        let address = |e: &mut Self, l: u8| {
            let at = LANE_OFFSETS_AT + 4 * i32::from(l);
            let o = e.b.ins().sload32(e.mf, scratch, at);
            let o = e.b.ins().ishl_imm_u(o, 3);
            e.b.ins().iadd(padded, o)
        };
        if !shape.linear {
            // Nearest: the texel itself (a lerp with weight 0 would turn -0.0 into +0.0).
            let rows = std::array::from_fn(|l| {
                let a = address(self, l as u8);
                self.b.ins().load(I32X4, self.mf, a, 0)
            });
            return self.transpose(rows);
        }
        let pitch64 = self.b.ins().uextend(self.ptr, pitch);
        let row_bytes = self.b.ins().ishl_imm_u(pitch64, 4);
        self.bilerp_rows(xw, yw, None, |e, l| {
            let top = address(e, l);
            let bottom = e.b.ins().iadd(top, row_bytes);
            [
                e.b.ins().load(I32X4, e.mf, top, 0),
                e.b.ins().load(I32X4, e.mf, top, 16),
                e.b.ins().load(I32X4, e.mf, bottom, 0),
                e.b.ins().load(I32X4, e.mf, bottom, 16),
            ]
        })
    }

    /// `tex_axis_u`'s subtraction of the filter's half-texel offset: 0.5 for the bilinear
    /// filter; nothing for the nearest one (`x - 0.0` is `x` for the clamped or range-checked
    /// values here, which are never denormal: coordinates are normal and sizes at least 1).
    fn shaped_offset(&mut self, x: Value, shape: InlineShape) -> Value {
        let x = self.f(x);
        if shape.linear {
            let half = self.splatf(0x3f00_0000);
            self.b.ins().fsub(x, half)
        } else {
            x
        }
    }
}
