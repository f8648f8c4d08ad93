#version 330
out vec4 cg_Varying0;
out vec4 cg_Varying1;
out vec4 cg_Varying2;
in vec4 cg_Position;
in vec4 cg_TexCoord;
// glslv cg_output by Cg compiler
// cgc version 3.1.0013, build date Apr 24 2012
// command line args: -quiet -profile glslv -DPARAMETER_UNIFORM
// source file: shader.cg
//vendor NVIDIA Corporation
//version 3.1.0.13
//profile glslv
//program main_vertex
//semantic main_vertex.modelViewProj
//semantic main_vertex.IN
//semantic XBR_Y_WEIGHT
//semantic decal : TEXUNIT0
//var float4x4 modelViewProj :  : _modelViewProj1_vs[0], 4 : 2 : 1
//var float2 IN.video_size :  :  : 3 : 0
//var float2 IN.texture_size :  : _IN1_vs._texture_size : 3 : 1
//var float2 IN.output_size :  :  : 3 : 0
//var float IN.frame_count :  :  : 3 : 0
//var float IN.frame_direction :  :  : 3 : 0
//var float4 position : $vin.POSITION : ATTR0 : 0 : 1
//var float2 texCoord : $vin.TEXCOORD0 : ATTR8 : 1 : 1
//var float4 main_vertex.position : $vout.POSITION : HPOS : -1 : 1
//var float2 main_vertex.texCoord : $vout.TEXCOORD0 : TEX0 : -1 : 1
//var float4 main_vertex.t1 : $vout.TEXCOORD1 : TEX1 : -1 : 1
//var float4 main_vertex.t2 : $vout.TEXCOORD2 : TEX2 : -1 : 1



struct cg_input {
    vec2 _video_size;
    vec2 _texture_size;
    vec2 _output_size;
    float _frame_count;
    float _frame_direction;
};

struct out_vertex {
    vec4 _position2;
    vec2 _texCoord2;
    vec4 _t1;
    vec4 _t2;
};

uniform vec4 _modelViewProj1_vs[4];
uniform cg_input _IN1_vs;
vec4 _r0005;

 // main procedure, the original name was main_vertex
void main()
{

    out_vertex _OUT;
    vec2 _ps;

    _r0005.x = dot(_modelViewProj1_vs[0], cg_Position);
    _r0005.y = dot(_modelViewProj1_vs[1], cg_Position);
    _r0005.z = dot(_modelViewProj1_vs[2], cg_Position);
    _r0005.w = dot(_modelViewProj1_vs[3], cg_Position);
    _ps = 1.00000000E+00/_IN1_vs._texture_size;
    _OUT._t1 = cg_TexCoord.xyxy + vec4(0.00000000E+00, -_ps.y, -_ps.x, 0.00000000E+00);
    _OUT._t2 = cg_TexCoord.xyxy + vec4(_ps.x, 0.00000000E+00, 0.00000000E+00, _ps.y);
    cg_Varying2 = _OUT._t2;
    cg_Varying0.xy = cg_TexCoord.xy;
    cg_Varying1 = _OUT._t1;
    gl_Position = _r0005;
    return;
} // main end
