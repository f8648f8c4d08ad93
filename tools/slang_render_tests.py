#!/usr/bin/env python3
"""Run the Slang repository's render tests (its `render-test` tool's draw tests) with `softgpu draw`
and compare each picture with the test's `.expected.png` images.

  python3 tools/slang_render_tests.py PATH... [--softgpu PATH] [--out DIR] [--size WxH]
                                      [--exec jit|interp] [--print-commands]

PATH is a test file (`.slang`, `.hlsl`) or a directory searched for files that have an
`*.expected.png` beside them (for github.com/shader-slang/slang, `tests/`: not committed here).
Each file is drawn once, as Slang's render-test draws it (tools/render-test/render-test-main.cpp,
shader-input-layout.cpp, shader-renderer-util.cpp at bec577b3), and compared with every
`FILE.expected.png` and `FILE.N.expected.png` (the image of its N-th `//TEST` line; the lines
differ only in the backend they pick, and softgpu is the backend here). The conventions:

- Entry points `vertexMain` and `fragmentMain`; the file is compiled by Slang as it is (an
  `.hlsl` file through a `.slang` copy beside it; `__HLSL__` defined where the file tests it),
  with the file's directory on the import path.
- One triangle, three vertices, each with the seven attributes `A0`..`A6` of render-test's
  vertex buffer, at locations 0..6: position (0,0,0.5) (0,1,0.5) (1,0,0.5), colour red, blue,
  green, uv (0,0) (1,0) (1,1), and the custom data (1,2,3,4) (5,6,7,8) (9,10,11,12)
  (13,14,15,16).
- `Uniforms.modelViewProjection` is the identity (render-test's `setProjectionMatrix`) when the
  shader has that block.
- A 1024x768 RGBA8 target cleared to (0,0,0,0), the full viewport, D3D's clip space (NDC y up,
  z in 0..1, row 0 of the PNG at the top: softgpu's `--convention webgpu`).
- `//TEST_INPUT:` lines bind the resources by name (Slang's reflection gives the binding):
  `Texture2D(size=N, content=zero|one|chessboard|gradient, format=F)` (render-test's default
  contents: `one` is 1.0 in every channel, `chessboard` 1.0 where x < size/2 xor y < size/2 and
  128/255 elsewhere, `gradient` x/(size-1) in red, y/(size-1) in green; one-channel formats keep
  red only; size 4 by default) becomes a PNG for `--texture`; `Sampler(filteringMode=point|linear,
  depthCompare)` gives `--filter` (one sampler state per draw, so the samplers of one test must
  agree), render-test's wrap mode (repeat) and, with `depthCompare`, `--compare less`;
  `ubuffer(data=[...], stride=N)` a `--storage-buffer`; `uniform`/`cbuffer(data=[...])` set the
  named member with `--uniform`. Other inputs (`RWTexture*`, `begin_object`, `set`, `type`
  specialization, acceleration structures, …) make the test unsupported, said with the line.
- Textures have no mip chain in softgpu's draw (render-test makes a full one): lookups that would
  read a level below the base differ.

Every malformed `//TEST_INPUT` line is an error naming FILE:LINE and what was expected; a file is
read whole only up to 1 MiB, a line up to 4096 characters, `data=[...]` up to 65536 values,
textures up to 4096 texels a side. Needs Pillow and numpy; the Slang library as for softgpu
(`pip install --no-deps slangpy==0.43.1`, or SOFTGPU_SLANG_LIB).
"""
import argparse
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_BYTES = 1 << 20
MAX_LINE_CHARS = 4096
MAX_DATA_VALUES = 65536
MAX_TEXTURE_SIZE = 4096

# render-test-main.cpp's kVertexData: position, color, uv, customData0..3.
VERTICES = [
    [(0, 0, 0.5), (1, 0, 0), (0, 0)],
    [(0, 1, 0.5), (0, 0, 1), (1, 0)],
    [(1, 0, 0.5), (0, 1, 0), (1, 1)],
]
CUSTOM = [(1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16)]
IDENTITY = ','.join(['1', '0', '0', '0', '0', '1', '0', '0', '0', '0', '1', '0', '0', '0', '0', '1'])

