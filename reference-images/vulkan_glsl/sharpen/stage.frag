#version 330
#ifdef GL_ARB_shading_language_420pack
#extension GL_ARB_shading_language_420pack : require
#endif

layout(binding = 0, std140) uniform UBO
{
    mat4 MVP;
    vec4 SourceSize;
    vec4 OutputSize;
    float P0;
    float P1;
} global;

layout(binding = 1) uniform sampler2D Source;

in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;

vec4 tap(sampler2D s, vec2 uv, vec2 off)
{
    return texture(s, uv + ((off * global.SourceSize.zw) * global.P1));
}

void main()
{
    vec2 param = vTexCoord;
    vec2 param_1 = vec2(0.0);
    vec4 c = tap(Source, param, param_1);
    vec2 param_2 = vTexCoord;
    vec2 param_3 = vec2(0.0, -1.0);
    vec2 param_4 = vTexCoord;
    vec2 param_5 = vec2(0.0, 1.0);
    vec2 param_6 = vTexCoord;
    vec2 param_7 = vec2(-1.0, 0.0);
    vec2 param_8 = vTexCoord;
    vec2 param_9 = vec2(1.0, 0.0);
    vec4 n = ((tap(Source, param_2, param_3) + tap(Source, param_4, param_5)) + tap(Source, param_6, param_7)) + tap(Source, param_8, param_9);
    FragColor = clamp(c + (((c * 4.0) - n) * global.P0), vec4(0.0), vec4(1.0));
}

