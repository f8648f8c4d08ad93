//! The entry point's stage interface. Vertex inputs: `POSITION` → location 0, every
//! `TEXCOORDn` → location 1 (RetroArch supplies one texcoord attribute), both read as vec4;
//! `COLOR` is opaque white. Varyings: `TEXCOORDn` → location n, `COLOR0`/`COLOR1` → 16/17,
//! `POSITION` → the position built-in; float varyings without a semantic that both entry points
//! declare are linked by name (locations from 32 in sorted name order), as cgc's GLSL profiles
//! do. Fragment `COLOR` → location 0, `DEPTH` → depth. Input parameters are copied into locals;
//! the outputs (the returned value or struct and the `out` parameters) are gathered into one
//! output struct at every `return`.

use super::*;

const TEXCOORD_LOCATION_BASE: u32 = 0;
const COLOR_LOCATION: u32 = 16;
/// First location of varyings without a semantic (numbered by name, sorted).
const AUTO_LOCATION_BASE: u32 = 32;

impl Cx<'_> {
    /// Names of float varyings without semantics that both entry points declare (vertex
    /// outputs and fragment inputs), sorted.
    pub(super) fn find_auto_varyings(&self) -> Vec<String> {
        let mut sides: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        for item in self.items {
            let Item::Func(f) = item else { continue };
            let side = match f.name.as_str() {
                "main_vertex" => 0,
                "main_fragment" => 1,
                _ => continue,
            };
            if f.body.is_none() {
                continue;
            }
            let add = |name: &str,
                       ty: &Ty,
                       sem: &Option<String>,
                       this: &Self,
                       out: &mut Vec<String>| {
                match ty {
                    Ty::Struct(i) if sem.is_none() => {
                        for (mn, mt, ms) in &this.structs[*i].members {
                            if ms.is_none() && mt.kind() == Some(Sk::F) && mt.is_numeric_vector() {
                                out.push(mn.clone());
                            }
                        }
                    }
                    t if sem.is_none() && t.kind() == Some(Sk::F) && t.is_numeric_vector() => {
                        out.push(name.to_string())
                    }
                    _ => {}
                }
            };
            let mut names = Vec::new();
            for p in &f.params {
                let Ok(t) = self.resolve_type(&p.ty) else {
                    continue;
                };
                let is_varying_in = side == 1 && !p.quals.uniform && !p.quals.is_out;
                let is_out = side == 0 && p.quals.is_out;
                if (is_varying_in || is_out) && Self::ukind(&p.name).is_none() {
                    add(&p.name, &t, &p.semantic, self, &mut names);
                }
            }
            if side == 0 {
                if let Ok(t @ Ty::Struct(_)) = self.resolve_type(&f.ret) {
                    add("", &t, &None, self, &mut names);
                }
            }
            sides[side] = names;
        }
        let mut out: Vec<String> = sides[0]
            .iter()
            .filter(|n| sides[1].contains(n))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Where a varying with `semantic` lives: a location or the position built-in.
    fn varying_binding(&self, semantic: &str, output: bool, pos: Pos) -> R<Option<naga::Binding>> {
        let s = semantic.to_ascii_uppercase();
        let loc = |l: u32| {
            Some(naga::Binding::Location {
                location: l,
                interpolation: Some(naga::Interpolation::Perspective),
                sampling: Some(naga::Sampling::Center),
                blend_src: None,
                per_primitive: false,
            })
        };
        let num = |p: &str| -> Option<u32> {
            let r = s.strip_prefix(p)?;
            if r.is_empty() {
                Some(0)
            } else {
                r.parse().ok()
            }
        };
        if self.stage == StageKind::Fragment && output {
            return Ok(match s.as_str() {
                "COLOR" | "COLOR0" | "COL" | "COL0" => Some(naga::Binding::Location {
                    location: 0,
                    interpolation: None,
                    sampling: None,
                    blend_src: None,
                    per_primitive: false,
                }),
                "DEPTH" | "DEPR" => Some(naga::Binding::BuiltIn(naga::BuiltIn::FragDepth)),
                _ => {
                    return err(
                        pos,
                        format!(
                            "fragment output semantic `{semantic}` is not supported (COLOR, DEPTH)"
                        ),
                    )
                }
            });
        }
        if let Some(name) = semantic.strip_prefix('@') {
            // A varying without a semantic: cgc's GLSL profiles link these by name.
            return Ok(self
                .auto_varyings
                .iter()
                .position(|n| n.eq_ignore_ascii_case(name))
                .and_then(|i| loc(AUTO_LOCATION_BASE + i as u32)));
        }
        if s == "POSITION" || s == "HPOS" || s == "POS" || s == "WPOS" || s == "SV_POSITION" {
            return Ok(Some(naga::Binding::BuiltIn(naga::BuiltIn::Position {
                invariant: false,
            })));
        }
        if let Some(n) = num("TEXCOORD").or_else(|| num("TEX")) {
            if n > 15 {
                return err(pos, format!("`{semantic}`: TEXCOORD0..15 only"));
            }
            return Ok(loc(TEXCOORD_LOCATION_BASE + n));
        }
        if let Some(n) = num("COLOR").or_else(|| num("COL")) {
            if n > 1 {
                return err(pos, format!("`{semantic}`: COLOR0/COLOR1 only"));
            }
            return Ok(loc(COLOR_LOCATION + n));
        }
        if matches!(s.as_str(), "PSIZE" | "FOG" | "FOGC" | "PSIZ") {
            return Ok(None);
        }
        err(
            pos,
            format!("varying semantic `{semantic}` is not supported"),
        )
    }

    /// The semantic of a varying: its own, or `@name` for a float varying without one.
    fn auto_semantic(&self, semantic: Option<&str>, name: &str, ty: &Ty) -> Option<String> {
        match semantic {
            Some(s) => Some(s.to_string()),
            None if ty.kind() == Some(Sk::F) && ty.is_numeric_vector() => self
                .auto_varyings
                .iter()
                .any(|n| n == name)
                .then(|| format!("@{name}")),
            None => None,
        }
    }

    pub(super) fn entry_body(&mut self, f: &FuncDecl, ret: &Ty) -> R<()> {
        let body = f.body.as_ref().expect("checked");
        // 1. Inputs.
        let mut args: Vec<naga::FunctionArgument> = Vec::new();
        let mut arg_of: HashMap<String, u32> = HashMap::new();
        let vec4 = self.nty(&Ty::Vec(Sk::F, 4), f.pos)?;
        let mut input =
            |cx: &mut Self, semantic: Option<&str>, ty: &Ty, pos: Pos| -> R<Handle<E>> {
                let sem = semantic.map(|s| s.to_ascii_uppercase());
                match (cx.stage, sem.as_deref()) {
                    (_, None) => cx.zero(ty, pos),
                    (StageKind::Vertex, Some(s)) => {
                        let is_pos = matches!(s, "POSITION" | "POS" | "ATTR0" | "VERTEX");
                        let is_tc =
                            s.starts_with("TEXCOORD") || s.starts_with("TEX") || s == "ATTR8";
                        if s.starts_with("COLOR") || s.starts_with("COL") || s == "DIFFUSE" {
                            // RetroArch's vertex colour is opaque white.
                            let one = cx.lit_f(1.0, pos);
                            let v = cx.add(
                                E::Splat {
                                    size: naga::VectorSize::Quad,
                                    value: one,
                                },
                                pos,
                            );
                            return cx.convert(v, &Ty::Vec(Sk::F, 4), ty, pos, true);
                        }
                        if !is_pos && !is_tc {
                            return cx.zero(ty, pos);
                        }
                        let key = if is_pos { "pos" } else { "tc" };
                        let location = if is_pos { 0 } else { 1 };
                        let index = match arg_of.get(key) {
                            Some(i) => *i,
                            None => {
                                args.push(naga::FunctionArgument {
                                    name: Some(if is_pos {
                                        "position".into()
                                    } else {
                                        "texcoord".into()
                                    }),
                                    ty: vec4,
                                    binding: Some(naga::Binding::Location {
                                        location,
                                        interpolation: None,
                                        sampling: None,
                                        blend_src: None,
                                        per_primitive: false,
                                    }),
                                });
                                arg_of.insert(key.into(), args.len() as u32 - 1);
                                args.len() as u32 - 1
                            }
                        };
                        let h = cx.add(E::FunctionArgument(index), pos);
                        if is_pos {
                            cx.position = Some(h);
                        } else {
                            cx.texcoord = Some(h);
                        }
                        cx.convert(h, &Ty::Vec(Sk::F, 4), ty, pos, true)
                    }
                    (StageKind::Fragment, Some(s)) => {
                        let Some(binding) = cx.varying_binding(s, false, pos)? else {
                            return cx.zero(ty, pos);
                        };
                        let is_pos = matches!(binding, naga::Binding::BuiltIn(_));
                        let key = s.to_string();
                        let ity = if is_pos {
                            Ty::Vec(Sk::F, 4)
                        } else {
                            ty.clone()
                        };
                        if !ity.is_numeric_vector() || ity.kind() != Some(Sk::F) {
                            return err(
                                pos,
                                format!("varying `{s}` must be a float scalar or vector"),
                            );
                        }
                        let index = match arg_of.get(&key) {
                            Some(i) => *i,
                            None => {
                                let t = cx.nty(&ity, pos)?;
                                args.push(naga::FunctionArgument {
                                    name: Some(s.to_ascii_lowercase()),
                                    ty: t,
                                    binding: Some(binding),
                                });
                                arg_of.insert(key, args.len() as u32 - 1);
                                args.len() as u32 - 1
                            }
                        };
                        let h = cx.add(E::FunctionArgument(index), pos);
                        cx.convert(h, &ity, ty, pos, true)
                    }
                }
            };
        // Vertex: find the texcoord first so ORIG.tex_coord works whatever the order.
        let mut out_params = Vec::new();
        let mut pending: Vec<(String, Ty, Handle<E>, Pos)> = Vec::new();
        for p in &f.params {
            let pt = self.resolve_type(&p.ty)?;
            // RetroArch binds struct members by name (`NAME.texture`, `NAME.video_size`), with or
            // without `uniform`, and a struct holding a sampler cannot be a varying.
            let bound_struct = matches!(pt, Ty::Struct(_))
                && !p.quals.is_out
                && (Self::ukind(&p.name).is_some() || self.contains_sampler(&pt));
            if p.quals.uniform || matches!(pt, Ty::Sampler(_)) || bound_struct {
                let s = self.uniform_sym(&p.name, &pt, p.semantic.as_deref())?;
                self.declare(&p.name, s);
                continue;
            }
            if p.quals.is_out {
                out_params.push((p.clone(), pt));
                continue;
            }
            let value = match &pt {
                Ty::Struct(i) if p.semantic.is_none() => {
                    let members = self.structs[*i].members.clone();
                    let mut comps = Vec::new();
                    for (mn, mt, ms) in &members {
                        let sem = self.auto_semantic(ms.as_deref(), mn, mt);
                        comps.push(input(self, sem.as_deref(), mt, p.pos)?);
                    }
                    let t = self.nty(&pt, p.pos)?;
                    self.compose(t, comps, p.pos)
                }
                _ => {
                    let sem = self.auto_semantic(p.semantic.as_deref(), &p.name, &pt);
                    input(self, sem.as_deref(), &pt, p.pos)?
                }
            };
            pending.push((p.name.clone(), pt, value, p.pos));
        }
        if self.stage == StageKind::Vertex && self.texcoord.is_none() {
            // ORIG.tex_coord and friends read the texcoord attribute even when the entry
            // point does not take it.
            input(self, Some("TEXCOORD0"), &Ty::Vec(Sk::F, 4), f.pos)?;
        }
        if self.stage == StageKind::Vertex
            && self.position.is_none()
            && reads_member(self.items, "vertex_coord")
        {
            // `IN.vertex_coord` is RetroArch's position attribute, as `POSITION` is.
            input(self, Some("POSITION"), &Ty::Vec(Sk::F, 4), f.pos)?;
        }
        self.fx().func.arguments = args;
        for (name, t, v, pos) in pending {
            let l = self.local(&name, &t, pos)?;
            self.push_stmt(
                Statement::Store {
                    pointer: l,
                    value: v,
                },
                pos,
            );
            self.declare(&name, Sym::Var(l, t));
        }
        // 2. Outputs.
        let mut names = Vec::new();
        let mut tys = Vec::new();
        let mut bindings: Vec<naga::Binding> = Vec::new();
        let mut sources = Vec::new();
        let mut add_out =
            |cx: &Self, sem: Option<&str>, name: &str, t: &Ty, src: OutSource, pos: Pos| -> R<()> {
                let auto = cx.auto_semantic(sem, name, t);
                let Some(sem) = auto.as_deref() else {
                    return Ok(());
                };
                let Some(b) = cx.varying_binding(sem, true, pos)? else {
                    return Ok(());
                };
                if bindings.contains(&b) {
                    return Ok(());
                }
                let t = match (&b, t) {
                    (naga::Binding::BuiltIn(naga::BuiltIn::Position { .. }), _) => {
                        Ty::Vec(Sk::F, 4)
                    }
                    (_, t) if t.is_numeric_vector() => t.with_kind(Sk::F),
                    _ => return err(pos, format!("output `{name}` must be a scalar or vector")),
                };
                names.push(name.to_string());
                tys.push(t);
                bindings.push(b);
                sources.push(src);
                Ok(())
            };
        match ret {
            Ty::Void => {}
            Ty::Struct(i) => {
                let members = self.structs[*i].members.clone();
                for (mi, (mn, mt, ms)) in members.iter().enumerate() {
                    add_out(
                        self,
                        ms.as_deref(),
                        mn,
                        mt,
                        OutSource::Ret(vec![mi as u32]),
                        f.pos,
                    )?;
                }
            }
            t => {
                let sem = f
                    .semantic
                    .as_deref()
                    .or(if self.stage == StageKind::Fragment {
                        Some("COLOR")
                    } else {
                        None
                    });
                add_out(self, sem, "result", t, OutSource::Ret(Vec::new()), f.pos)?;
            }
        }
        for (p, pt) in &out_params {
            let l = self.local(&p.name, pt, p.pos)?;
            self.declare(&p.name, Sym::Var(l, pt.clone()));
            match pt {
                Ty::Struct(i) if p.semantic.is_none() => {
                    let members = self.structs[*i].members.clone();
                    for (mi, (mn, mt, ms)) in members.iter().enumerate() {
                        add_out(
                            self,
                            ms.as_deref(),
                            mn,
                            mt,
                            OutSource::Param(l, vec![mi as u32]),
                            p.pos,
                        )?;
                    }
                }
                _ => add_out(
                    self,
                    p.semantic.as_deref(),
                    &p.name,
                    pt,
                    OutSource::Param(l, Vec::new()),
                    p.pos,
                )?,
            }
        }
        if names.is_empty() {
            return err(f.pos, format!("`{}` has no outputs with semantics", f.name));
        }
        let out_ty = self.struct_of(
            Some(format!("{}_out", f.name)),
            &names,
            &tys,
            Some(bindings),
            f.pos,
        )?;
        self.fx().func.result = Some(naga::FunctionResult {
            ty: out_ty,
            binding: None,
        });
        self.fx().entry = Some(EntryOut {
            ty: out_ty,
            sources,
            out_tys: tys,
        });
        // 3. Globals with initializers.
        self.init_globals()?;
        for s in body {
            self.stmt(s)?;
        }
        if ret == &Ty::Void && !ends_with_return(self.fx().blocks.last().expect("root")) {
            let v = self.entry_outputs(None, f.pos)?;
            self.push_stmt(Statement::Return { value: Some(v) }, f.pos);
        }
        self.flush();
        Ok(())
    }

    pub(super) fn entry_outputs(&mut self, value: Option<Handle<E>>, pos: Pos) -> R<Handle<E>> {
        let (ty, sources, tys) = {
            let e = self.fx().entry.as_ref().expect("entry");
            (e.ty, e.sources.clone(), e.out_tys.clone())
        };
        let ret = self.fx().ret.clone();
        let mut comps = Vec::new();
        for (src, t) in sources.iter().zip(&tys) {
            let (mut h, mut ht) = match src {
                OutSource::Ret(_) => (
                    value.ok_or_else(|| BuildError {
                        pos,
                        message: "missing return value".into(),
                    })?,
                    ret.clone(),
                ),
                OutSource::Param(l, _) => {
                    let lt = self.local_type(*l);
                    (self.add(E::Load { pointer: *l }, pos), lt)
                }
            };
            let path = match src {
                OutSource::Ret(p) | OutSource::Param(_, p) => p,
            };
            for &i in path {
                h = self.access_index(h, i, pos);
                ht = match ht {
                    Ty::Struct(si) => self.structs[si].members[i as usize].1.clone(),
                    other => other,
                };
            }
            comps.push(self.convert(h, &ht, t, pos, true)?);
        }
        Ok(self.compose(ty, comps, pos))
    }
}