# Formats of render-test's `format=` option this tool can express as an RGBA8 PNG, with their
# channel count: render-test fills float formats with byte / 255, which a PNG's UNORM bytes give.
FORMATS = {
    'RGBA8Unorm': 4, 'R8Unorm': 1, 'RG8Unorm': 2,
    'R32Float': 1, 'RG32Float': 2, 'RGBA32Float': 4, 'D32Float': 1,
    'R16Float': 1, 'RG16Float': 2, 'RGBA16Float': 4,
}


class TestError(Exception):
    """A malformed or unsupported test: the message names FILE:LINE."""


def read_bounded(path):
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise TestError(f'{path}: {size} bytes, more than the {MAX_FILE_BYTES} this tool reads')
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


class Tokens:
    """The tokens of one `//TEST_INPUT:` line: words, numbers, punctuation."""
    TOKEN = re.compile(r'\s*(-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+(?:[eE][-+]?\d+)?|-?\.\d+|[A-Za-z_]\w*|[()\[\]{},:=.<>])')

    def __init__(self, text, where):
        self.where = where
        self.items = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == '':
                break
            m = self.TOKEN.match(text, pos)
            if not m:
                raise TestError(f'{where}: unexpected `{text[pos:].strip()[:20]}` in TEST_INPUT')
            self.items.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self):
        return self.items[self.i] if self.i < len(self.items) else None

    def take(self, expected=None, what=None):
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f'`{expected}`' if expected else what or 'more'
            found = f'`{tok}`' if tok is not None else 'the end of the line'
            raise TestError(f'{self.where}: expected {want}, found {found}')
        self.i += 1
        return tok

    def word(self, what):
        tok = self.take(what=what)
        if not re.fullmatch(r'[A-Za-z_]\w*', tok):
            raise TestError(f'{self.where}: expected {what}, found `{tok}`')
        return tok

    def number(self, what):
        tok = self.take(what=what)
        try:
            return int(tok) if re.fullmatch(r'-?\d+', tok) else float(tok)
        except ValueError:
            raise TestError(f'{self.where}: expected {what}, found `{tok}`') from None


def parse_options(tok):
    """`(key=value, flag, data=[...])` -> {key: value}; flags map to True."""
    options = {}
    if tok.peek() != '(':
        return options
    tok.take('(')
    while tok.peek() != ')':
        key = tok.word('an option name')
        if tok.peek() == '=':
            tok.take('=')
            if tok.peek() == '[':
                tok.take('[')
                values = []
                while tok.peek() != ']':
                    values.append(tok.number('a number in data=[...]'))
                    if len(values) > MAX_DATA_VALUES:
                        raise TestError(f'{tok.where}: more than {MAX_DATA_VALUES} data values')
                    if tok.peek() == ',':
                        tok.take(',')
                tok.take(']')
                options[key] = values
            elif re.fullmatch(r'-?[\d.]', (tok.peek() or 'x')[0]):
                options[key] = tok.number(f'the value of `{key}`')
            else:
                options[key] = tok.word(f'the value of `{key}`')
        else:
            options[key] = True
        if tok.peek() == ',':
            tok.take(',')
        elif tok.peek() != ')':
            raise TestError(f'{tok.where}: expected `,` or `)` after option `{key}`')
    tok.take(')')
    return options


def parse_name(tok):
    """`:name NAME` / `: name=NAME` (`out` flags are accepted and ignored)."""
    if tok.peek() is None:
        return None
    tok.take(':')
    name = None
    while tok.peek() is not None:
        word = tok.word('`name` or `out`')
        if word == 'name':
            if tok.peek() == '=':
                tok.take('=')
            name = tok.word('the input\'s name')
            while tok.peek() in ('.', '['):
                if tok.take() == '.':
                    name += '.' + tok.word('a member name')
                else:
                    name += f'[{tok.number("an index")}]'
                    tok.take(']')
        elif word != 'out':
            raise TestError(f'{tok.where}: expected `name` or `out`, found `{word}`')
        if tok.peek() == ',':
            tok.take(',')
    return name


