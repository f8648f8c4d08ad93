//! Rewrites of Slang's SPIR-V that let naga's SPIR-V reader (30.0) take shaders it would refuse,
//! run before the passes every SPIR-V stage goes through (`vulkan_glsl::spirv_to_naga`):
//!
//! - **Input attachments** (`SubpassInput`, `subpassLoad`): naga has no `SubpassData` image
//!   dimension. An input attachment read is, by Vulkan's definition, a texel fetch of the
//!   attachment at the fragment's own pixel plus a constant offset, so each `SubpassData` image
//!   type becomes a sampled 2D image and each `OpImageRead` of one an `OpImageFetch` at
//!   `offset + int2(FragCoord.xy)`, level 0. softgpu binds the attachment as the texture at its
//!   binding.
//! - **Storage images without a format** (`RWTexture2D<float4>` declares none): naga's reader
//!   refuses every such image type, even one only another entry point of the module touches. Each
//!   gets the four-channel 32-bit format of its texel type (`Rgba32f`, `Rgba32i`, `Rgba32ui`),
//!   which holds every value a read or write of it can carry; the lowering then names the image
//!   where the entry point uses it.
//! - **Rasterizer-ordered views** (`RasterizerOrderedTexture2D`, `RasterizerOrderedBuffer`:
//!   `SPV_EXT_fragment_shader_interlock`, which naga's reader refuses): the extension, its
//!   capabilities and execution modes and the `OpBegin/EndInvocationInterlockEXT` around the
//!   critical section are removed, leaving ordinary storage images and buffers. softgpu already
//!   gives what the interlock asks for: every pixel lies in one tile, and a tile shades its
//!   fragments one at a time in primitive order (see `raster::tile`), so the fragments of one
//!   pixel run their critical sections exclusively and in primitive order.
//! - **Coordinate vectors of arrayed images**: naga's reader splits the layer off the
//!   coordinates of an arrayed image and looks up the vector type of the remaining ones, which
//!   Slang need not have declared (a `Texture2DArray` read with `int3` coordinates and no `int2`
//!   anywhere), and panics without it. Every 32-bit scalar type gets its two- and
//!   three-component vector types.
//! - **Vertex shaders that write no position** (a `[shader("vertex")]` function returning only
//!   varyings, or nothing): naga requires a position output. Vulkan leaves the position of such a
//!   shader undefined; it gets a `Position` output holding (0, 0, 0, 0), a point every primitive
//!   clips away, so it draws nothing (and lowers with its other outputs intact).

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{
    BuiltIn, Capability, Decoration, Dim, ExecutionMode, ExecutionModel, ImageFormat,
    ImageOperands, Op, StorageClass, Word,
};

use crate::frontend::vulkan_glsl::spirv_ids::{id, lit, result_types, Ids};

/// Applies every rewrite of this module to `module`.
pub fn rewrite(module: &mut Module) -> Result<(), String> {
    drop_fragment_interlock(module);
    declare_coordinate_vectors(module);
    give_storage_images_formats(module);
    give_vertex_shaders_a_position(module);
    input_attachments_to_fetches(module)
}

/// Removes `SPV_EXT_fragment_shader_interlock` from `module` (see the module documentation).
fn drop_fragment_interlock(module: &mut Module) {
    module.extensions.retain(|e| {
        !matches!(e.operands.first(),
            Some(Operand::LiteralString(name)) if name == "SPV_EXT_fragment_shader_interlock")
    });
    module.capabilities.retain(|c| {
        !matches!(
            c.operands.first(),
            Some(Operand::Capability(
                Capability::FragmentShaderPixelInterlockEXT
                    | Capability::FragmentShaderSampleInterlockEXT
                    | Capability::FragmentShaderShadingRateInterlockEXT
            ))
        )
    });
    module.execution_modes.retain(|m| {
        !matches!(
            m.operands.get(1),
            Some(Operand::ExecutionMode(
                ExecutionMode::PixelInterlockOrderedEXT
                    | ExecutionMode::PixelInterlockUnorderedEXT
                    | ExecutionMode::SampleInterlockOrderedEXT
                    | ExecutionMode::SampleInterlockUnorderedEXT
                    | ExecutionMode::ShadingRateInterlockOrderedEXT
                    | ExecutionMode::ShadingRateInterlockUnorderedEXT
            ))
        )
    });
    for block in module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
    {
        block.instructions.retain(|i| {
            !matches!(
                i.class.opcode,
                Op::BeginInvocationInterlockEXT | Op::EndInvocationInterlockEXT
            )
        });
    }
}

