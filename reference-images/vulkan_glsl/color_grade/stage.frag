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

vec3 contrast(vec3 c, float k)
{
    return clamp(((c - vec3(0.5)) * k) + vec3(0.5), vec3(0.0), vec3(1.0));
}

void main()
{
    vec3 c = pow(texture(Source, (vTexCoord * 0.75) + vec2(0.0500000007450580596923828125)).xyz, vec3(global.P1));
    float luma = dot(c, vec3(0.2989999949932098388671875, 0.58700001239776611328125, 0.114000000059604644775390625));
    c = mix(vec3(luma), c, vec3(global.P0));
    for (int i = 0; i < 3; i++)
    {
        if (luma > (0.60000002384185791015625 + (float(i) * 0.100000001490116119384765625)))
        {
            break;
        }
        vec3 param = c;
        float param_1 = 1.10000002384185791015625;
        c = contrast(param, param_1);
    }
    FragColor = vec4(pow(clamp(c, vec3(0.0), vec3(1.0)), vec3(1.0 / global.P1)), 1.0);
}

