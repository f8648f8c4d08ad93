#version 330
// Speed peer (a): one bilinear texture read times a constant.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    color = texture(tex0, uv) * k[0];
}