/// Declares the two- and three-component vectors of every 32-bit scalar type of `module` (see
/// the module documentation).
fn declare_coordinate_vectors(module: &mut Module) {
    let scalars: Vec<Word> = module
        .types_global_values
        .iter()
        .filter(|i| {
            matches!(i.class.opcode, Op::TypeInt | Op::TypeFloat)
                && i.operands.first() == Some(&Operand::LiteralBit32(32))
                // A float with an encoding operand is not an IEEE single.
                && (i.class.opcode == Op::TypeInt || i.operands.len() == 1)
        })
        .filter_map(|i| i.result_id)
        .collect();
    if scalars.is_empty() {
        return;
    }
    let mut ids = Ids::after(module);
    for scalar in scalars {
        for n in [2, 3] {
            type_id(
                module,
                &mut ids,
                Op::TypeVector,
                vec![Operand::IdRef(scalar), Operand::LiteralBit32(n)],
            );
        }
    }
    ids.finish(module);
}

/// Adds a `Position` output holding zeros to a module whose vertex entry point writes none.
fn give_vertex_shaders_a_position(module: &mut Module) {
    let has_position = module.annotations.iter().any(|d| {
        let builtin = match d.class.opcode {
            Op::Decorate => 1,
            Op::MemberDecorate => 2,
            _ => return false,
        };
        d.operands.get(builtin) == Some(&Operand::Decoration(Decoration::BuiltIn))
            && d.operands.get(builtin + 1) == Some(&Operand::BuiltIn(BuiltIn::Position))
    });
    let vertex_functions: Vec<Word> = module
        .entry_points
        .iter()
        .filter(|e| e.operands.first() == Some(&Operand::ExecutionModel(ExecutionModel::Vertex)))
        .filter_map(|e| id(e.operands.get(1)))
        .collect();
    if has_position || vertex_functions.is_empty() {
        return;
    }
    let mut ids = Ids::after(module);
    let float = type_id(
        module,
        &mut ids,
        Op::TypeFloat,
        vec![Operand::LiteralBit32(32)],
    );
    let vec4 = type_id(
        module,
        &mut ids,
        Op::TypeVector,
        vec![Operand::IdRef(float), Operand::LiteralBit32(4)],
    );
    let pointer = type_id(
        module,
        &mut ids,
        Op::TypePointer,
        vec![
            Operand::StorageClass(StorageClass::Output),
            Operand::IdRef(vec4),
        ],
    );
    let zeros = ids.fresh();
    module.types_global_values.push(Instruction::new(
        Op::ConstantNull,
        Some(vec4),
        Some(zeros),
        Vec::new(),
    ));
    let var = ids.fresh();
    module.types_global_values.push(Instruction::new(
        Op::Variable,
        Some(pointer),
        Some(var),
        vec![Operand::StorageClass(StorageClass::Output)],
    ));
    module.annotations.push(Instruction::new(
        Op::Decorate,
        None,
        None,
        vec![
            Operand::IdRef(var),
            Operand::Decoration(Decoration::BuiltIn),
            Operand::BuiltIn(BuiltIn::Position),
        ],
    ));
    for entry in &mut module.entry_points {
        if entry.operands.first() == Some(&Operand::ExecutionModel(ExecutionModel::Vertex)) {
            entry.operands.push(Operand::IdRef(var));
        }
    }
    for function in &mut module.functions {
        let is_entry = function
            .def
            .as_ref()
            .and_then(|d| d.result_id)
            .is_some_and(|f| vertex_functions.contains(&f));
        let Some(first) = function.blocks.first_mut().filter(|_| is_entry) else {
            continue;
        };
        // After the block's variables, which must come first.
        let at = first
            .instructions
            .iter()
            .position(|i| i.class.opcode != Op::Variable)
            .unwrap_or(first.instructions.len());
        first.instructions.insert(
            at,
            Instruction::new(
                Op::Store,
                None,
                None,
                vec![Operand::IdRef(var), Operand::IdRef(zeros)],
            ),
        );
    }
    ids.finish(module);
}

/// The scalar type of a sampled type id: `Some(true)` signed int, `Some(false)` unsigned int,
/// `None` float (or unknown).
fn int_signedness(module: &Module, ty: Word) -> Option<bool> {
    let def = module
        .types_global_values
        .iter()
        .find(|i| i.result_id == Some(ty))?;
    match def.class.opcode {
        Op::TypeInt => Some(lit(def.operands.get(1)) == Some(1)),
        _ => None,
    }
}

