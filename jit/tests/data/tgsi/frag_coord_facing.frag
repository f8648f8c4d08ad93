#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec2 p = gl_FragCoord.xy / 64.0;
  float z = gl_FragCoord.z + gl_FragCoord.w;
  color = vec4(p + uv * 0.01, z * 0.5, gl_FrontFacing ? 1.0 : 0.0);
}
