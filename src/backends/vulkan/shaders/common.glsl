// Included first by every shader. A DevicePtr is a Vulkan buffer device
// address, so kernel arguments are push constants holding 64-bit addresses,
// read through these buffer-reference types (layouts match include/qwen35/*.h).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_16bit_storage : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Halves { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Words4 { uvec4 v[]; };

// DecodeStepParams (kernels.h): the per-token values, read at run time so a
// recorded command buffer replays unchanged.
layout(buffer_reference, std430, buffer_reference_align = 4) buffer StepParams {
  uint position;
  uint cache_pos;
  uint seq_len;
  uint reserved;
};

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }
float silu(float x) { return x / (1.0 + exp(-x)); }

// True when every address is a multiple of 16 bytes (vector loads allowed).
bool aligned16(uint64_t a, uint64_t b) { return ((a | b) & 15ul) == 0ul; }
