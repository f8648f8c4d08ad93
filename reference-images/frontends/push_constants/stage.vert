#version 330
#ifdef GL_ARB_shading_language_420pack
#extension GL_ARB_shading_language_420pack : require
#endif

layout(binding = 0, std140) uniform UBO
{
    mat4 MVP;
    vec4 SourceSize;
} global;

struct Push
{
    vec4 Tint;
    vec2 Shift;
    float Mix;
    int Bands;
    vec2 Center;
};

uniform Push params;

layout(location = 0) in vec4 Position;
out vec2 vTexCoord;
layout(location = 1) in vec2 TexCoord;

void main()
{
    gl_Position = global.MVP * Position;
    vTexCoord = TexCoord + params.Shift;
    gl_Position.y = -gl_Position.y;
}

