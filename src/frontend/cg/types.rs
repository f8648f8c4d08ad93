//! Cg types, how they map to naga (the naga types are made in `build::naga_types`), and the
//! implicit-conversion costs used for overload resolution.
//!
//! A Cg `floatRxC` (R rows, C columns, indexed by row) is a naga matrix with R columns of
//! C-component vectors: naga's column `i` is Cg's row `i`, so `m[i]` means the same thing in
//! both and `mul(M, v)` is naga's `v * M` (what HLSL compilers do too). `half` and `fixed`
//! are `float` (RetroArch's profiles run them at full precision); `float1` is a scalar.

/// Scalar kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sk {
    /// `float`, `half`, `fixed`, `double`
    F,
    /// `int`
    I,
    /// `uint`
    U,
    /// `bool`
    B,
}

/// Texture dimensionality of a sampler type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `sampler1D`
    D1,
    /// `sampler2D`, `sampler`
    D2,
    /// `samplerRECT` (unnormalized coordinates)
    Rect,
    /// `sampler3D`
    D3,
    /// `samplerCUBE`
    Cube,
}

/// A Cg type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `void`
    Void,
    /// A scalar (also `float1`).
    Scalar(Sk),
    /// A 2–4 component vector.
    Vec(Sk, u8),
    /// A matrix: rows, columns.
    Mat(Sk, u8, u8),
    /// A struct, by index into the struct table.
    Struct(usize),
    /// A fixed-size array.
    Array(Box<Ty>, u32),
    /// A sampler.
    Sampler(Dim),
}

impl Ty {
    /// The scalar kind of a scalar, vector or matrix.
    pub fn kind(&self) -> Option<Sk> {
        match self {
            Ty::Scalar(k) | Ty::Vec(k, _) | Ty::Mat(k, _, _) => Some(*k),
            _ => None,
        }
    }

    /// Number of scalar components (scalars, vectors, matrices).
    pub fn comps(&self) -> Option<u32> {
        match self {
            Ty::Scalar(_) => Some(1),
            Ty::Vec(_, n) => Some(*n as u32),
            Ty::Mat(_, r, c) => Some(*r as u32 * *c as u32),
            _ => None,
        }
    }

    /// The same shape with another scalar kind.
    pub fn with_kind(&self, k: Sk) -> Ty {
        match self {
            Ty::Scalar(_) => Ty::Scalar(k),
            Ty::Vec(_, n) => Ty::Vec(k, *n),
            Ty::Mat(_, r, c) => Ty::Mat(k, *r, *c),
            other => other.clone(),
        }
    }

    /// Whether this is a scalar or vector.
    pub fn is_numeric_vector(&self) -> bool {
        matches!(self, Ty::Scalar(_) | Ty::Vec(..))
    }

    /// A vector of `n` components (`n == 1`: a scalar).
    pub fn vector(k: Sk, n: u8) -> Ty {
        if n == 1 {
            Ty::Scalar(k)
        } else {
            Ty::Vec(k, n)
        }
    }

    /// The type as Cg spells it, for messages (`float4`, `int2x2`, a struct's name, `float[3]`).
    pub fn name(&self, structs: &[StructInfo]) -> String {
        let k = |k: &Sk| match k {
            Sk::F => "float",
            Sk::I => "int",
            Sk::U => "uint",
            Sk::B => "bool",
        };
        match self {
            Ty::Void => "void".into(),
            Ty::Scalar(s) => k(s).into(),
            Ty::Vec(s, n) => format!("{}{n}", k(s)),
            Ty::Mat(s, r, c) => format!("{}{r}x{c}", k(s)),
            Ty::Struct(i) => structs.get(*i).map_or("struct".into(), |s| s.name.clone()),
            Ty::Array(b, n) => format!("{}[{n}]", b.name(structs)),
            Ty::Sampler(d) => match d {
                Dim::D1 => "sampler1D",
                Dim::D2 => "sampler2D",
                Dim::Rect => "samplerRECT",
                Dim::D3 => "sampler3D",
                Dim::Cube => "samplerCUBE",
            }
            .into(),
        }
    }
}

/// A struct type.
#[derive(Clone, Debug)]
pub struct StructInfo {
    /// Its name.
    pub name: String,
    /// Members: name, type, semantic.
    pub members: Vec<(String, Ty, Option<String>)>,
    /// Whether any member (recursively) is a sampler.
    pub has_sampler: bool,
}