SUPPORTED = 'Texture2D, Sampler, TextureSampler2D, ubuffer, uniform, cbuffer'


def parse_inputs(path, text):
    """The `//TEST_INPUT:` lines of a file as [{'kind', 'options', 'name', 'where'}]."""
    inputs = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith('//'):
            continue
        body = stripped[2:].strip()
        if not body.startswith('TEST_INPUT:'):
            continue
        where = f'{path}:{number}'
        if len(line) > MAX_LINE_CHARS:
            raise TestError(f'{where}: TEST_INPUT line longer than {MAX_LINE_CHARS} characters')
        tok = Tokens(body[len('TEST_INPUT:'):], where)
        kind = tok.word('an input type (' + SUPPORTED + ')')
        if kind not in SUPPORTED.split(', '):
            raise TestError(f'{where}: TEST_INPUT `{kind}` is not supported here '
                            f'(supported: {SUPPORTED})')
        options = parse_options(tok)
        name = parse_name(tok)
        if name is None:
            raise TestError(f'{where}: expected `:name NAME` after the {kind} input')
        inputs.append({'kind': kind, 'options': options, 'name': name, 'where': where})
    return inputs


def texture_png(inp, out_path):
    """Writes the render-test content of a Texture2D input as an RGBA8 PNG."""
    from PIL import Image
    o, where = inp['options'], inp['where']
    known = {'size', 'content', 'format', 'mipMaps', 'filteringMode', 'depthCompare'}
    for key in o:
        if key not in known:
            raise TestError(f'{where}: Texture2D option `{key}` is not supported here '
                            f'(supported: {", ".join(sorted(known))})')
    size = o.get('size', 4)
    if not isinstance(size, int) or not 1 <= size <= MAX_TEXTURE_SIZE:
        raise TestError(f'{where}: expected size=N with N in 1..{MAX_TEXTURE_SIZE}, found {size}')
    fmt = o.get('format', 'RGBA8Unorm')
    if fmt not in FORMATS:
        raise TestError(f'{where}: texture format `{fmt}` is not supported here '
                        f'(supported: {", ".join(FORMATS)})')
    channels = FORMATS[fmt]
    content = o.get('content', 'one')
    if content not in ('zero', 'one', 'chessboard', 'gradient'):
        # render-test reads any other word as `gradient`; a typo here is more likely.
        raise TestError(f'{where}: expected content=zero|one|chessboard|gradient, found {content}')
    img = Image.new('RGBA', (size, size))
    half = size >> 1
    for y in range(size):
        for x in range(size):
            if content == 'zero':
                rgba = [0, 0, 0, 0]
            elif content == 'one':
                rgba = [255, 255, 255, 255]
            elif content == 'chessboard':
                rgba = [255] * 4 if (x < half) ^ (y < half) else [128, 128, 128, 255]
            else:
                d = max(size - 1, 1)
                rgba = [int(x / d * 255.0), int(y / d * 255.0), 0, 255]
            # Channels the format lacks read as 0 (alpha as 1).
            rgba = [rgba[c] if c < channels else (255 if c == 3 else 0) for c in range(4)]
            img.putpixel((x, y), tuple(rgba))
    img.save(out_path)


def word(value, where):
    """The 32 bits render-test stores for a data value: a float's, or an integer's (wrapped)."""
    if isinstance(value, float):
        try:
            return struct.unpack('<I', struct.pack('<f', value))[0]
        except OverflowError:
            raise TestError(f'{where}: data value {value} does not fit in a 32-bit float') from None
    if not -(1 << 31) <= value < (1 << 32):
        raise TestError(f'{where}: data value {value} does not fit in 32 bits')
    return value & 0xFFFFFFFF


