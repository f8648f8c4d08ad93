#version 330
out vec4 cg_Varying0;
out vec4 cg_Varying1;
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
//semantic SCAN
//semantic GAMMA_IN
//var float4x4 modelViewProj :  : _modelViewProj1_vs[0], 4 : 2 : 1
//var float2 IN.video_size :  :  : 6 : 0
//var float2 IN.texture_size :  : _IN1_vs._texture_size : 6 : 1
//var float2 IN.output_size :  :  : 6 : 0
//var float IN.frame_count :  :  : 6 : 0
//var float IN.frame_direction :  :  : 6 : 0
//var float4 position : $vin.POSITION : ATTR0 : 0 : 1
//var float2 tex : $vin.TEXCOORD0 : ATTR8 : 1 : 1
//var float4 oPosition : $vout.POSITION : HPOS : 3 : 1
//var float2 oTex : $vout.TEXCOORD0 : TEX0 : 4 : 1
//var float2 oOne : $vout.TEXCOORD1 : TEX1 : 5 : 1



struct cg_input {
    vec2 _video_size;
    vec2 _texture_size;
    vec2 _output_size;
    float _frame_count;
    float _frame_direction;
};

vec4 _oPosition1;
vec2 _oOne1;
vec2 _oTex1;
uniform vec4 _modelViewProj1_vs[4];
uniform cg_input _IN1_vs;
vec4 _r0006;

 // main procedure, the original name was main_vertex
void main()
{


    _r0006.x = dot(_modelViewProj1_vs[0], cg_Position);
    _r0006.y = dot(_modelViewProj1_vs[1], cg_Position);
    _r0006.z = dot(_modelViewProj1_vs[2], cg_Position);
    _r0006.w = dot(_modelViewProj1_vs[3], cg_Position);
    _oPosition1 = _r0006;
    _oTex1 = cg_TexCoord.xy;
    _oOne1 = 1.00000000E+00/_IN1_vs._texture_size;
    cg_Varying0.xy = cg_TexCoord.xy;
    cg_Varying1.xy = _oOne1;
    gl_Position = _r0006;
} // main end
