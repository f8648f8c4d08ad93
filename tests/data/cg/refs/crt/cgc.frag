// glslf output by Cg compiler
// cgc version 3.1.0013, build date Apr 24 2012
// command line args: -quiet -profile glslf -DPARAMETER_UNIFORM
// source file: shader.cg
//vendor NVIDIA Corporation
//version 3.1.0.13
//profile glslf
//program main_fragment
//semantic main_fragment.s0 : TEXUNIT0
//semantic main_fragment.IN
//semantic SCAN
//semantic GAMMA_IN
//var sampler2D s0 : TEXUNIT0 : _s01 0 : 2 : 1
//var float2 IN.video_size :  :  : 3 : 0
//var float2 IN.texture_size :  : _IN1._texture_size : 3 : 1
//var float2 IN.output_size :  :  : 3 : 0
//var float IN.frame_count :  :  : 3 : 0
//var float IN.frame_direction :  :  : 3 : 0
//var float SCAN :  : _SCAN : -1 : 1
//var float GAMMA_IN :  : _GAMMA_IN : -1 : 1
//var float2 tex : $vin.TEXCOORD0 : TEX0 : 0 : 1
//var float2 one : $vin.TEXCOORD1 : TEX1 : 1 : 1
//var float4 main_fragment : $vout.COLOR : COL : -1 : 1

#version 110

struct input {
    vec2 _video_size;
    vec2 _texture_size;
    vec2 _output_size;
    float _frame_count;
    float _frame_direction;
};

vec4 _ret_0;
vec3 _TMP8;
float _TMP14;
float _TMP13;
float _TMP12;
vec3 _TMP15;
float _TMP5;
vec3 _TMP6;
float _TMP11;
float _TMP10;
float _TMP9;
vec4 _TMP2;
vec2 _TMP1;
uniform sampler2D _s01;
uniform input _IN1;
vec2 _c0028;
vec3 _TMP29;
float _dist0039;
float _w0039;
float _TMP40;
float _x0041;
vec3 _r0045;
vec3 _x0053;
vec3 _TMP62;
uniform float _SCAN;
uniform float _GAMMA_IN;

 // main procedure, the original name was main_fragment
void main()
{

    vec2 _pos;
    vec2 _f;
    vec2 _base;
    vec3 _col;
    vec3 _outc;

    _pos = gl_TexCoord[0].xy*_IN1._texture_size - 5.00000000E-01;
    _f = fract(_pos);
    _TMP1 = floor(_pos);
    _base = (_TMP1 + 5.00000000E-01)/_IN1._texture_size;
    _c0028 = _base + vec2(-gl_TexCoord[1].x, 0.00000000E+00);
    _TMP2 = texture2D(_s01, _c0028);
    _TMP12 = pow(_TMP2.x, _GAMMA_IN);
    _TMP13 = pow(_TMP2.y, _GAMMA_IN);
    _TMP14 = pow(_TMP2.z, _GAMMA_IN);
    _TMP29 = vec3(_TMP12, _TMP13, _TMP14);
    _col = 1.25000000E-01*_TMP29;
    _TMP2 = texture2D(_s01, _base);
    _TMP12 = pow(_TMP2.x, _GAMMA_IN);
    _TMP13 = pow(_TMP2.y, _GAMMA_IN);
    _TMP14 = pow(_TMP2.z, _GAMMA_IN);
    _TMP29 = vec3(_TMP12, _TMP13, _TMP14);
    _col = _col + 3.75000000E-01*_TMP29;
    _c0028 = _base + vec2(gl_TexCoord[1].x, 0.00000000E+00);
    _TMP2 = texture2D(_s01, _c0028);
    _TMP12 = pow(_TMP2.x, _GAMMA_IN);
    _TMP13 = pow(_TMP2.y, _GAMMA_IN);
    _TMP14 = pow(_TMP2.z, _GAMMA_IN);
    _TMP29 = vec3(_TMP12, _TMP13, _TMP14);
    _col = _col + 3.75000000E-01*_TMP29;
    _c0028 = _base + vec2(2.00000000E+00*gl_TexCoord[1].x, 0.00000000E+00);
    _TMP2 = texture2D(_s01, _c0028);
    _TMP12 = pow(_TMP2.x, _GAMMA_IN);
    _TMP13 = pow(_TMP2.y, _GAMMA_IN);
    _TMP14 = pow(_TMP2.z, _GAMMA_IN);
    _TMP29 = vec3(_TMP12, _TMP13, _TMP14);
    _col = _col + 1.25000000E-01*_TMP29;
    _dist0039 = _f.y - 5.00000000E-01;
    _x0041 = (-_dist0039*_dist0039)/1.22499995E-01;
    _TMP40 = pow(2.71828198E+00, _x0041);
    _w0039 = _TMP40*(1.00000000E+00 + _SCAN*(_TMP40 - 1.00000000E+00));
    _r0045.x = dot(vec3( 1.00000000E+00, 5.00000007E-02, 0.00000000E+00), _col);
    _r0045.y = dot(vec3( 0.00000000E+00, 9.49999988E-01, 5.00000007E-02), _col);
    _r0045.z = dot(vec3( 1.99999996E-02, 0.00000000E+00, 1.00000000E+00), _col);
    _outc = _r0045*_w0039;
    if (_TMP40 > 5.00000000E-01) { // if begin
        _TMP5 = 1.00000000E+00;
    } else {
        _TMP5 = 8.99999976E-01;
    } // end if
    _x0053 = _outc*1.57079625E+00;
    _TMP9 = sin(_x0053.x);
    _TMP10 = sin(_x0053.y);
    _TMP11 = sin(_x0053.z);
    _TMP6 = vec3(_TMP9, _TMP10, _TMP11);
    _outc = _TMP6*float(_TMP5);
    _outc.xz = _outc.zx;
    _TMP15 = min(vec3( 1.00000000E+00, 1.00000000E+00, 1.00000000E+00), _outc);
    _TMP62 = max(vec3( 0.00000000E+00, 0.00000000E+00, 0.00000000E+00), _TMP15);
    _TMP12 = pow(_TMP62.x, 4.54545438E-01);
    _TMP13 = pow(_TMP62.y, 4.54545438E-01);
    _TMP14 = pow(_TMP62.z, 4.54545438E-01);
    _TMP8 = vec3(_TMP12, _TMP13, _TMP14);
    _ret_0 = vec4(_TMP8.x, _TMP8.y, _TMP8.z, 1.00000000E+00);
    gl_FragColor = _ret_0;
    return;
} // main end
