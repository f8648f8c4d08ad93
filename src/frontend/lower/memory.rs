//! Storage memory: loads and stores through pointers into read-write storage buffers
//! (`BUFFER[n]`, addressed by byte offset), atomics on their words, and storage-image loads
//! and stores (`IMAGE[n]`), as TGSI `LOAD`, `STORE` and `ATOM*` instructions.

use naga::{Handle, TypeInner};

use super::builder::{s, slots_of, Slot};
use super::stmt::FnCtx;
use super::{Ev, ImageRef, Lowerer, Place, Value, R};
use crate::ir::{Opcode, Register, RegisterFile, SrcOperand};

impl<'a> Lowerer<'a> {
    /// The `BUFFER[n]` operand of a buffer place.
    fn buffer_operand(p: &Place) -> SrcOperand {
        SrcOperand::new(Register::new(
            RegisterFile::Buffer,
            p.dim.unwrap_or(0) as i32,
        ))
    }

    /// The byte offset a buffer place points at, as one scalar.
    fn buffer_address(&mut self, p: &Place) -> Slot {
        let base = self.b.imm(p.base);
        match p.dynamic {
            None => base,
            Some(d) if p.base == 0 => d,
            Some(d) => self.b.op(Opcode::UADD, 1, &[s(&[d]), s(&[base])])[0],
        }
    }

    /// The number of 32-bit components of a scalar, vector or atomic stored in a buffer.
    fn buffer_components(&self, ty: &TypeInner) -> R<usize> {
        let (n, width) = match ty {
            TypeInner::Scalar(sc) | TypeInner::Atomic(sc) => (1, sc.width),
            TypeInner::Vector { size, scalar } => (*size as usize, scalar.width),
            other => return Err(self.err(format!("buffer access of type {other:?}"))),
        };
        if width != 4 {
            return self.unsupported(format!("{width}-byte values in a storage buffer"));
        }
        Ok(n)
    }

    /// Loads a scalar, vector or atomic from a buffer place.
    pub(super) fn buffer_load(&mut self, p: &Place) -> R<Value> {
        let n = self.buffer_components(&p.ty)?;
        let address = self.buffer_address(p);
        let address = self.b.operand(&[address]);
        let t = self.b.temp();
        let resource = Self::buffer_operand(p);
        self.b.emit(
            Opcode::LOAD,
            Some((t, (1u8 << n) - 1)),
            vec![resource, address],
        );
        Ok(Value::V(slots_of(t, n)))
    }

    /// Stores a scalar, vector or atomic to a buffer place.
    pub(super) fn buffer_store(&mut self, p: &Place, slots: &[Slot]) -> R<()> {
        let n = self.buffer_components(&p.ty)?;
        if slots.len() != n {
            return Err(self.err("stored value does not match the buffer's type"));
        }
        let address = self.buffer_address(p);
        let address = self.b.operand(&[address]);
        let value = self.b.operand(slots);
        let resource = Register::new(RegisterFile::Buffer, p.dim.unwrap_or(0) as i32);
        self.b.emit(
            Opcode::STORE,
            Some((resource, (1u8 << n) - 1)),
            vec![address, value],
        );
        Ok(())
    }

    /// `p[index]` for a buffer place: the element's byte offset grows by `index` strides.
    pub(super) fn buffer_access(&mut self, p: &Place, index: Slot) -> R<Place> {
        let mut q = p.clone();
        let stride = match &*p.ty {
            TypeInner::Vector { scalar, .. } => {
                q.ty = std::rc::Rc::new(TypeInner::Scalar(*scalar));
                u32::from(scalar.width)
            }
            TypeInner::Matrix { rows, scalar, .. } => {
                q.ty = std::rc::Rc::new(TypeInner::Vector {
                    size: *rows,
                    scalar: *scalar,
                });
                super::column_stride(*rows)
            }
            TypeInner::Array { base, stride, .. } => {
                q.ty = self.shared_type(*base);
                *stride
            }
            other => return Err(self.err(format!("cannot index into {other:?}"))),
        };
        let scaled = if stride == 1 {
            index
        } else {
            let k = self.b.imm(stride);
            self.b.op(Opcode::UMUL, 1, &[s(&[index]), s(&[k])])[0]
        };
        q.dynamic = Some(match p.dynamic {
            Some(d) => self.b.op(Opcode::UADD, 1, &[s(&[d]), s(&[scaled])])[0],
            None => scaled,
        });
        Ok(q)
    }

