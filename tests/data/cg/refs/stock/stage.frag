#version 330
in vec4 cg_Varying0;
in vec4 cg_Varying1;
out vec4 cg_FragColor;
// glslf cg_output by Cg compiler
// cgc version 3.1.0013, build date Apr 24 2012
// command line args: -quiet -profile glslf -DPARAMETER_UNIFORM
// source file: shader.cg
//vendor NVIDIA Corporation
//version 3.1.0.13
//profile glslf
//program main_fragment
//semantic main_fragment.decal : TEXUNIT0
//semantic main_fragment.lut
//semantic main_fragment.IN
//semantic main_fragment.ORIG
//semantic main_fragment.PASS1_unused
//semantic STRENGTH
//semantic GAMMA
//var sampler2D decal : TEXUNIT0 : _decal1 0 : 1 : 1
//var sampler2D lut :  : _lut1 : 2 : 1
//var float2 IN.video_size :  :  : 3 : 0
//var float2 IN.texture_size :  : _IN1._texture_size : 3 : 1
//var float2 IN.output_size :  : _IN1._output_size : 3 : 1
//var float IN.frame_count :  :  : 3 : 0
//var float IN.frame_direction :  :  : 3 : 0
//var float2 ORIG.video_size :  :  : 4 : 0
//var float2 ORIG.texture_size :  :  : 4 : 0
//var sampler2D ORIG.texture :  : _ORIG1._texture : 4 : 1
//var float2 ORIG.tex_coord :  :  : 4 : 0
//var float STRENGTH :  : _STRENGTH : -1 : 1
//var float GAMMA :  : _GAMMA : -1 : 1
//var float2 VOUT.texCoord : $vin.TEXCOORD0 : TEXCOORD0 : 0 : 1
//var float2 VOUT.origCoord : $vin.TEXCOORD1 : TEXCOORD1 : 0 : 1
//var float4 VOUT.color : $vin.COLOR :  : 0 : 0
//var float4 main_fragment : $vout.COLOR : COL : -1 : 1



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
    vec2 _texCoord;
    vec2 _origCoord;
    vec4 _color;
};

vec4 _ret_0;
int _TMP5;
float _TMP13;
float _TMP12;
float _TMP11;
vec3 _TMP14;
vec4 _TMP2;
vec4 _TMP1;
vec4 _TMP6;
uniform sampler2D _decal1;
uniform sampler2D _lut1;
uniform cg_input _IN1;
uniform orig _ORIG1;
vec3 _sum0031;
vec2 _step_0031;
vec2 _c0033;
float _l0034;
vec2 _c0040;
vec2 _r0052;
vec3 _TMP59;
vec3 _b0066;
uniform float _STRENGTH;
uniform float _GAMMA;

 // main procedure, the original name was main_fragment
void main()
{

    vec2 _px;
    vec3 _mixed;

    _px = 1.00000000E+00/_IN1._texture_size;
    _step_0031 = vec2(_px.x, 0.00000000E+00);
    _c0033 = cg_Varying0.xy + -_step_0031;
    _TMP6 = texture(_decal1, _c0033);
    _sum0031 = 2.50000000E-01*_TMP6.xyz;
    _TMP6 = texture(_decal1, cg_Varying0.xy);
    _sum0031 = _sum0031 + 5.00000000E-01*_TMP6.xyz;
    _c0033 = cg_Varying0.xy + _step_0031;
    _TMP6 = texture(_decal1, _c0033);
    _sum0031 = _sum0031 + 2.50000000E-01*_TMP6.xyz;
    _l0034 = dot(_sum0031, vec3( 2.98999995E-01, 5.87000012E-01, 1.14000000E-01));
    _TMP1 = texture(_ORIG1._texture, cg_Varying1.xy);
    _c0040 = vec2(_l0034, 5.00000000E-01);
    _TMP2 = texture(_lut1, _c0040);
    _mixed = _TMP1.xyz + _STRENGTH*(_TMP2.xyz - _TMP1.xyz);
    _r0052.x = dot(vec2( 1.00000000E+00, 0.00000000E+00), _mixed.xy);
    _r0052.y = dot(vec2( 0.00000000E+00, 1.00000000E+00), _mixed.xy);
    _mixed.xy = _r0052;
    _TMP14 = min(vec3( 1.00000000E+00, 1.00000000E+00, 1.00000000E+00), _mixed);
    _TMP59 = max(vec3( 0.00000000E+00, 0.00000000E+00, 0.00000000E+00), _TMP14);
    _b0066 = vec3(1.00000000E+00/_GAMMA, 1.00000000E+00/_GAMMA, 1.00000000E+00/_GAMMA);
    _TMP11 = pow(_TMP59.x, _b0066.x);
    _TMP12 = pow(_TMP59.y, _b0066.y);
    _TMP13 = pow(_TMP59.z, _b0066.z);
    _mixed = vec3(_TMP11, _TMP12, _TMP13);
    if (_IN1._output_size.x > 0.00000000E+00) { // if begin
        _TMP5 = 1;
    } else {
        _TMP5 = 0;
    } // end if
    _ret_0 = vec4(_mixed.x, _mixed.y, _mixed.z, 1.00000000E+00)*float(_TMP5);
    cg_FragColor = _ret_0;
    return;
} // main end