def write_vertices(path):
    with open(path, 'w') as f:
        f.write('# render-test-main.cpp kVertexData: A0 position, A1 colour, A2 uv, A3..A6 custom\n')
        for pos, col, uv in VERTICES:
            groups = [(*pos, 1), (*col, 1), (*uv, 0, 1), *CUSTOM]
            f.write('  '.join(' '.join(f'{v:g}' for v in g) for g in groups) + '\n')


def softgpu_json(softgpu, args):
    r = subprocess.run([softgpu, *args], capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise TestError(first_line(r.stderr))
    return json.loads(r.stdout)


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0].replace('softgpu: error: ', '') if lines else 'no output'


def build_command(softgpu, path, work, size, exec_mode):
    """The `softgpu draw` command of a test file, or raises TestError."""
    text = read_bounded(path)
    inputs = parse_inputs(path, text)
    base = os.path.basename(path)
    # Not the file's own name: Slang would find the copy itself for an `import` of that name.
    shader = os.path.join(work, 'shader.slang')
    shutil.copyfile(path, shader)
    common = ['-I', os.path.dirname(os.path.abspath(path))]
    if re.search(r'defined\s*\(\s*__HLSL__\s*\)|#\s*ifdef\s+__HLSL__', text):
        common += ['-D', '__HLSL__']
    reflection = {}
    for stage, entry in (('vertex', 'vertexMain'), ('fragment', 'fragmentMain')):
        reflection[stage] = softgpu_json(softgpu, ['compile', shader, '--lang', 'slang', '--stage', stage,
                                                   '--entry', entry, '--emit', 'reflection', *common])
    vertices = os.path.join(work, 'vertices.txt')
    write_vertices(vertices)
    cmd = [softgpu, 'draw', '--vs', shader, '--fs', shader, '--vs-entry', 'vertexMain',
           '--fs-entry', 'fragmentMain', '--vertices', vertices, *common,
           '--convention', 'webgpu', '--size', size, '--wrap', 'repeat', '--exec', exec_mode]
    blocks = set()
    textures = {}
    for stage in reflection.values():
        r = stage['stage_reflection']
        blocks.update(b.get('name') for b in r.get('uniform_buffers', []))
        for t in r.get('textures', []):
            textures[t['name']] = t['binding']
    if 'Uniforms' in blocks:
        cmd += ['--uniform', f'Uniforms.modelViewProjection={IDENTITY}']
    filters = set()
    compare = False
    for n, inp in enumerate(inputs):
        kind, o, where = inp['kind'], inp['options'], inp['where']
        if kind in ('Sampler', 'TextureSampler2D'):
            mode = o.get('filteringMode', 'linear')
            if mode not in ('point', 'linear'):
                raise TestError(f'{where}: expected filteringMode=point|linear, found {mode}')
            filters.add('nearest' if mode == 'point' else 'linear')
            compare = compare or bool(o.get('depthCompare'))
        if kind in ('Texture2D', 'TextureSampler2D'):
            if inp['name'] not in textures:
                raise TestError(f'{where}: the shaders have no texture `{inp["name"]}` '
                                f'(textures: {", ".join(sorted(textures)) or "none"})')
            png = os.path.join(work, f'texture{n}.png')
            texture_png(inp, png)
            cmd += ['--texture', f'{textures[inp["name"]]}={png}']
        elif kind == 'ubuffer':
            data = o.get('data', [])
            rows = os.path.join(work, f'buffer{n}.txt')
            with open(rows, 'w') as f:
                words = [word(v, where) for v in data]
                words += [0] * (-len(words) % 4)
                for i in range(0, len(words), 4):
                    f.write(' '.join(f'0x{w:08x}' for w in words[i:i + 4]) + '\n')
            cmd += ['--storage-buffer', f'{inp["name"]}={rows}']
        elif kind in ('uniform', 'cbuffer'):
            data = o.get('data')
            if not data:
                raise TestError(f'{where}: expected data=[...] in the {kind} input')
            values = ','.join(f'0x{word(v, where):08x}' for v in data)
            cmd += ['--uniform', f'{inp["name"]}={values}']
    if len(filters) > 1:
        raise TestError(f'{path}: samplers with different filters (softgpu draw has one sampler '
                        f'state per draw)')
    cmd += ['--filter', filters.pop() if filters else 'linear']
    if compare:
        cmd += ['--compare', 'less']
    return cmd


