#version 330
out vec4 cg_Varying0;
out vec4 cg_Varying1;
in vec4 cg_Position;
in vec4 cg_TexCoord;
out vec4 cg_Color;
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
//semantic main_vertex.ORIG
//semantic STRENGTH
//semantic GAMMA
//var float4x4 modelViewProj :  : _modelViewProj1_vs[0], 4 : 3 : 1
//var float2 IN.video_size :  : _IN1_vs._video_size : 4 : 1
//var float2 IN.texture_size :  : _IN1_vs._texture_size : 4 : 1
//var float2 IN.output_size :  :  : 4 : 0
//var float IN.frame_count :  :  : 4 : 0
//var float IN.frame_direction :  :  : 4 : 0
//var float4 position : $vin.POSITION : ATTR0 : 0 : 1
//var float2 texCoord : $vin.TEXCOORD0 : ATTR8 : 1 : 1
//var float4 color : $vin.COLOR : ATTR3 : 2 : 1
//var float4 main_vertex.position : $vout.POSITION : HPOS : -1 : 1
//var float2 main_vertex.texCoord : $vout.TEXCOORD0 : TEX0 : -1 : 1
//var float2 main_vertex.origCoord : $vout.TEXCOORD1 : TEX1 : -1 : 1
//var float4 main_vertex.color : $vout.COLOR : COL0 : -1 : 1



struct cg_input {
    vec2 _video_size;
    vec2 _texture_size;
    vec2 _output_size;
    float _frame_count;
    float _frame_direction;
};

struct orig {
    vec2 _video_size1;
    vec2 _texture_size1;
    sampler2D _texture;
    vec2 _tex_coord;
};

struct out_vertex {
    vec4 _position2;
    vec2 _texCoord2;
    vec2 _origCoord;
    vec4 _color2;
};

uniform vec4 _modelViewProj1_vs[4];
uniform cg_input _IN1_vs;
vec4 _r0007;

 // main procedure, the original name was main_vertex
void main()
{

    out_vertex _OUT;

    _r0007.x = dot(_modelViewProj1_vs[0], cg_Position);
    _r0007.y = dot(_modelViewProj1_vs[1], cg_Position);
    _r0007.z = dot(_modelViewProj1_vs[2], cg_Position);
    _r0007.w = dot(_modelViewProj1_vs[3], cg_Position);
    _OUT._texCoord2 = cg_TexCoord.xy*(_IN1_vs._video_size/_IN1_vs._texture_size);
    cg_Varying0.xy = _OUT._texCoord2;
    cg_Varying1.xy = cg_TexCoord.xy;
    gl_Position = _r0007;
    cg_Color = vec4(1.0);
    return;
} // main end
