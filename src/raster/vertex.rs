//! The vertex stage: the vertex shader runs four vertices at a time as the four lanes of a quad,
//! and each vertex's clip position and varyings are kept as one record (see
//! [`Plan::record_len`]).

use super::setup::{Plan, VsSv};
use super::{DrawState, RasterError, Vertices};
use crate::exec::{QuadIo, QuadVec4};
use rayon::prelude::*;

/// Vertices per parallel task: large enough to amortize the task and buffer setup.
const CHUNK: usize = 256;

/// Runs the vertex shader over all `count` vertices; returns the records, vertex-major.
pub(crate) fn run(
    state: &DrawState<'_>,
    vertices: Vertices<'_>,
    count: usize,
    plan: &Plan,
) -> Result<Vec<[u32; 4]>, RasterError> {
    if vertices.attributes < plan.vs_num_inputs {
        return Err(RasterError::Vertices(format!(
            "the vertex shader reads {} inputs but vertices have {} attributes",
            plan.vs_num_inputs, vertices.attributes
        )));
    }
    let len = plan.record_len();
    let mut records = vec![[0u32; 4]; count * len];
    records
        .par_chunks_mut(CHUNK * len)
        .enumerate()
        .try_for_each(|(chunk, out)| {
            let mut inputs = vec![[[0u32; 4]; 4]; plan.vs_num_inputs];
            let mut system_values = vec![[[0u32; 4]; 4]; plan.vs_num_sv];
            let mut outputs = vec![[[0u32; 4]; 4]; plan.vs_num_outputs];
            let base = chunk * CHUNK;
            let n = out.len() / len;
            for group in (0..n).step_by(4) {
                let lanes = (n - group).min(4);
                let first = base + group;
                for (reg, input) in inputs.iter_mut().enumerate() {
                    *input = [[0; 4]; 4];
                    for lane in 0..lanes {
                        let attr = vertices.data[(first + lane) * vertices.attributes + reg];
                        for (c, channel) in input.iter_mut().enumerate() {
                            channel[lane] = attr[c];
                        }
                    }
                }
                for &(reg, source) in &plan.vs_sv {
                    let value: [u32; 4] = match source {
                        VsSv::VertexId => std::array::from_fn(|lane| (first + lane) as u32),
                        VsSv::Zero => [0; 4],
                    };
                    system_values[reg] = [value; 4];
                }
                let mut io = QuadIo {
                    inputs: &inputs,
                    system_values: &system_values,
                    outputs: &mut outputs,
                    live: (1u8 << lanes) - 1,
                };
                state
                    .vertex_shader
                    .shade_quad(&state.vertex_resources, &mut io)
                    .map_err(|source| RasterError::VertexShader {
                        first_vertex: first,
                        source,
                    })?;
                for lane in 0..lanes {
                    let record = &mut out[(group + lane) * len..(group + lane + 1) * len];
                    record[0] = lane_of(&outputs[plan.vs_position], lane);
                    for (slot, varying) in plan.varyings.iter().enumerate() {
                        record[1 + slot] = match varying.vs_output {
                            Some(reg) => lane_of(&outputs[reg], lane),
                            None => [0; 4],
                        };
                    }
                }
            }
            Ok(())
        })?;
    Ok(records)
}

#[inline]
fn lane_of(v: &QuadVec4, lane: usize) -> [u32; 4] {
    [v[0][lane], v[1][lane], v[2][lane], v[3][lane]]
}
