//! The texel format inline sampling reads (gallivm's `lp_bld_format_soa`): a view's texels are
//! decoded `[r, g, b, a]` f32 rows of 16 bytes; this file addresses them (per-lane indices,
//! the zero texel border lanes read), loads one row per lane and transposes rows into channel
//! vectors (array of structures to structure of arrays).

use cranelift_codegen::ir::types::{I32X4, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Value};

use super::sample::FastSite;
use super::Emitter;

impl Emitter<'_, '_> {
    /// The decoded texels at `row + x` of the four lanes as four channel vectors (`[r, g, b, a]`
    /// of lanes 0-3), zero where `yin & xin` is clear (the border: those lanes read the view's
    /// all-zero texel). Each lane loads its texel's 16 bytes; a 4x4 transpose turns texels
    /// into channels.
    pub(super) fn texel_channels(
        &mut self,
        site: FastSite,
        row: Value,
        x: Value,
        yin: Value,
        xin: Value,
    ) -> [Value; 4] {
        let i = self.texel_index(site, row, x, yin, xin);
        self.gather_rows(site.data, i)
    }

    /// The texel index `row + x` per lane, or the zero texel's where `yin & xin` is clear.
    pub(super) fn texel_index(
        &mut self,
        site: FastSite,
        row: Value,
        x: Value,
        yin: Value,
        xin: Value,
    ) -> Value {
        let i = self.b.ins().iadd(row, x);
        let inside = self.b.ins().band(yin, xin);
        self.b.ins().bitselect(inside, i, site.zero)
    }

    /// `index * 2` lane by lane, for [`Self::texel_row`]: exact as an unsigned 32-bit value,
    /// which is how `texel_row` extends it, for every index below 2^31 (`FastTex::of`'s bound).
    pub(super) fn twice(&mut self, index: Value) -> Value {
        self.b.ins().ishl_imm_u(index, 1)
    }

    /// Lane `l`'s 16-byte texel at `base + index[l] * 16`, given `twice(index)`: the remaining
    /// factor 8 is an address scale, so each texel costs an extract and a load.
    pub(super) fn texel_row(&mut self, base: Value, twice_index: Value, l: u8) -> Value {
        let o = self.b.ins().extractlane(twice_index, l);
        let o = self.b.ins().uextend(self.ptr, o);
        let o = self.b.ins().ishl_imm_u(o, 3);
        let a = self.b.ins().iadd(base, o);
        self.b.ins().load(I32X4, self.mf, a, 0)
    }

    /// Four 16-byte rows at `base + index * 16` (one per lane of `index`) as four column
    /// vectors (see [`Self::transpose`]).
    pub(super) fn gather_rows(&mut self, base: Value, index: Value) -> [Value; 4] {
        let index = self.twice(index);
        let rows: [Value; 4] = std::array::from_fn(|l| self.texel_row(base, index, l as u8));
        self.transpose(rows)
    }

    /// Rows (one 4-component vector per lane) to columns (one vector per component), as
    /// `i32x4`: a 4x4 transpose (punpck{l,h}dq, then punpck{l,h}qdq).
    pub(super) fn transpose(&mut self, rows: [Value; 4]) -> [Value; 4] {
        let rows = rows.map(|v| {
            let v = self.i(v);
            self.b.ins().bitcast(I8X16, self.le, v)
        });
        let lo32: Vec<u8> = [0u8, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23].to_vec();
        let hi32: Vec<u8> = lo32.iter().map(|b| b + 8).collect();
        let lo64: Vec<u8> = (0..8).chain(16..24).collect();
        let hi64: Vec<u8> = (8..16).chain(24..32).collect();
        let [lo32, hi32, lo64, hi64] = [lo32, hi32, lo64, hi64]
            .map(|m| self.b.func.dfg.immediates.push(ConstantData::from(m)));
        let rg01 = self.b.ins().shuffle(rows[0], rows[1], lo32);
        let rg23 = self.b.ins().shuffle(rows[2], rows[3], lo32);
        let ba01 = self.b.ins().shuffle(rows[0], rows[1], hi32);
        let ba23 = self.b.ins().shuffle(rows[2], rows[3], hi32);
        let cols = [
            self.b.ins().shuffle(rg01, rg23, lo64),
            self.b.ins().shuffle(rg01, rg23, hi64),
            self.b.ins().shuffle(ba01, ba23, lo64),
            self.b.ins().shuffle(ba01, ba23, hi64),
        ];
        cols.map(|c| self.i(c))
    }
}
