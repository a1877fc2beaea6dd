// ggml block types (include/qwen35/gguf_quants.h is the specification), chosen
// at build time by one of GGUF_Q8_0, GGUF_Q4_0, GGUF_Q4_K, GGUF_Q5_K, GGUF_Q6_K
// (vulkan.cmake compiles one module per type). decode_unit writes elements
// 32 u .. 32 u + 31 of a row as the specification's dequantizer does, products
// and differences rounded as written (`precise` forbids fused multiply-adds),
// so row_to_f32 is bit-exact and the gemvs differ from the reference only in
// the order of their sums. Blocks are only 2-byte aligned: bytes come from
// 16-bit words. Included by elements.glsl, after the f16 conversion.
#define GGUF_BLOCKS 1

#if defined(GGUF_Q8_0)
const uint kBlockElems = 32, kBlockBytes = 34;
#elif defined(GGUF_Q4_0)
const uint kBlockElems = 32, kBlockBytes = 18;
#elif defined(GGUF_Q4_K)
const uint kBlockElems = 256, kBlockBytes = 144;
#elif defined(GGUF_Q5_K)
const uint kBlockElems = 256, kBlockBytes = 176;
#elif defined(GGUF_Q6_K)
const uint kBlockElems = 256, kBlockBytes = 210;
#endif

uint64_t matrix_row_bytes(uint cols) { return uint64_t(cols / kBlockElems) * kBlockBytes; }

// Byte `offset` of the block at `block` (an even address).
uint byte_at(uint64_t block, uint offset) {
  return (uint(Halves(block).v[offset >> 1]) >> (8u * (offset & 1u))) & 0xffu;
}
// The fp16 at an even `offset` of the block.
float half_at(uint64_t block, uint offset) { return f16_to_f32(uint(Halves(block).v[offset >> 1])); }

#if defined(GGUF_Q4_K) || defined(GGUF_Q5_K)
// gguf_scale_min_k4: the 6-bit scale and min of sub-block j from the 12 bytes at offset 4.
void scale_min_k4(uint64_t block, uint j, out uint scale, out uint min_value) {
  if (j < 4u) {
    scale = byte_at(block, 4u + j) & 63u;
    min_value = byte_at(block, 8u + j) & 63u;
  } else {
    scale = (byte_at(block, 8u + j) & 0xfu) | ((byte_at(block, j) >> 6) << 4);
    min_value = (byte_at(block, 8u + j) >> 4) | ((byte_at(block, 4u + j) >> 6) << 4);
  }
}
#endif

void decode_unit(uint64_t row, uint u, out float w[32]) {
#if defined(GGUF_Q8_0)
  const uint64_t block = row + uint64_t(u) * kBlockBytes;
  const float d = half_at(block, 0u);
  for (uint i = 0u; i < 32u; ++i) {
    const int q = int(byte_at(block, 2u + i) << 24) >> 24;  // sign-extended
    w[i] = float(q) * d;
  }
#elif defined(GGUF_Q4_0)
  const uint64_t block = row + uint64_t(u) * kBlockBytes;
  const float d = half_at(block, 0u);
  for (uint j = 0u; j < 16u; ++j) {
    const uint b = byte_at(block, 2u + j);
    w[j] = float(int(b & 0xfu) - 8) * d;
    w[j + 16u] = float(int(b >> 4) - 8) * d;
  }
#elif defined(GGUF_Q4_K) || defined(GGUF_Q5_K)
  const uint64_t block = row + uint64_t(u / 8u) * kBlockBytes;
  const uint sub = u % 8u, chunk = sub / 2u, half_index = sub % 2u;
  uint scale, min_value;
  scale_min_k4(block, sub, scale, min_value);
  const float d1 = half_at(block, 0u) * float(scale), m1 = half_at(block, 2u) * float(min_value);
#if defined(GGUF_Q5_K)
  const uint qs = 48u + 32u * chunk;
#else
  const uint qs = 16u + 32u * chunk;
#endif
  for (uint l = 0u; l < 32u; ++l) {
    uint q = half_index == 0u ? byte_at(block, qs + l) & 0xfu : byte_at(block, qs + l) >> 4;
#if defined(GGUF_Q5_K)
    q += ((byte_at(block, 16u + l) >> (2u * chunk + half_index)) & 1u) << 4;
#endif
    precise float value = d1 * float(q) - m1;
    w[l] = value;
  }
#elif defined(GGUF_Q6_K)
  const uint64_t block = row + uint64_t(u / 8u) * kBlockBytes;
  const uint first = 32u * (u % 8u), h = first / 128u, k = (first % 128u) / 32u;
  const float d = half_at(block, 208u);
  for (uint l = 0u; l < 32u; ++l) {
    const uint low = byte_at(block, 64u * h + 32u * (k & 1u) + l);
    const uint high = (byte_at(block, 128u + 32u * h + l) >> (2u * k)) & 3u;
    const int q = int((k < 2u ? low & 0xfu : low >> 4) | (high << 4)) - 32;
    const int scale = int(byte_at(block, 192u + 8u * h + 2u * k + l / 16u) << 24) >> 24;
    w[l] = d * float(scale) * float(q);
  }
#endif
}
