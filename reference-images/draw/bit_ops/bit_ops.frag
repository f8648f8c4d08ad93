#version 330
#extension GL_ARB_gpu_shader5 : require
// Shifts, and/or/xor/not, bitfieldExtract/Insert (signed and unsigned), bitCount, findLSB, findMSB, bitfieldReverse.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    uint x = uint(uv.x * 64.0);
    uint y = uint(uv.y * 64.0);
    uint v = (x << 6u) | y;
    uint h = (v ^ (v >> 3u)) * 0x9E37u;
    h = h ^ (~v & 0xF0Fu);
    int sv = int(v) - 2048;
    uint ex = bitfieldExtract(h, 4, 7);
    int sex = bitfieldExtract(sv, 2, 5);
    uint ins = bitfieldInsert(v, x, 3, 4);
    int bc = bitCount(h);
    int lsb = findLSB(v);
    int msb = findMSB(sv);
    uint rev = bitfieldReverse(v) >> 20u;
    color = vec4(float(ex) / 127.0,
                 float(sex + 16) / 31.0,
                 float((ins & 255u) ^ (rev & 255u)) / 255.0,
                 float(bc + lsb + msb + 2) / 64.0);
}