/// Gives every storage image type (`Sampled` 2) without a format the four-channel 32-bit format
/// of its texel type.
fn give_storage_images_formats(module: &mut Module) {
    let mut formats = Vec::new();
    for (k, inst) in module.types_global_values.iter().enumerate() {
        if inst.class.opcode != Op::TypeImage {
            continue;
        }
        let sampled = lit(inst.operands.get(5));
        let unknown = matches!(
            inst.operands.get(6),
            Some(Operand::ImageFormat(ImageFormat::Unknown))
        );
        let depth = lit(inst.operands.get(2));
        if sampled != Some(2) || !unknown || depth == Some(1) {
            continue;
        }
        let format = match id(inst.operands.first()).and_then(|t| int_signedness(module, t)) {
            Some(true) => ImageFormat::Rgba32i,
            Some(false) => ImageFormat::Rgba32ui,
            None => ImageFormat::Rgba32f,
        };
        formats.push((k, format));
    }
    for (k, format) in formats {
        module.types_global_values[k].operands[6] = Operand::ImageFormat(format);
    }
}

/// Finds a type instruction with `opcode` and `operands`, or appends one.
fn type_id(module: &mut Module, ids: &mut Ids, opcode: Op, operands: Vec<Operand>) -> Word {
    if let Some(found) = module
        .types_global_values
        .iter()
        .find(|i| i.class.opcode == opcode && i.operands == operands)
        .and_then(|i| i.result_id)
    {
        return found;
    }
    let new = ids.fresh();
    module
        .types_global_values
        .push(Instruction::new(opcode, None, Some(new), operands));
    new
}

/// The entry points' `FragCoord` input variable, declared (and added to every fragment entry
/// point's interface) when the module has none.
fn frag_coord(module: &mut Module, ids: &mut Ids, vec4: Word) -> Word {
    let existing = module.annotations.iter().find_map(|d| {
        let builtin = d.class.opcode == Op::Decorate
            && d.operands.get(1) == Some(&Operand::Decoration(Decoration::BuiltIn))
            && d.operands.get(2) == Some(&Operand::BuiltIn(BuiltIn::FragCoord));
        builtin.then(|| id(d.operands.first())).flatten()
    });
    if let Some(var) = existing {
        return var;
    }
    let pointer = type_id(
        module,
        ids,
        Op::TypePointer,
        vec![
            Operand::StorageClass(StorageClass::Input),
            Operand::IdRef(vec4),
        ],
    );
    let var = ids.fresh();
    module.types_global_values.push(Instruction::new(
        Op::Variable,
        Some(pointer),
        Some(var),
        vec![Operand::StorageClass(StorageClass::Input)],
    ));
    module.annotations.push(Instruction::new(
        Op::Decorate,
        None,
        None,
        vec![
            Operand::IdRef(var),
            Operand::Decoration(Decoration::BuiltIn),
            Operand::BuiltIn(BuiltIn::FragCoord),
        ],
    ));
    for entry in &mut module.entry_points {
        if entry.operands.first() == Some(&Operand::ExecutionModel(ExecutionModel::Fragment)) {
            entry.operands.push(Operand::IdRef(var));
        }
    }
    var
}

