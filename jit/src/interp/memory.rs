//! Loads, stores and atomics of storage buffers and images (`LOAD`, `STORE`, `ATOM*`): the
//! specification both executors follow (the JIT runs these instructions through this code).
//!
//! **Addresses.** A `BUFFER` address is a byte offset in src.x, rounded down to a multiple of 4;
//! channel `c` of a `LOAD`/`STORE` is the word `offset / 4 + c`. An `IMAGE` address is the
//! declaration target's integer coordinates (x, y, then the depth or layer), read as signed.
//!
//! **Bounds** (robust access): a load past the end of a buffer reads 0, outside an image a
//! zero texel; a store or atomic there writes nothing (an atomic returns 0); a missing
//! `BUFFER[n]`/`IMAGE[n]` is empty.
//!
//! **Lanes.** Loads run in every executing lane, helpers included (their results feed
//! derivatives as any other value). Stores and atomics run only in lanes that are live and not
//! killed — helper invocations have no side effects, as on a GPU — and lane by lane in lane order
//! (0 = top-left … 3 = bottom-right), so the later lane wins a conflicting store within a quad.
//! An atomic writes the word's old value to every channel of its destination's write mask, in
//! the lanes that ran it; `ATOMCAS` compares with src2.x and writes src3.x, the others combine
//! the word with src2.x.
//!
//! **Image formats.** Texels hold four words; a store keeps the channels the declared format has
//! (32-bit formats as their bits, `UNORM8` formats rounded to the nearest multiple of 1/255 of
//! the value clamped to [0, 1], NaN to 0); a load returns the format's channels, then 0 for a
//! missing green or blue and 1 (1.0 for float formats) for a missing alpha.

// Lane- and channel-indexed loops mirror the [channel][lane] layout; iterators would obscure it.
#![allow(clippy::needless_range_loop)]

use super::decode::{Inst, MemResource};
use super::run::Machine;
use crate::exec::{AtomicOp, QuadVec4, StorageBuffer};
use crate::ir::{ImageFormat, Opcode};

/// An empty buffer or image, for resources the draw did not bind.
static EMPTY: StorageBuffer = StorageBuffer::EMPTY;

/// The memory word of one lane's address and, for images, whether the address lies inside.
struct Target<'a> {
    memory: &'a StorageBuffer,
    /// The first word; `None` outside an image.
    word: Option<u64>,
    format: Option<ImageFormat>,
}

