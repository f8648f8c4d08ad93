#!/usr/bin/env python3
"""Count the vertex and fragment entry points of the Slang repository's tests and examples that
softgpu lowers to TGSI, with the rest grouped by reason.

  python3 tools/slang_lang_corpus.py SLANG_CHECKOUT [--softgpu PATH] [--jobs N] [--list]

SLANG_CHECKOUT is a checkout (or an extracted archive) of github.com/shader-slang/slang holding
tests/ and examples/ (not committed here). Every `.slang` file under them is read; diagnostic tests,
which are meant to fail, are left out (files under tests/diagnostics/ and files whose `//TEST`
lines are DIAGNOSTIC_TEST). Its vertex and fragment entry points are those marked
`[shader("vertex")]`, `[shader("fragment")]` or `[shader("pixel")]`, and those its `//TEST` lines
name with `-entry NAME -stage vertex|fragment|pixel`. Each is compiled with
`softgpu compile FILE --lang slang --stage S --entry NAME` (the file's directory on the search
path, and `--slang-arg -allow-glsl` where a `//TEST` line passes that flag); it counts when
softgpu prints a TGSI program. Failures are grouped by the first line of
the error with paths, positions and names taken out; --list prints each failing entry point.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHADER_ATTR = re.compile(r'\[\s*shader\s*\(\s*"(vertex|fragment|pixel)"\s*\)\s*\]')
FUNCTION = re.compile(r'(\w+)\s*\(')
TEST_ENTRY = re.compile(r'-entry\s+(\w+)\s+-stage\s+(vertex|fragment|pixel)')
TEST_ENTRY_REVERSED = re.compile(r'-stage\s+(vertex|fragment|pixel)\s+-entry\s+(\w+)')


def entry_points(text):
    """{(name, stage)} of a file's vertex and fragment entry points."""
    found = set()
    for m in SHADER_ATTR.finditer(text):
        # The function's name is the last identifier before the first `(` after the attribute
        # (after any further attributes and the return type).
        rest = re.sub(r'\[[^\]]*\]', ' ', text[m.end():m.end() + 400])
        head = rest.split('(', 1)[0]
        names = re.findall(r'\w+', head)
        if names:
            found.add((names[-1], 'fragment' if m[1] == 'pixel' else m[1]))
    for line in text.splitlines():
        if not line.lstrip().startswith('//TEST'):
            continue
        for name, stage in TEST_ENTRY.findall(line):
            found.add((name, 'fragment' if stage == 'pixel' else stage))
        for stage, name in TEST_ENTRY_REVERSED.findall(line):
            found.add((name, 'fragment' if stage == 'pixel' else stage))
    return found


def is_diagnostic(path, text):
    if '/tests/diagnostics/' in path.replace(os.sep, '/'):
        return True
    tests = [l for l in text.splitlines() if l.lstrip().startswith('//TEST')]
    return bool(tests) and all('DIAGNOSTIC_TEST' in l for l in tests)


def reason(stderr, path, entry):
    first = stderr.strip().splitlines()[0] if stderr.strip() else 'no output'
    first = first.replace('softgpu: error: ', '')
    first = first.replace(path, 'FILE')
    first = re.sub(r'FILE:\d+:\d+: ', '', first)
    first = re.sub(r'^\S+\.slang(:\d+)*: ', '', first)
    first = first.replace(f'`{entry}`', '`E`')
    first = re.sub(r"'[^']*'", "'…'", first)
    first = re.sub(r'`[^`]*`', '`…`', first)
    first = re.sub(r'\d+', 'N', first)
    return first[:160]


def compile_one(softgpu, path, name, stage, extra):
    cmd = [softgpu, 'compile', path, '--lang', 'slang', '--stage', stage, '--entry', name,
           '-I', os.path.dirname(path), '--emit', 'tgsi', *extra]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, 'timed out after 120 s'
    ok = r.returncode == 0 and r.stdout.startswith(('VERT', 'FRAG'))
    return ok, None if ok else reason(r.stderr, path, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('checkout')
    ap.add_argument('--softgpu', default=os.path.join(ROOT, 'target', 'debug', 'softgpu'))
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    work = []
    files = set()
    for top in ('tests', 'examples'):
        for dirpath, _, names in os.walk(os.path.join(a.checkout, top)):
            for n in sorted(names):
                if not n.endswith('.slang'):
                    continue
                path = os.path.join(dirpath, n)
                text = open(path, encoding='utf-8', errors='replace').read()
                if is_diagnostic(path, text):
                    continue
                tests = [l for l in text.splitlines() if l.lstrip().startswith('//TEST')]
                extra = ['--slang-arg', '-allow-glsl'] if any('-allow-glsl' in l for l in tests) else []
                for name, stage in sorted(entry_points(text)):
                    work.append((path, name, stage, extra))
                    files.add(path)
    reasons = collections.Counter()
    failures = []
    lowered = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = pool.map(lambda w: (w, compile_one(a.softgpu, *w)), work)
        for (path, name, stage, _), (ok, why) in results:
            if ok:
                lowered += 1
            else:
                reasons[why] += 1
                failures.append((os.path.relpath(path, a.checkout), name, stage, why))
    print(f'{lowered} of {len(work)} vertex/fragment entry points in {len(files)} files lower to TGSI')
    for why, n in reasons.most_common():
        print(f'{n:5}  {why}')
    if a.list:
        for f in sorted(failures):
            print('  '.join(f))


if __name__ == '__main__':
    sys.exit(main())