/// The built-in type a name denotes (`None` for structs and unknown names).
pub fn builtin_type(name: &str) -> Option<Ty> {
    match name {
        "void" => return Some(Ty::Void),
        "sampler1D" => return Some(Ty::Sampler(Dim::D1)),
        "sampler2D" | "sampler" => return Some(Ty::Sampler(Dim::D2)),
        "samplerRECT" => return Some(Ty::Sampler(Dim::Rect)),
        "sampler3D" => return Some(Ty::Sampler(Dim::D3)),
        "samplerCUBE" => return Some(Ty::Sampler(Dim::Cube)),
        _ => {}
    }
    // GLSL spellings cgc also accepts.
    let glsl = |prefix: &str, k: Sk| -> Option<Ty> {
        let n = name.strip_prefix(prefix)?.as_bytes();
        match n {
            [d] if (b'2'..=b'4').contains(d) => Some(Ty::Vec(k, d - b'0')),
            _ => None,
        }
    };
    if let Some(t) = glsl("vec", Sk::F)
        .or_else(|| glsl("ivec", Sk::I))
        .or_else(|| glsl("uvec", Sk::U))
        .or_else(|| glsl("bvec", Sk::B))
    {
        return Some(t);
    }
    if let Some(m) = name.strip_prefix("mat") {
        let b = m.as_bytes();
        let square = match b {
            [d] => Some(*d),
            [d, b'x', e] if d == e => Some(*d),
            _ => None,
        };
        if let Some(d) = square.filter(|d| (b'2'..=b'4').contains(d)) {
            return Some(Ty::Mat(Sk::F, d - b'0', d - b'0'));
        }
    }
    for (base, k) in [
        ("float", Sk::F),
        ("half", Sk::F),
        ("fixed", Sk::F),
        ("double", Sk::F),
        ("cfloat", Sk::F),
        ("int", Sk::I),
        ("cint", Sk::I),
        ("uint", Sk::U),
        ("bool", Sk::B),
    ] {
        let Some(rest) = name.strip_prefix(base) else {
            continue;
        };
        let r = rest.as_bytes();
        return match r.len() {
            0 => Some(Ty::Scalar(k)),
            1 if (b'1'..=b'4').contains(&r[0]) => Some(Ty::vector(k, r[0] - b'0')),
            3 if (b'1'..=b'4').contains(&r[0]) && r[1] == b'x' && (b'1'..=b'4').contains(&r[2]) => {
                let (rows, cols) = (r[0] - b'0', r[2] - b'0');
                Some(match (rows, cols) {
                    (1, 1) => Ty::Scalar(k),
                    (1, c) => Ty::Vec(k, c),
                    (r, 1) => Ty::Vec(k, r),
                    (r, c) => Ty::Mat(k, r, c),
                })
            }
            _ => None,
        };
    }
    None
}

/// The cost of converting `from` to `to` implicitly, or `None` if Cg does not allow it.
pub fn conversion_cost(from: &Ty, to: &Ty) -> Option<u32> {
    if from == to {
        return Some(0);
    }
    let kind_cost = |a: Sk, b: Sk| -> u32 {
        match (a, b) {
            _ if a == b => 0,
            (Sk::I | Sk::U | Sk::B, Sk::F) => 1,
            _ => 2,
        }
    };
    match (from, to) {
        (Ty::Scalar(a), Ty::Scalar(b)) => Some(kind_cost(*a, *b)),
        (Ty::Scalar(a), Ty::Vec(b, _) | Ty::Mat(b, _, _)) => Some(4 + kind_cost(*a, *b)),
        (Ty::Vec(a, n), Ty::Vec(b, m)) if m <= n => {
            Some(kind_cost(*a, *b) + if m < n { 8 } else { 0 })
        }
        (Ty::Vec(a, _), Ty::Scalar(b)) => Some(10 + kind_cost(*a, *b)),
        (Ty::Mat(a, r, c), Ty::Mat(b, r2, c2)) if r2 <= r && c2 <= c => Some(kind_cost(*a, *b) + 8),
        (Ty::Sampler(_), Ty::Sampler(_)) => Some(6),
        _ => None,
    }
}

/// The common type of two operands of a component-wise operator: the wider scalar kind and
/// the smaller vector (Cg truncates), a scalar promoted to the other's shape.
pub fn common_type(a: &Ty, b: &Ty) -> Option<Ty> {
    let ka = a.kind()?;
    let kb = b.kind()?;
    let rank = |k: Sk| match k {
        Sk::B => 0,
        Sk::U => 1,
        Sk::I => 2,
        Sk::F => 3,
    };
    let mut k = if rank(ka) >= rank(kb) { ka } else { kb };
    if k == Sk::B && (ka != Sk::B || kb != Sk::B) {
        k = Sk::I;
    }
    let shape = match (a, b) {
        (Ty::Scalar(_), x) | (x, Ty::Scalar(_)) => x.clone(),
        (Ty::Vec(_, n), Ty::Vec(_, m)) => Ty::Vec(k, (*n).min(*m)),
        (Ty::Mat(_, r, c), Ty::Mat(_, r2, c2)) if r == r2 && c == c2 => a.clone(),
        _ => return None,
    };
    Some(shape.with_kind(k))
}
