#version 330
// Speed peer (d): constant colour (fill rate of the pipeline itself). mesa_run.py binds the `tc`
// attribute by name, so uv must stay live: max(0.1, uv.x * 1e-4) is exactly k[2].a = 0.1.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    color = vec4(k[2].rgb, max(k[2].a, uv.x * 1e-4));
}
