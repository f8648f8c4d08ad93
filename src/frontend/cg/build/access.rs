//! Member access and indexing: struct members, vector swizzles (`xyzw`, `rgba`, `stpq`; a
//! scalar swizzles like a one-component vector), matrix element lists (`_m00_m11`, `_11_22`),
//! and `[i]` on arrays, vectors and matrices (a matrix index is a row). Access through a pointer
//! stays assignable (`V::Ptr`, or `V::Swz` for a swizzle of several components); constant
//! indices are range-checked; a dynamic index into a vector or matrix value goes through a
//! temporary local.

use super::*;

impl Cx<'_> {
    pub(super) fn member(&mut self, base: &Expr, field: &str, pos: Pos) -> R<V> {
        let b = self.expr(base)?;
        if let V::UStruct(k) = b {
            return self.ustruct_member(k, field, pos);
        }
        let bt = match &b {
            V::Val(_, t) | V::Ptr(_, t) => t.clone(),
            V::Swz(_, t, c) => Ty::vector(t.kind().unwrap_or(Sk::F), c.len() as u8),
            V::Samp(_) => return err(pos, format!("a sampler has no member `{field}`")),
            V::UStruct(_) => unreachable!("handled above"),
        };
        match &bt {
            Ty::Struct(i) => {
                let info = &self.structs[*i];
                let Some(idx) = info.members.iter().position(|m| m.0 == field) else {
                    return err(
                        pos,
                        format!("struct `{}` has no member `{field}`", info.name),
                    );
                };
                let mt = info.members[idx].1.clone();
                match b {
                    V::Ptr(p, _) => Ok(V::Ptr(self.access_index(p, idx as u32, pos), mt)),
                    V::Val(h, _) => Ok(V::Val(self.access_index(h, idx as u32, pos), mt)),
                    _ => err(pos, "bad member access"),
                }
            }
            Ty::Scalar(k) | Ty::Vec(k, _) => {
                let n = match &bt {
                    Ty::Vec(_, n) => *n,
                    _ => 1,
                };
                let comps = parse_swizzle(field, n).ok_or_else(|| BuildError {
                    pos,
                    message: format!("`{field}` is not a swizzle of {}", bt.name(&self.structs)),
                })?;
                let k = *k;
                let rt = Ty::vector(k, comps.len() as u8);
                if matches!(bt, Ty::Scalar(_)) {
                    let (h, _) = self.load(b, pos)?;
                    if comps.len() == 1 {
                        return Ok(V::Val(h, rt));
                    }
                    return Ok(V::Val(
                        self.add(
                            E::Splat {
                                size: Self::vsize(comps.len() as u8),
                                value: h,
                            },
                            pos,
                        ),
                        rt,
                    ));
                }
                match b {
                    V::Ptr(p, t) => {
                        if comps.len() == 1 {
                            Ok(V::Ptr(self.access_index(p, comps[0] as u32, pos), rt))
                        } else {
                            Ok(V::Swz(p, t, comps))
                        }
                    }
                    V::Swz(p, t, inner) => {
                        let c: Vec<u8> = comps.iter().map(|&i| inner[i as usize]).collect();
                        if c.len() == 1 {
                            Ok(V::Ptr(self.access_index(p, c[0] as u32, pos), rt))
                        } else {
                            Ok(V::Swz(p, t, c))
                        }
                    }
                    other => {
                        let (h, _) = self.load(other, pos)?;
                        Ok(V::Val(self.swizzle(h, &comps, pos), rt))
                    }
                }
            }
            Ty::Mat(k, r, c) => {
                let els = parse_matrix_swizzle(field, *r, *c).ok_or_else(|| BuildError {
                    pos,
                    message: format!(
                        "`{field}` is not a member or swizzle of {}",
                        bt.name(&self.structs)
                    ),
                })?;
                let k = *k;
                if els.len() == 1 {
                    let (row, col) = els[0];
                    return match b {
                        V::Ptr(p, _) => {
                            let a = self.access_index(p, row as u32, pos);
                            Ok(V::Ptr(self.access_index(a, col as u32, pos), Ty::Scalar(k)))
                        }
                        other => {
                            let (h, _) = self.load(other, pos)?;
                            let a = self.access_index(h, row as u32, pos);
                            Ok(V::Val(self.access_index(a, col as u32, pos), Ty::Scalar(k)))
                        }
                    };
                }
                let (h, _) = self.load(b, pos)?;
                let mut comps = Vec::new();
                for (row, col) in &els {
                    let a = self.access_index(h, *row as u32, pos);
                    comps.push(self.access_index(a, *col as u32, pos));
                }
                let rt = Ty::Vec(k, els.len() as u8);
                let t = self.nty(&rt, pos)?;
                Ok(V::Val(self.compose(t, comps, pos), rt))
            }
            other => err(
                pos,
                format!("{} has no member `{field}`", other.name(&self.structs)),
            ),
        }
    }

    pub(super) fn index(&mut self, base: &Expr, index: &Expr, pos: Pos) -> R<V> {
        let b = self.expr(base)?;
        let (ih, it) = self.rvalue(index)?;
        let ih = match it {
            Ty::Scalar(Sk::I) | Ty::Scalar(Sk::U) => ih,
            Ty::Scalar(k) => self.kind_cast(ih, k, Sk::I, None, index.pos),
            _ => return err(index.pos, "an index must be a scalar"),
        };
        let const_index = match self.fx().func.expressions[ih] {
            E::Literal(Literal::I32(v)) if v >= 0 => Some(v as u32),
            E::Literal(Literal::U32(v)) => Some(v),
            _ => None,
        };
        let b = match b {
            V::Swz(..) | V::UStruct(_) => {
                let (h, t) = self.load(b, pos)?;
                V::Val(h, t)
            }
            other => other,
        };
        let (bt, is_ptr, bh) = match &b {
            V::Val(h, t) => (t.clone(), false, *h),
            V::Ptr(h, t) => (t.clone(), true, *h),
            _ => return err(pos, "this cannot be indexed"),
        };
        let (et, len) = match &bt {
            Ty::Array(e, n) => ((**e).clone(), *n),
            Ty::Vec(k, n) => (Ty::Scalar(*k), *n as u32),
            Ty::Mat(k, r, c) => (Ty::Vec(*k, *c), *r as u32),
            other => {
                return err(
                    pos,
                    format!("{} cannot be indexed", other.name(&self.structs)),
                )
            }
        };
        let h = match const_index {
            Some(i) if i >= len => {
                return err(index.pos, format!("index {i} out of range (size {len})"))
            }
            Some(i) => self.access_index(bh, i, pos),
            None => {
                if !is_ptr && !matches!(bt, Ty::Array(..)) {
                    // Dynamic indexing of a vector/matrix value: go through a temporary.
                    let tmp = self.local("_idx", &bt, pos)?;
                    self.push_stmt(
                        Statement::Store {
                            pointer: tmp,
                            value: bh,
                        },
                        pos,
                    );
                    let h = self.add(
                        E::Access {
                            base: tmp,
                            index: ih,
                        },
                        pos,
                    );
                    return Ok(V::Ptr(h, et));
                }
                self.add(
                    E::Access {
                        base: bh,
                        index: ih,
                    },
                    pos,
                )
            }
        };
        Ok(if is_ptr { V::Ptr(h, et) } else { V::Val(h, et) })
    }
}

