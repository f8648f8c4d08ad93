#version 330
#ifdef GL_ARB_shading_language_420pack
#extension GL_ARB_shading_language_420pack : require
#endif

struct Warp
{
    mat2 ROT;
    vec2 PIVOT;
};

layout(binding = 0, std140) uniform UBO
{
    mat4 MVP;
    vec4 SourceSize;
    Warp warp;
    mat3x2 SKEW;
    vec4 BIAS;
} global;

layout(binding = 1) uniform sampler2D Source;

in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;

void main()
{
    vec2 uv = global.SKEW * vec3(vTexCoord, 1.0);
    int i = int(clamp(vTexCoord.x * 3.0, 0.0, 2.0));
    vec2 column = global.SKEW[i];
    float r = global.warp.ROT[1].x;
    mat2 whole = global.warp.ROT;
    vec4 c = texture(Source, uv);
    FragColor = vec4((c.xyz * global.BIAS.xyz) + vec3(column * 0.25, r * (whole * column).y), 1.0);
}

