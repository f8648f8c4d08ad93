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

layout(location = 0) in vec4 Position;
out vec2 vTexCoord;
layout(location = 1) in vec2 TexCoord;

void main()
{
    gl_Position = global.MVP * Position;
    vTexCoord = (global.warp.ROT * (TexCoord - global.warp.PIVOT)) + global.warp.PIVOT;
    gl_Position.y = -gl_Position.y;
}

