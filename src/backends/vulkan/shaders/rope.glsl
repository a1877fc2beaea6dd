// RoPE angles without float32's loss of digits at long contexts and without
// the driver's sin/cos (Vulkan only promises 2^-11 absolute error for those).
// The angle position * inv_freq is reduced modulo 2 pi in 64-bit fixed point,
// as a fraction of a turn, then sin and cos come from Taylor polynomials on
// [-pi/4, pi/4]; the error is about 1e-7 at any position below 2^32.

// floor(2^64 / (2 pi)): 1 / (2 pi) in 0.64 fixed point.
const uint64_t kInvTwoPi = 0x28be60db9391054aul;
// 2 pi / 2^64: one unit of the fixed-point turn, in radians.
const float kTurnUnit = 3.4061215800865545e-19;

// frac(position * inv_freq / (2 pi)) in 0.64 fixed point (wrapping is the modulo).
uint64_t rope_turns(uint position, float inv_freq) {
  const uint bits = floatBitsToUint(inv_freq);
  const int exponent = int((bits >> 23) & 0xffu);
  if (exponent == 0) return 0ul;  // zero or subnormal frequency: angle below 2^-94
  // inv_freq = mantissa * 2^-shift; its turns per position are (mantissa * kInvTwoPi) >> shift.
  const uint64_t mantissa = uint64_t((bits & 0x7fffffu) | 0x800000u);
  const int shift = 150 - exponent;
  const uint64_t lo = mantissa * (kInvTwoPi & 0xfffffffful);  // < 2^56
  const uint64_t hi = mantissa * (kInvTwoPi >> 32);           // < 2^54, weighs 2^32
  uint64_t per_position = 0ul;
  if (shift >= 32) {
    if (shift - 32 < 64) per_position += hi >> (shift - 32);
    if (shift < 64) per_position += lo >> shift;
  } else if (shift >= 0) {
    per_position = (hi << (32 - shift)) + (lo >> shift);
  } else if (shift > -32) {  // inv_freq >= 2^24: only the fraction of a turn matters
    per_position = (hi << (32 - shift)) + (lo << (-shift));
  }
  return uint64_t(position) * per_position;
}

// sin and cos of the angle `turns` (fraction of a turn, 0.64 fixed point).
void sincos_turns(uint64_t turns, out float s, out float c) {
  // Nearest quarter turn, and the remainder in [-1/8, 1/8) turn = [-pi/4, pi/4).
  const uint64_t quarter = (turns + (1ul << 61)) >> 62;
  const float x = float(int64_t(turns - (quarter << 62))) * kTurnUnit;
  const float x2 = x * x;
  const float sin_x = x * (1.0 + x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362880.0)))));
  const float cos_x =
      1.0 + x2 * (-0.5 + x2 * (1.0 / 24.0 + x2 * (-1.0 / 720.0 + x2 * (1.0 / 40320.0 + x2 * (-1.0 / 3628800.0)))));
  const uint q = uint(quarter & 3ul);
  s = q == 0u ? sin_x : q == 1u ? cos_x : q == 2u ? -sin_x : -cos_x;
  c = q == 0u ? cos_x : q == 1u ? -sin_x : q == 2u ? -cos_x : sin_x;
}
