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

void main()
{
    ivec2 size = textureSize(Source, 0);
    ivec2 out_px = ivec2(vTexCoord * global.OutputSize.xy);
    ivec2 src = (out_px * size) / ivec2(global.OutputSize.xy);
    ivec2 sh = (src + ivec2(int(global.P1))) & (size - ivec2(1));
    vec4 t = texelFetch(Source, sh, 0);
    bool grid = ((out_px.x ^ out_px.y) & 3) == 0;
    vec3 _85;
    if (grid)
    {
        _85 = t.xyz * (1.0 - global.P0);
    }
    else
    {
        _85 = t.zyx;
    }
    FragColor = vec4(_85, 1.0);
}

