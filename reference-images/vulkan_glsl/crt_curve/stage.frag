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

vec2 warp(vec2 uv)
{
    vec2 c = (uv * 2.0) - vec2(1.0);
    c *= (1.0 + ((global.P0 * dot(c, c)) * 0.5));
    return (c * 0.5) + vec2(0.5);
}

void main()
{
    vec2 param = vTexCoord;
    vec2 uv = warp(param);
    bool _58 = uv.x < 0.0;
    bool _65;
    if (!_58)
    {
        _65 = uv.x > 1.0;
    }
    else
    {
        _65 = _58;
    }
    bool _73;
    if (!_65)
    {
        _73 = uv.y < 0.0;
    }
    else
    {
        _73 = _65;
    }
    bool _80;
    if (!_73)
    {
        _80 = uv.y > 1.0;
    }
    else
    {
        _80 = _73;
    }
    if (_80)
    {
        FragColor = vec4(0.0, 0.0, 0.0, 1.0);
        return;
    }
    vec2 v = uv * (vec2(1.0) - uv.yx);
    float vig = pow((v.x * v.y) * 15.0, 0.25 * global.P1);
    FragColor = vec4(texture(Source, (uv * 1.2999999523162841796875) - vec2(0.100000001490116119384765625)).xyz * vig, 1.0);
}

