// How far apart two models' next-token distributions are: KL divergence and
// top-1 agreement over a token sequence. `qwen35 compare` reports these for a
// weight or KV format against a reference (docs/accuracy.md).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace qwen35 {

struct PositionComparison {
  double kl;         // KL(P_reference || P_candidate) in nats
  bool top1_agrees;  // argmax equal
  double max_abs_logit_diff;
};

// One position: softmax of each logit vector (computed in double), then KL and argmax.
// Throws Error when the lengths differ or either vector is empty or not finite.
PositionComparison compare_logits(std::span<const float> reference, std::span<const float> candidate);

// Positions accumulated over a sequence.
class LogitComparison {
 public:
  void add(std::span<const float> reference, std::span<const float> candidate);
  size_t positions() const { return positions_.size(); }
  double mean_kl() const;
  double max_kl() const;
  double top1_agreement() const;  // fraction of positions, 0..1
  double max_abs_logit_diff() const;
  const std::vector<PositionComparison>& per_position() const { return positions_; }

 private:
  std::vector<PositionComparison> positions_;
};

}  // namespace qwen35
