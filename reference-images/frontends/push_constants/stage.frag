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

layout(binding = 1) uniform sampler2D Source;

in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;

void main()
{
    float d = length(vTexCoord - params.Center);
    float band = floor(d * float(params.Bands)) / float(params.Bands);
    vec4 base = texture(Source, vTexCoord);
    FragColor = mix(base, params.Tint * band, vec4(params.Mix));
}

