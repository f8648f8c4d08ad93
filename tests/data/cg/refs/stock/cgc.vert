// glslv output by Cg compiler
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
//var float4x4 modelViewProj :  : _modelViewProj1[0], 4 : 3 : 1
//var float2 IN.video_size :  : _IN1._video_size : 4 : 1
//var float2 IN.texture_size :  : _IN1._texture_size : 4 : 1
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

#version 110

struct input {
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

uniform vec4 _modelViewProj1[4];
uniform input _IN1;
vec4 _r0007;

 // main procedure, the original name was main_vertex
void main()
{

    out_vertex _OUT;

    _r0007.x = dot(_modelViewProj1[0], gl_Vertex);
    _r0007.y = dot(_modelViewProj1[1], gl_Vertex);
    _r0007.z = dot(_modelViewProj1[2], gl_Vertex);
    _r0007.w = dot(_modelViewProj1[3], gl_Vertex);
    _OUT._texCoord2 = gl_MultiTexCoord0.xy*(_IN1._video_size/_IN1._texture_size);
    gl_TexCoord[0].xy = _OUT._texCoord2;
    gl_TexCoord[1].xy = gl_MultiTexCoord0.xy;
    gl_Position = _r0007;
    gl_FrontColor = gl_Color;
    return;
} // main end