/// Turns `SubpassData` images into sampled 2D images and their reads into texel fetches at the
/// fragment's pixel (see the module documentation).
fn input_attachments_to_fetches(module: &mut Module) -> Result<(), String> {
    let mut subpass_types = Vec::new();
    for inst in &mut module.types_global_values {
        if inst.class.opcode == Op::TypeImage
            && inst.operands.get(1) == Some(&Operand::Dim(Dim::DimSubpassData))
        {
            inst.operands[1] = Operand::Dim(Dim::Dim2D);
            inst.operands[5] = Operand::LiteralBit32(1);
            inst.operands[6] = Operand::ImageFormat(ImageFormat::Unknown);
            if let Some(t) = inst.result_id {
                subpass_types.push(t);
            }
        }
    }
    if subpass_types.is_empty() {
        return Ok(());
    }
    let types = result_types(module);
    let reads: Vec<(usize, usize, usize)> = module
        .functions
        .iter()
        .enumerate()
        .flat_map(|(f, func)| {
            func.blocks.iter().enumerate().flat_map(move |(b, block)| {
                block
                    .instructions
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| i.class.opcode == Op::ImageRead)
                    .map(move |(k, _)| (f, b, k))
            })
        })
        .filter(|&(f, b, k)| {
            let read = &module.functions[f].blocks[b].instructions[k];
            id(read.operands.first())
                .and_then(|image| types.get(&image))
                .is_some_and(|t| subpass_types.contains(t))
        })
        .collect();
    if reads.is_empty() {
        return Ok(());
    }
    let mut ids = Ids::after(module);
    let float = type_id(
        module,
        &mut ids,
        Op::TypeFloat,
        vec![Operand::LiteralBit32(32)],
    );
    let vec4 = type_id(
        module,
        &mut ids,
        Op::TypeVector,
        vec![Operand::IdRef(float), Operand::LiteralBit32(4)],
    );
    let vec2 = type_id(
        module,
        &mut ids,
        Op::TypeVector,
        vec![Operand::IdRef(float), Operand::LiteralBit32(2)],
    );
    let int = type_id(
        module,
        &mut ids,
        Op::TypeInt,
        vec![Operand::LiteralBit32(32), Operand::LiteralBit32(1)],
    );
    let zero = ids.fresh();
    module.types_global_values.push(Instruction::new(
        Op::Constant,
        Some(int),
        Some(zero),
        vec![Operand::LiteralBit32(0)],
    ));
    let coord_var = frag_coord(module, &mut ids, vec4);
    // Later reads of a block first, so earlier indices stay valid while instructions go in.
    for &(f, b, k) in reads.iter().rev() {
        let read = module.functions[f].blocks[b].instructions[k].clone();
        let offset =
            id(read.operands.get(1)).ok_or("an input attachment read has no coordinate")?;
        let offset_type = *types
            .get(&offset)
            .ok_or("an input attachment read's coordinate has no type")?;
        let signed = module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(offset_type))
            .and_then(|v| id(v.operands.first()))
            .and_then(|scalar| int_signedness(module, scalar))
            .ok_or("an input attachment read's coordinate is not an integer vector")?;
        let (frag, xy, pixel, coord) = (ids.fresh(), ids.fresh(), ids.fresh(), ids.fresh());
        let mut before = vec![
            Instruction::new(
                Op::Load,
                Some(vec4),
                Some(frag),
                vec![Operand::IdRef(coord_var)],
            ),
            Instruction::new(
                Op::VectorShuffle,
                Some(vec2),
                Some(xy),
                vec![
                    Operand::IdRef(frag),
                    Operand::IdRef(frag),
                    Operand::LiteralBit32(0),
                    Operand::LiteralBit32(1),
                ],
            ),
            Instruction::new(
                if signed {
                    Op::ConvertFToS
                } else {
                    Op::ConvertFToU
                },
                Some(offset_type),
                Some(pixel),
                vec![Operand::IdRef(xy)],
            ),
            Instruction::new(
                Op::IAdd,
                Some(offset_type),
                Some(coord),
                vec![Operand::IdRef(offset), Operand::IdRef(pixel)],
            ),
        ];
        let mut operands = vec![read.operands[0].clone(), Operand::IdRef(coord)];
        match read.operands.get(2) {
            // A multisampled attachment keeps its sample operand (and stays a multisampled
            // image, which the lowering names).
            Some(Operand::ImageOperands(bits)) if *bits == ImageOperands::SAMPLE => {
                operands.extend(read.operands[2..].iter().cloned());
            }
            None => operands.extend([
                Operand::ImageOperands(ImageOperands::LOD),
                Operand::IdRef(zero),
            ]),
            Some(other) => {
                return Err(format!(
                    "an input attachment read with image operands {other:?}"
                ))
            }
        }
        // naga's fetches return four components; a narrower read takes the first ones.
        let result_type = read
            .result_type
            .ok_or("an input attachment read has no type")?;
        let result_def = module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(result_type))
            .ok_or("an input attachment read's type is not declared")?;
        let (scalar, width) = match result_def.class.opcode {
            Op::TypeVector => (
                id(result_def.operands.first()).ok_or("a vector type without a component")?,
                lit(result_def.operands.get(1)).unwrap_or(4),
            ),
            _ => (result_type, 1),
        };
        if width == 4 {
            before.push(Instruction::new(
                Op::ImageFetch,
                read.result_type,
                read.result_id,
                operands,
            ));
        } else {
            let wide_type = type_id(
                module,
                &mut ids,
                Op::TypeVector,
                vec![Operand::IdRef(scalar), Operand::LiteralBit32(4)],
            );
            let wide = ids.fresh();
            before.push(Instruction::new(
                Op::ImageFetch,
                Some(wide_type),
                Some(wide),
                operands,
            ));
            before.push(if width == 1 {
                Instruction::new(
                    Op::CompositeExtract,
                    read.result_type,
                    read.result_id,
                    vec![Operand::IdRef(wide), Operand::LiteralBit32(0)],
                )
            } else {
                let mut shuffle = vec![Operand::IdRef(wide), Operand::IdRef(wide)];
                shuffle.extend((0..width).map(Operand::LiteralBit32));
                Instruction::new(Op::VectorShuffle, read.result_type, read.result_id, shuffle)
            });
        }
        module.functions[f].blocks[b]
            .instructions
            .splice(k..=k, before);
    }
    ids.finish(module);
    Ok(())
}
