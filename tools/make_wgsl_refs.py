#!/usr/bin/env python3
"""Regenerate the real-driver WGSL references under reference-images/wgsl/.

  python3 tools/make_wgsl_refs.py [NAME ...]
  python3 tools/make_wgsl_refs.py --gpu OUTDIR [NAME ...]

`--gpu OUTDIR` renders on the machine's GPU instead (the first Vulkan adapter that is not a CPU
driver) and writes OUTDIR/NAME/out.png and command.txt, leaving reference-images/wgsl/ as it is:
reference-images/nvidia/ holds such renders.

For every reference-images/wgsl/NAME/shader.wgsl (entry points `vs` and `fs`) this renders a
64x64 RGBA8Unorm picture with wgpu (the `wgpu` PyPI package, which bundles wgpu-native) on
Mesa's **lavapipe** Vulkan driver (forced through VK_ICD_FILENAMES; the adapter must report
backend Vulkan and device "llvmpipe") and writes, next to the shader:

  vertices.txt  6 vertices (two triangles covering the viewport): clip x y z w, then u v —
                exactly the vertex buffer wgpu was given (@location(0) = IN[0], @location(1) = IN[1])
  consts.txt    the 64-byte uniform buffer at @group(0) @binding(0) (4 x vec4<f32>), one
                `x y z w` line per CONST[0][i]
  tex0.png      the 16x16 RGBA8 texture bound at the binding command.txt names (REPEAT, no mips)
  out.png       lavapipe's picture, row 0 = framebuffer row 0 (WebGPU: NDC y = +1)
  command.txt   this command, the adapter, the sampler and the matching `softgpu draw` line

A `// filter: nearest` line in the shader selects nearest filtering (default linear).
WebGPU's NDC has y up (+1 = top row of the framebuffer) while framebuffer rows, position.y and
dpdy run downwards: softgpu's `--convention webgpu`. Needs: apt `mesa-vulkan-drivers`, pip `wgpu`, numpy, pillow.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFS = os.path.join(ROOT, 'reference-images', 'wgsl')
LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json'
GPU_OUT = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == '--gpu' else None
# Must be set before wgpu-native enumerates Vulkan ICDs.
if GPU_OUT is None:
    os.environ['VK_ICD_FILENAMES'] = LAVAPIPE_ICD
os.environ.setdefault('XDG_RUNTIME_DIR', '/tmp')

import numpy as np  # noqa: E402
import wgpu  # noqa: E402
from PIL import Image  # noqa: E402

SIZE = 64
# Uniform rows: CONST[0][0..3].
K = [[1.0, 0.5, 0.25, 1.0], [3.0, 7.0, 0.125, -2.0], [0.3, 0.6, 0.9, 0.1], [16.0, 4.0, 2.0, 0.5]]
# Full-screen quad: clip position, uv (0,0) at the top-left of the picture (NDC x=-1, y=+1).
QUAD = [
    (-1, 1, 0, 1, 0, 0), (1, 1, 0, 1, 1, 0), (-1, -1, 0, 1, 0, 1),
    (1, 1, 0, 1, 1, 0), (1, -1, 0, 1, 1, 1), (-1, -1, 0, 1, 0, 1),
]


def texture_pixels():
    """The 16x16 texture, the same generator as the GL references (mesa_run.py)."""
    return np.random.default_rng(7).integers(0, 256, (16, 16, 4), dtype=np.uint8)


def lavapipe_adapter():
    for adapter in wgpu.gpu.enumerate_adapters_sync():
        info = adapter.info
        if info['backend_type'] == 'Vulkan' and 'llvmpipe' in info['device']:
            return adapter
    sys.exit('no lavapipe Vulkan adapter: install mesa-vulkan-drivers (' + LAVAPIPE_ICD + ')')


def gpu_adapter():
    for adapter in wgpu.gpu.enumerate_adapters_sync():
        info = adapter.info
        if info['backend_type'] == 'Vulkan' and info['adapter_type'] != 'CPU':
            return adapter
    sys.exit('no GPU Vulkan adapter found')


def adapter_name(adapter):
    info = adapter.info
    return f"{info['device']} | {info['description']} | backend {info['backend_type']}"


def bindings(source):
    """(binding, kind) of every @group(0) resource: kind is uniform, texture or sampler."""
    found = []
    for m in re.finditer(r'@group\(0\)\s*@binding\((\d+)\)\s*var(<[^>]*>)?\s*\w+\s*:\s*(\w+)', source):
        binding, space, ty = int(m.group(1)), m.group(2) or '', m.group(3)
        if 'uniform' in space:
            found.append((binding, 'uniform'))
        elif ty.startswith('texture'):
            found.append((binding, 'texture'))
        elif ty == 'sampler':
            found.append((binding, 'sampler'))
        else:
            sys.exit(f'unsupported resource type {ty} at binding {binding}')
    return found


def render(device, vs_module, vs_entry, fs_module, fs_entry, vertices, uniform_bytes,
           resources, filter_mode, layouts=None):
    """Draws `vertices` (rows of 6 floats) into a 64x64 rgba8unorm target; returns HxWx4 uint8.

    `resources` lists (group, binding, kind); kind is uniform, texture or sampler. Push
    constants are refused: `softgpu draw` feeds only CONST[0], which they never land in."""
    vbuf = device.create_buffer_with_data(data=np.array(vertices, np.float32).tobytes(),
                                          usage=wgpu.BufferUsage.VERTEX)
    pixels = texture_pixels()
    tex = device.create_texture(size=(16, 16, 1), format=wgpu.TextureFormat.rgba8unorm,
                                usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST)
    device.queue.write_texture({'texture': tex}, pixels.tobytes(),
                               {'bytes_per_row': 16 * 4, 'rows_per_image': 16}, (16, 16, 1))
    sampler = device.create_sampler(
        address_mode_u='repeat', address_mode_v='repeat', address_mode_w='repeat',
        mag_filter=filter_mode, min_filter=filter_mode, mipmap_filter='nearest')
    ubuf = device.create_buffer_with_data(data=uniform_bytes, usage=wgpu.BufferUsage.UNIFORM)

    if any(k.startswith('push') for _, _, k in resources):
        sys.exit('push constants are not supported: softgpu draw feeds only CONST[0]')
    groups = sorted({g for g, _, k in resources})
    stages = wgpu.ShaderStage.VERTEX | wgpu.ShaderStage.FRAGMENT
    bgls = []
    for g in range(max(groups) + 1 if groups else 0):
        entries = []
        for gg, b, k in resources:
            if gg != g:
                continue
            e = {'binding': b, 'visibility': stages}
            if k == 'uniform':
                e['buffer'] = {'type': 'uniform'}
            elif k == 'texture':
                e['texture'] = {'sample_type': 'float', 'view_dimension': '2d'}
            elif k == 'sampler':
                e['sampler'] = {'type': 'filtering'}
            entries.append(e)
        bgls.append(device.create_bind_group_layout(entries=entries))
    layout = device.create_pipeline_layout(bind_group_layouts=bgls)
    pipeline = device.create_render_pipeline(
        layout=layout,
        vertex={'module': vs_module, 'entry_point': vs_entry, 'buffers': [{
            'array_stride': 24, 'step_mode': 'vertex', 'attributes': [
                {'format': 'float32x4', 'offset': 0, 'shader_location': 0},
                {'format': 'float32x2', 'offset': 16, 'shader_location': 1}]}]},
        primitive={'topology': 'triangle-list', 'cull_mode': 'none'},
        depth_stencil=None,
        multisample=None,
        fragment={'module': fs_module, 'entry_point': fs_entry,
                  'targets': [{'format': 'rgba8unorm'}]},
    )
    bind_groups = []
    for g, bgl in enumerate(bgls):
        entries = []
        for gg, b, k in resources:
            if gg != g:
                continue
            res = {'uniform': {'buffer': ubuf, 'offset': 0, 'size': len(uniform_bytes)},
                   'texture': tex.create_view(), 'sampler': sampler}[k]
            entries.append({'binding': b, 'resource': res})
        bind_groups.append(device.create_bind_group(layout=bgl, entries=entries))

    target = device.create_texture(size=(SIZE, SIZE, 1), format='rgba8unorm',
                                   usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    encoder = device.create_command_encoder()
    rp = encoder.begin_render_pass(color_attachments=[{
        'view': target.create_view(), 'clear_value': (0, 0, 0, 0),
        'load_op': 'clear', 'store_op': 'store'}])
    rp.set_pipeline(pipeline)
    rp.set_vertex_buffer(0, vbuf)
    for g, bg in enumerate(bind_groups):
        rp.set_bind_group(g, bg)
    rp.draw(len(vertices))
    rp.end()
    # Rows of a texture→buffer copy must be 256-byte aligned.
    row = SIZE * 4
    padded = (row + 255) // 256 * 256
    rbuf = device.create_buffer(size=padded * SIZE,
                                usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.MAP_READ)
    encoder.copy_texture_to_buffer({'texture': target},
                                   {'buffer': rbuf, 'bytes_per_row': padded, 'rows_per_image': SIZE},
                                   (SIZE, SIZE, 1))
    device.queue.submit([encoder.finish()])
    rbuf.map_sync(wgpu.MapMode.READ)
    data = np.frombuffer(rbuf.read_mapped(), np.uint8).reshape(SIZE, padded)[:, :row].copy()
    rbuf.unmap()
    return data.reshape(SIZE, SIZE, 4)


def write_inputs(outdir, vertices, consts):
    with open(os.path.join(outdir, 'vertices.txt'), 'w') as f:
        f.write('# clip x y z w, u v (IN[0], IN[1]); every 3 lines are one triangle\n')
        for v in vertices:
            f.write(' '.join(repr(float(np.float32(x))) for x in v) + '\n')
    with open(os.path.join(outdir, 'consts.txt'), 'w') as f:
        for r in consts:
            f.write(' '.join(repr(float(np.float32(x))) for x in r) + '\n')
    Image.fromarray(texture_pixels(), 'RGBA').save(os.path.join(outdir, 'tex0.png'))


def make(device, adapter, name):
    path = os.path.join(REFS, name, 'shader.wgsl')
    outdir = os.path.join(GPU_OUT, name) if GPU_OUT else os.path.join(REFS, name)
    os.makedirs(outdir, exist_ok=True)
    source = open(path).read()
    filter_mode = 'nearest' if re.search(r'//\s*filter:\s*nearest', source) else 'linear'
    res = bindings(source)
    if any(b == 0 and k != 'uniform' for b, k in res):
        sys.exit(f'{name}: @binding(0) is reserved for the uniform buffer (CONST[0])')
    module = device.create_shader_module(code=source)
    consts = K
    img = render(device, module, 'vs', module, 'fs', QUAD,
                 np.array(consts, np.float32).tobytes(), [(0, b, k) for b, k in res], filter_mode)
    if not GPU_OUT:
        write_inputs(outdir, QUAD, consts)
    Image.fromarray(img, 'RGBA').save(os.path.join(outdir, 'out.png'))
    units = [b for b, k in res if k == 'texture']
    tex_args = ''.join(f' --texture {u}=tex0.png' for u in units)
    with open(os.path.join(outdir, 'command.txt'), 'w') as f:
        gpu = f'--gpu {GPU_OUT} ' if GPU_OUT else ''
        f.write(f'python3 tools/make_wgsl_refs.py {gpu}{name}\n')
        f.write(f'adapter: {adapter_name(adapter)}\n')
        f.write(f'wgpu-py {wgpu.__version__}\n')
        f.write(f'filter: {filter_mode}\n')
        f.write('wrap: repeat\n')
        f.write(f'texture units: {" ".join(map(str, units)) or "none"}\n')
        f.write('softgpu: softgpu draw --vs shader.wgsl --fs shader.wgsl --vertices vertices.txt '
                f'--consts consts.txt{tex_args} --filter {filter_mode} --wrap repeat --size 64x64 '
                '--convention webgpu --out OUT.png\n')
    print(f'{name}: {filter_mode}, bindings {res}')


def main():
    args = sys.argv[3:] if GPU_OUT else sys.argv[1:]
    names = args or sorted(d for d in os.listdir(REFS)
                           if os.path.isfile(os.path.join(REFS, d, 'shader.wgsl')))
    adapter = gpu_adapter() if GPU_OUT else lavapipe_adapter()
    device = adapter.request_device_sync()
    print('adapter:', adapter_name(adapter))
    for name in names:
        make(device, adapter, name)


if __name__ == '__main__':
    main()
