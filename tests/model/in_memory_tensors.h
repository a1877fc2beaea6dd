// Test helpers for the model driver: a small Qwen3.5-shaped config, and a
// TensorSource that copies another one's views and lets a test drop or alter
// individual tensors to provoke load errors.
#pragma once

#include <map>
#include <memory>

#include "qwen35/checkpoint.h"

namespace qwen35::testing {

// 4 layers (3 Gated DeltaNet + 1 full attention), nv/nk = 2, small dims.
Qwen35ForwardConfig small_config();

class EditableTensors final : public TensorSource {
 public:
  explicit EditableTensors(std::shared_ptr<const TensorSource> base);
  const TensorView* find(std::string_view name) const override;
  std::vector<std::string> names() const override;
  std::string origin() const override { return "edited " + base_->origin(); }

  void erase(const std::string& name) { views_.erase(name); }
  TensorView& at(const std::string& name) { return views_.at(name); }

 private:
  std::shared_ptr<const TensorSource> base_;
  std::map<std::string, TensorView, std::less<>> views_;
};

}  // namespace qwen35::testing
