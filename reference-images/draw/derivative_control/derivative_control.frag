#version 330
#extension GL_ARB_derivative_control : require
// Fine vs coarse derivatives (GL_ARB_derivative_control): TGSI DDX_FINE/DDY_FINE vs DDX/DDY.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    float f = uv.x * uv.y * 48.0 + uv.x * uv.x * 10.0;
    float g = uv.y * uv.y * 30.0 + uv.x * 5.0;
    color = vec4(dFdxFine(f), 0.5 - dFdyFine(g) * 0.5, dFdxCoarse(f), 0.5 + dFdyCoarse(f) * 0.5);
}
