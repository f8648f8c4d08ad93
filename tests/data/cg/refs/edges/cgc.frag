// glslf output by Cg compiler
// cgc version 3.1.0013, build date Apr 24 2012
// command line args: -quiet -profile glslf -DPARAMETER_UNIFORM
// source file: shader.cg
//vendor NVIDIA Corporation
//version 3.1.0.13
//profile glslf
//program main_fragment
//semantic main_fragment.IN
//semantic XBR_Y_WEIGHT
//semantic decal : TEXUNIT0
//var float2 IN.video_size :  :  : 1 : 0
//var float2 IN.texture_size :  : _IN1._texture_size : 1 : 1
//var float2 IN.output_size :  :  : 1 : 0
//var float IN.frame_count :  :  : 1 : 0
//var float IN.frame_direction :  :  : 1 : 0
//var float XBR_Y_WEIGHT :  : _XBR_Y_WEIGHT : -1 : 1
//var sampler2D decal : TEXUNIT0 : _decal 0 : -1 : 1
//var float2 VAR.texCoord : $vin.TEXCOORD0 : TEXCOORD0 : 0 : 1
//var float4 VAR.t1 : $vin.TEXCOORD1 : TEXCOORD1 : 0 : 1
//var float4 VAR.t2 : $vin.TEXCOORD2 : TEXCOORD2 : 0 : 1
//var float4 main_fragment : $vout.COLOR : COL : -1 : 1

#version 110

struct input {
    vec2 _video_size;
    vec2 _texture_size;
    vec2 _output_size;
    float _frame_count;
    float _frame_direction;
};

struct out_vertex {
    vec2 _texCoord;
    vec4 _t1;
    vec4 _t2;
};

vec4 _ret_0;
float _TMP9;
float _TMP14;
float _TMP13;
float _TMP12;
float _TMP11;
float _TMP15;
bool _TMP6;
bool _TMP5;
vec4 _TMP4;
vec4 _TMP3;
vec4 _TMP2;
vec4 _TMP1;
vec4 _TMP0;
uniform input _IN1;
vec4 _r0033;
vec4 _TMP46;
vec4 _a0049;
vec2 _x0051;
float _x0057;
float _TMP58;
vec3 _b0065;
float _c0067;
float _a0069;
uniform float _XBR_Y_WEIGHT;
uniform sampler2D _decal;

 // main procedure, the original name was main_fragment
void main()
{

    vec3 _Y;
    float _e;
    bvec4 _c;
    vec4 _w;
    vec2 _fp;
    vec3 _res;

    _TMP0 = texture2D(_decal, gl_TexCoord[1].xy);
    _TMP1 = texture2D(_decal, gl_TexCoord[1].zw);
    _TMP2 = texture2D(_decal, gl_TexCoord[0].xy);
    _TMP3 = texture2D(_decal, gl_TexCoord[2].xy);
    _TMP4 = texture2D(_decal, gl_TexCoord[2].zw);
    _Y = _XBR_Y_WEIGHT*vec3( 2.12599993E-01, 7.15200007E-01, 7.22000003E-02);
    _r0033.x = dot(_TMP0.xyz, _Y);
    _r0033.y = dot(_TMP1.xyz, _Y);
    _r0033.z = dot(_TMP3.xyz, _Y);
    _r0033.w = dot(_TMP4.xyz, _Y);
    _e = dot(_TMP2.xyz, _Y);
    _a0049 = _r0033 - vec4(_e, _e, _e, _e);
    _TMP46 = abs(_a0049);
    _c = bvec4(_TMP46.x < 1.50000000E+01, _TMP46.y < 1.50000000E+01, _TMP46.z < 1.50000000E+01, _TMP46.w < 1.50000000E+01);
    _w = vec4(_c.x ? 1.00000000E+00 : (5.00000000E-01*_r0033.wzyx).x, _c.y ? 2.00000000E+00 : (5.00000000E-01*_r0033.wzyx).y, _c.z ? 3.00000000E+00 : (5.00000000E-01*_r0033.wzyx).z, _c.w ? 4.00000000E+00 : (5.00000000E-01*_r0033.wzyx).w);
    _x0051 = gl_TexCoord[0].xy*_IN1._texture_size;
    _fp = fract(_x0051);
    _res = _TMP2.xyz;
    _TMP5 = _c.x || _c.y;
    _TMP6 = _c.x && _c.y && _c.z && _c.w;
    if (_TMP5 && !_TMP6) { // if begin
        _x0057 = (_fp.x + _fp.y) - 5.00000000E-01;
        _TMP15 = min(1.00000000E+00, _x0057);
        _TMP58 = max(0.00000000E+00, _TMP15);
        _b0065 = (_TMP0.xyz + _TMP1.xyz)*5.00000000E-01;
        _res = _TMP2.xyz + _TMP58*(_b0065 - _TMP2.xyz);
    } else {
        _a0069 = _w.x/2.00000000E+00;
        _TMP11 = abs(_a0069);
        _TMP12 = fract(_TMP11);
        _TMP13 = abs(2.00000000E+00);
        _c0067 = _TMP12*_TMP13;
        if (_w.x < 0.00000000E+00) { // if begin
            _TMP14 = -_c0067;
        } else {
            _TMP14 = _c0067;
        } // end if
        if (_c.z || _TMP14 > 7.50000000E-01) { // if begin
            _res = _TMP2.xyz*7.50000000E-01 + _TMP3.xyz*2.50000000E-01;
        } // end if
    } // end if
    _TMP9 = dot(_w, vec4( 9.99999978E-03, 1.99999996E-02, 2.99999993E-02, 3.99999991E-02));
    _ret_0 = vec4(_res.x, _res.y, _res.z, _TMP9*1.00000001E-01 + 5.00000000E-01);
    gl_FragColor = _ret_0;
    return;
} // main end