impl Machine<'_, '_, '_> {
    /// Executes memory instruction `inst` (see the module documentation).
    pub(crate) fn memory(&mut self, inst: &Inst) {
        let mem = self.prog.memory[inst.aux as usize];
        let (address_src, value_src) = match inst.op {
            Opcode::STORE => (0, 1),
            _ => (1, 2),
        };
        let address = self.fetch(&inst.src[address_src]);
        let side_effects = self.exec & !self.kill & self.io.live & 0xF;
        match inst.op {
            Opcode::LOAD => {
                let mut r: QuadVec4 = [[0; 4]; 4];
                for l in 0..4 {
                    if self.exec & (1 << l) == 0 {
                        continue;
                    }
                    let t = self.target(mem.resource, &address, l);
                    let texel = read_texel(&t, inst.write_mask);
                    for c in 0..4 {
                        r[c][l] = texel[c];
                    }
                }
                self.store(inst, &r);
            }
            Opcode::STORE => {
                let value = self.fetch(&inst.src[value_src]);
                for l in 0..4 {
                    if side_effects & (1 << l) == 0 {
                        continue;
                    }
                    let t = self.target(mem.resource, &address, l);
                    let Some(word) = t.word else { continue };
                    let channels = t.format.map_or(4, ImageFormat::channels);
                    for c in 0..channels {
                        if mem.store_mask & (1 << c) != 0 {
                            let bits = t.format.map_or(value[c][l], |f| to_format(f, value[c][l]));
                            t.memory.store(word.saturating_add(c as u64), bits);
                        }
                    }
                }
            }
            op => {
                let value = self.fetch_chan(&inst.src[value_src], 0);
                let swap = if op == Opcode::ATOMCAS {
                    Some(self.fetch_chan(&inst.src[3], 0))
                } else {
                    None
                };
                let mut r: QuadVec4 = [[0; 4]; 4];
                for l in 0..4 {
                    if side_effects & (1 << l) == 0 {
                        continue;
                    }
                    let t = self.target(mem.resource, &address, l);
                    let Some(word) = t.word else { continue };
                    let (atomic, operand) = match (op, swap) {
                        (Opcode::ATOMCAS, Some(new)) => {
                            (AtomicOp::CompareExchange(value[l]), new[l])
                        }
                        (Opcode::ATOMUADD, _) => (AtomicOp::Add, value[l]),
                        (Opcode::ATOMXCHG, _) => (AtomicOp::Exchange, value[l]),
                        (Opcode::ATOMAND, _) => (AtomicOp::And, value[l]),
                        (Opcode::ATOMOR, _) => (AtomicOp::Or, value[l]),
                        (Opcode::ATOMXOR, _) => (AtomicOp::Xor, value[l]),
                        (Opcode::ATOMUMIN, _) => (AtomicOp::UMin, value[l]),
                        (Opcode::ATOMUMAX, _) => (AtomicOp::UMax, value[l]),
                        (Opcode::ATOMIMIN, _) => (AtomicOp::IMin, value[l]),
                        _ => (AtomicOp::IMax, value[l]),
                    };
                    let old = t.memory.atomic(word, atomic, operand);
                    for c in 0..4 {
                        r[c][l] = old;
                    }
                }
                let exec = self.exec;
                self.exec = side_effects;
                self.store(inst, &r);
                self.exec = exec;
            }
        }
    }

    /// Where lane `l`'s `address` points in `resource`.
    fn target(&self, resource: MemResource, address: &QuadVec4, l: usize) -> Target<'_> {
        let storage = &self.res.storage;
        match resource {
            MemResource::Buffer(n) => Target {
                memory: storage.buffers.get(n as usize).copied().unwrap_or(&EMPTY),
                word: Some(u64::from(address[0][l] >> 2)),
                format: None,
            },
            MemResource::Image {
                index,
                coords,
                format,
            } => {
                let Some(image) = storage.images.get(index as usize).copied() else {
                    return Target {
                        memory: &EMPTY,
                        word: None,
                        format: Some(format),
                    };
                };
                let coord = |k: usize| if k < coords { address[k][l] as i32 } else { 0 };
                Target {
                    memory: &image.texels,
                    word: image.texel_word(coord(0), coord(1), coord(2)),
                    format: Some(format),
                }
            }
        }
    }
}

/// The channels a load returns from `t` (only those in `mask` are read from memory).
fn read_texel(t: &Target<'_>, mask: u8) -> [u32; 4] {
    let mut texel = [0u32; 4];
    let Some(word) = t.word else {
        return texel;
    };
    let channels = t.format.map_or(4, ImageFormat::channels);
    for c in 0..4 {
        if mask & (1 << c) == 0 {
            continue;
        }
        texel[c] = if c < channels {
            t.memory.load(word.saturating_add(c as u64))
        } else {
            match (c, t.format) {
                (3, Some(f)) if f.is_float() => 1.0f32.to_bits(),
                (3, Some(_)) => 1,
                _ => 0,
            }
        };
    }
    texel
}

/// What an image of `format` keeps of a stored channel.
fn to_format(format: ImageFormat, bits: u32) -> u32 {
    if !format.is_unorm8() {
        return bits;
    }
    let x = f32::from_bits(bits);
    let steps = if x.is_nan() {
        0.0
    } else {
        (x.clamp(0.0, 1.0) * 255.0).round_ties_even()
    };
    (steps / 255.0).to_bits()
}