def expected_images(path):
    found = glob.glob(glob.escape(path) + '.expected.png') + \
        glob.glob(glob.escape(path) + '.[0-9]*.expected.png')
    return sorted(set(found))


def compare(expected, actual):
    """(pixels differing, pixels differing by more than 1/255, largest difference)."""
    import numpy as np
    from PIL import Image
    a = np.asarray(Image.open(expected).convert('RGBA')).astype(int)
    b = np.asarray(Image.open(actual).convert('RGBA')).astype(int)
    if a.shape != b.shape:
        return None
    d = np.abs(a - b).max(axis=2)
    return int((d > 0).sum()), int((d > 1).sum()), int(d.max())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('paths', nargs='+')
    ap.add_argument('--softgpu', default=os.path.join(ROOT, 'target', 'debug', 'softgpu'))
    ap.add_argument('--out', help='keep the pictures (and the generated inputs) in this directory')
    ap.add_argument('--size', default='1024x768')
    ap.add_argument('--exec', default='jit', choices=['jit', 'interp'])
    ap.add_argument('--driver', default='softpipe', choices=['softpipe', 'llvmpipe', 'nvidia'],
                    help="softgpu's --driver (the expected images come from a GPU)")
    ap.add_argument('--print-commands', action='store_true')
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            for dirpath, _, names in os.walk(p):
                for n in sorted(names):
                    full = os.path.join(dirpath, n)
                    if n.endswith(('.slang', '.hlsl')) and expected_images(full):
                        files.append(full)
        else:
            files.append(p)
    counts = {'exact': 0, 'within 1/255': 0, 'differ': 0, 'fail': 0}
    work_root = a.out or tempfile.mkdtemp(prefix='slang-render-tests-')
    for path in sorted(files):
        images = expected_images(path)
        work = os.path.join(work_root, re.sub(r'\W', '_', os.path.relpath(path)))
        os.makedirs(work, exist_ok=True)
        picture = os.path.join(work, 'softgpu.png')
        try:
            cmd = build_command(a.softgpu, path, work, a.size, a.exec) + [
                '--driver', a.driver, '--out', picture]
            if a.print_commands:
                print(' '.join(cmd))
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if r.returncode:
                raise TestError(first_line(r.stderr))
        except (TestError, subprocess.TimeoutExpired, OSError) as e:
            for img in images:
                counts['fail'] += 1
                print(f'FAIL    {os.path.relpath(img)}: {e}')
            continue
        for img in images:
            result = compare(img, picture)
            if result is None:
                counts['differ'] += 1
                print(f'DIFFER  {os.path.relpath(img)}: a different size')
                continue
            n, over, largest = result
            if n == 0:
                counts['exact'] += 1
                print(f'EXACT   {os.path.relpath(img)}')
            elif over == 0:
                counts['within 1/255'] += 1
                print(f'WITHIN  {os.path.relpath(img)}: {n} pixels differ by 1/255')
            else:
                counts['differ'] += 1
                print(f'DIFFER  {os.path.relpath(img)}: {n} pixels differ, {over} by more than '
                      f'1/255 (largest {largest}/255)')
    if not a.out:
        shutil.rmtree(work_root, ignore_errors=True)
    total = sum(counts.values())
    print(f'{total} images: ' + ', '.join(f'{v} {k}' for k, v in counts.items()))
    return 0 if counts['differ'] == counts['fail'] == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
