#include "qwen35/logit_comparison.h"

#include <algorithm>
#include <cmath>

#include "qwen35/error.h"
#include "qwen35/sampling.h"

namespace qwen35 {
namespace {

// log softmax(logits) in double.
std::vector<double> log_softmax(std::span<const float> logits, const char* which) {
  double max = -INFINITY;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!std::isfinite(logits[i])) fail("{} logit {} is {}: cannot compare distributions", which, i, logits[i]);
    max = std::max(max, double{logits[i]});
  }
  double sum = 0;
  for (float l : logits) sum += std::exp(double{l} - max);
  const double log_sum = max + std::log(sum);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double{logits[i]} - log_sum;
  return out;
}

}  // namespace

PositionComparison compare_logits(std::span<const float> reference, std::span<const float> candidate) {
  if (reference.empty() || reference.size() != candidate.size()) {
    fail("cannot compare logits of {} and {} entries (the two models must share one vocabulary)", reference.size(),
         candidate.size());
  }
  const std::vector<double> log_p = log_softmax(reference, "reference");
  const std::vector<double> log_q = log_softmax(candidate, "candidate");
  double kl = 0, max_diff = 0;
  for (size_t i = 0; i < log_p.size(); ++i) {
    kl += std::exp(log_p[i]) * (log_p[i] - log_q[i]);
    max_diff = std::max(max_diff, std::fabs(double{reference[i]} - double{candidate[i]}));
  }
  return PositionComparison{.kl = std::max(kl, 0.0),  // rounding can leave -1e-17 for equal inputs
                            .top1_agrees = argmax(reference) == argmax(candidate),
                            .max_abs_logit_diff = max_diff};
}

void LogitComparison::add(std::span<const float> reference, std::span<const float> candidate) {
  positions_.push_back(compare_logits(reference, candidate));
}

double LogitComparison::mean_kl() const {
  double sum = 0;
  for (const PositionComparison& p : positions_) sum += p.kl;
  return positions_.empty() ? 0.0 : sum / static_cast<double>(positions_.size());
}

double LogitComparison::max_kl() const {
  double max = 0;
  for (const PositionComparison& p : positions_) max = std::max(max, p.kl);
  return max;
}

double LogitComparison::top1_agreement() const {
  const auto agree = std::count_if(positions_.begin(), positions_.end(), [](const auto& p) { return p.top1_agrees; });
  return positions_.empty() ? 0.0 : static_cast<double>(agree) / static_cast<double>(positions_.size());
}

double LogitComparison::max_abs_logit_diff() const {
  double max = 0;
  for (const PositionComparison& p : positions_) max = std::max(max, p.max_abs_logit_diff);
  return max;
}

}  // namespace qwen35