/// `xyzw`/`rgba` swizzle of a vector of `n` components.
fn parse_swizzle(s: &str, n: u8) -> Option<Vec<u8>> {
    if s.is_empty() || s.len() > 4 {
        return None;
    }
    let set = |c: char| match c {
        'x' | 'y' | 'z' | 'w' => Some(0),
        'r' | 'g' | 'b' | 'a' => Some(1),
        // cgc accepts GLSL's texture-coordinate names too.
        's' | 't' | 'p' | 'q' => Some(2),
        _ => None,
    };
    let first = set(s.chars().next()?)?;
    let mut out = Vec::new();
    for c in s.chars() {
        if set(c)? != first {
            return None;
        }
        let i = match c {
            'x' | 'r' | 's' => 0,
            'y' | 'g' | 't' => 1,
            'z' | 'b' | 'p' => 2,
            _ => 3,
        };
        if i >= n.max(1) {
            return None;
        }
        out.push(i);
    }
    Some(out)
}

/// `_m00_m11` (zero-based) or `_11_22` (one-based) matrix element lists.
fn parse_matrix_swizzle(s: &str, rows: u8, cols: u8) -> Option<Vec<(u8, u8)>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        rest = rest.strip_prefix('_')?;
        let (zero_based, r) = match rest.strip_prefix('m') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let b = r.as_bytes();
        if b.len() < 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_digit() {
            return None;
        }
        let (mut i, mut j) = (b[0] - b'0', b[1] - b'0');
        if !zero_based {
            if i == 0 || j == 0 {
                return None;
            }
            i -= 1;
            j -= 1;
        }
        if i >= rows || j >= cols {
            return None;
        }
        out.push((i, j));
        rest = &r[2..];
        if out.len() > 4 {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}
