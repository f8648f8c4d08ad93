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

layout(location = 0) out vec4 FragColor;
in vec2 vTexCoord;

void main()
{
    FragColor = vec4(texture(Source, vTexCoord).xyz * global.P0, 1.0);
}