    /// An atomic read-modify-write of a buffer word; binds the old value (and, for a
    /// compare-exchange, whether it swapped) to `result`.
    pub(super) fn atomic(
        &mut self,
        ctx: &mut FnCtx<'a>,
        pointer: Handle<naga::Expression>,
        fun: &naga::AtomicFunction,
        value: Handle<naga::Expression>,
        result: Option<Handle<naga::Expression>>,
    ) -> R<()> {
        let p = match self.eval(ctx, pointer)? {
            Ev::Ptr(p) if p.file == RegisterFile::Buffer => p,
            _ => return self.unsupported("atomic operation outside a storage buffer"),
        };
        let signed = match &*p.ty {
            TypeInner::Atomic(sc) | TypeInner::Scalar(sc) if sc.width == 4 => {
                sc.kind == naga::ScalarKind::Sint
            }
            other => return self.unsupported(format!("atomic operation on {other:?}")),
        };
        let v = self.scalar_value(ctx, value)?;
        use naga::AtomicFunction as F;
        let (op, v, compare) = match fun {
            F::Add => (Opcode::ATOMUADD, v, None),
            F::Subtract => {
                let negated = self.b.op(Opcode::INEG, 1, &[s(&[v])])[0];
                (Opcode::ATOMUADD, negated, None)
            }
            F::And => (Opcode::ATOMAND, v, None),
            F::InclusiveOr => (Opcode::ATOMOR, v, None),
            F::ExclusiveOr => (Opcode::ATOMXOR, v, None),
            F::Min if signed => (Opcode::ATOMIMIN, v, None),
            F::Min => (Opcode::ATOMUMIN, v, None),
            F::Max if signed => (Opcode::ATOMIMAX, v, None),
            F::Max => (Opcode::ATOMUMAX, v, None),
            F::Exchange { compare: None } => (Opcode::ATOMXCHG, v, None),
            F::Exchange { compare: Some(c) } => {
                let c = self.scalar_value(ctx, *c)?;
                (Opcode::ATOMCAS, v, Some(c))
            }
        };
        let address = self.buffer_address(&p);
        let mut srcs = vec![Self::buffer_operand(&p), self.b.operand(&[address])];
        if let Some(c) = compare {
            srcs.push(self.b.operand(&[c]));
        }
        srcs.push(self.b.operand(&[v]));
        let t = self.b.temp();
        self.b.emit(op, Some((t, 1)), srcs);
        let old = Slot { reg: t, comp: 0 };
        if let Some(r) = result {
            let value = match compare {
                Some(c) => {
                    let swapped = self.b.op(Opcode::USEQ, 1, &[s(&[old]), s(&[c])])[0];
                    Value::C(vec![Value::V(vec![old]), Value::V(vec![swapped])])
                }
                None => Value::V(vec![old]),
            };
            ctx.values[r.index()] = Some(Ev::Val(value));
        }
        Ok(())
    }

    /// The first component of a scalar expression.
    fn scalar_value(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Slot> {
        match self.eval(ctx, h)? {
            Ev::Val(Value::V(v)) if !v.is_empty() => Ok(v[0]),
            _ => Err(self.err("expected a scalar")),
        }
    }

    /// The coordinates of a storage-image access: the image's coordinates, then the layer.
    fn image_coords(
        &mut self,
        ctx: &mut FnCtx<'a>,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
    ) -> R<SrcOperand> {
        let mut coords = match self.eval(ctx, coordinate)? {
            Ev::Val(Value::V(v)) if !v.is_empty() => v,
            _ => return Err(self.err("image coordinates are not a vector")),
        };
        if let Some(a) = array_index {
            coords.push(self.scalar_value(ctx, a)?);
        }
        Ok(self.b.operand(&coords))
    }

    /// The storage image an expression names, if it names one.
    pub(super) fn storage_image(
        &mut self,
        ctx: &mut FnCtx<'a>,
        image: Handle<naga::Expression>,
    ) -> R<Option<ImageRef>> {
        Ok(match self.eval(ctx, image)? {
            Ev::Image(i) => Some(i),
            _ => None,
        })
    }

    /// `imageLoad`/`textureLoad` of a storage image: four components.
    pub(super) fn image_load(
        &mut self,
        ctx: &mut FnCtx<'a>,
        image: &ImageRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
    ) -> R<Value> {
        let coords = self.image_coords(ctx, coordinate, array_index)?;
        let t = self.b.temp();
        let resource = SrcOperand::new(Register::new(RegisterFile::Image, image.index as i32));
        self.b
            .emit(Opcode::LOAD, Some((t, 0xF)), vec![resource, coords]);
        Ok(Value::V(slots_of(t, 4)))
    }

    /// `imageStore`/`textureStore`.
    pub(super) fn image_store(
        &mut self,
        ctx: &mut FnCtx<'a>,
        image: Handle<naga::Expression>,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        value: Handle<naga::Expression>,
    ) -> R<()> {
        let Some(image) = self.storage_image(ctx, image)? else {
            return self.unsupported("textureStore to this kind of image");
        };
        let coords = self.image_coords(ctx, coordinate, array_index)?;
        let value = match self.eval(ctx, value)? {
            Ev::Val(Value::V(v)) if !v.is_empty() => v,
            _ => return Err(self.err("stored texel is not a vector")),
        };
        let value = self.b.operand(&value);
        let resource = Register::new(RegisterFile::Image, image.index as i32);
        self.b
            .emit(Opcode::STORE, Some((resource, 0xF)), vec![coords, value]);
        Ok(())
    }
}
