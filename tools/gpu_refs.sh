#!/usr/bin/env bash
# Renders softgpu's GPU references on a machine with a GPU driver and no network, from the
# repository root: the driver probes (GL and Vulkan), the draw shaders of reference-images/draw
# through GL/EGL, the WGSL shaders through Vulkan (wgpu), the filter-chain cases through
# librashader-cli's Vulkan runtime, and (optionally) a list of corpus presets, 640x480, 3 frames.
#
#   tools/gpu_refs.sh OUTDIR [PRESET_LIST CORPUS_ROOT]
#
# Needs python3 with numpy and pillow, plus moderngl, glcontext and wgpu (cffi, pycparser,
# rendercanvas, sniffio) installed or as wheels in .whl/; the GL/EGL/Vulkan loaders (Debian
# libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2, as .debs in .gl/ when the
# machine lacks them); mesa_run.py (MESA_RUN, default ../shared/peers/mesa_run.py); and
# librashader-cli built by tools/librashader_cli_patch.py (LIBRASHADER_CLI, default
# /tmp/librashader-cli-patched). reference-images/nvidia/README.md says how its pictures came
# from this script. PRESET_LIST holds preset paths under CORPUS_ROOT (as /tmp/slang-shaders/...
# paths with /tmp/ replaced by CORPUS_ROOT/); each render is named as tools/driver_match.py
# expects.
set -u
out=${1:?usage: tools/gpu_refs.sh OUTDIR [PRESET_LIST CORPUS_ROOT]}
mkdir -p "$out/draw" "$out/presets"
if compgen -G ".gl/*.deb" > /dev/null; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd
[ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
mesa_run=${MESA_RUN:-../shared/peers/mesa_run.py}
cli=${LIBRASHADER_CLI:-/tmp/librashader-cli-patched}
{ nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null; date -u; } > "$out/gpu.txt"

python3 tools/driver_probes.py run "$out/probes" --driver native
python3 tools/driver_probes.py run-vulkan "$out/probes"
for f in tools/draw_shaders/*.frag; do
  n=$(basename "$f" .frag); filt=linear
  grep -q '// *filter: *nearest' "$f" && filt=nearest
  mkdir -p "$out/draw/$n"
  # --child draws with whatever driver EGL gives (mesa_run's parent would force a Mesa one).
  python3 "$mesa_run" "$f" "$out/draw/$n" --size 64x64 --filter "$filt" --child \
    || echo "draw $n failed"
done
python3 tools/make_wgsl_refs.py --gpu "$out/wgsl"
python3 tools/make_chain_refs.py --cli "$cli" --gpu "$out/chain"

if [ $# -ge 3 ]; then
  list=$2; root=$3
  render() {
    rel=${1#/tmp/}; id=$(echo "$rel" | tr '/' '_')
    timeout 120 "$cli" render -r vulkan -p "$root/$rel" -i "$PWD/examples/crt/frame.png" \
      -o "$out/presets/$id.png" -f 2 -d 640x480 > /dev/null 2>&1
    echo "$? $id" >> "$out/presets/status.txt"
  }
  export -f render; export out root cli
  xargs -P "$(nproc)" -I{} bash -c 'render "$@"' _ {} < "$list"
fi
