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
    vec2 pix = vTexCoord * global.SourceSize.xy;
    float f = fract(pix.y) - 0.5;
    float scan = 1.0 - (global.P0 * ((f * f) * 4.0));
    vec3 col = texture(Source, vTexCoord).xyz * scan;
    float ox = vTexCoord.x * global.OutputSize.x;
    int m = int(floor(ox)) % 3;
    vec3 mask = vec3(1.0 - global.P1);
    if (m == 0)
    {
        mask.x = 1.0;
    }
    else
    {
        if (m == 1)
        {
            mask.y = 1.0;
        }
        else
        {
            mask.z = 1.0;
        }
    }
    FragColor = vec4(col * mask, 1.0);
}

