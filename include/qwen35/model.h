// The model driver (the caller's side of the forwards): weights checked and
// placed on a backend once, and a Session that owns the KV caches and Gated
// DeltaNet states of one sequence and decodes one token at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/checkpoint.h"
#include "qwen35/config.h"
#include "qwen35/forward.h"
#include "qwen35/kernels.h"
#include "qwen35/quant_weights.h"

namespace qwen35 {

class Model {
 public:
  // Checks every tensor's presence, dtype and shape against `config` and puts
  // it on `gpu`. Tensor names are `prefix` + the Hugging Face names (spec 2.1).
  // Throws Error naming the tensor and its file on any mismatch. `progress`, when set,
  // is called after every tensor with the bytes placed so far and the bytes expected
  // in all (a progress bar for large checkpoints); the last call has done == total.
  using LoadProgress = std::function<void(size_t bytes_done, size_t bytes_total)>;
  static std::unique_ptr<Model> load(GpuBackend& gpu, const Qwen35ForwardConfig& config,
                                     std::shared_ptr<const TensorSource> tensors, const std::string& prefix,
                                     const LoadProgress& progress = {});
  // The same for any layout the loader found (Checkpoint::layout): MLX names,
  // norms with the +1 already in, conv1d as [C, K, 1], quantized matrices.
  static std::unique_ptr<Model> load(GpuBackend& gpu, const Qwen35ForwardConfig& config,
                                     std::shared_ptr<const TensorSource> tensors, const CheckpointLayout& layout,
                                     const LoadProgress& progress = {});

  const Qwen35ForwardConfig& config() const { return config_; }
  GpuBackend& backend() const { return *gpu_; }
  // Bytes of weights a decode step reads (every matrix once, plus one embedding row).
  size_t weight_bytes_per_token() const;
  std::string weight_format() const;

  struct Layer {
    std::variant<FullAttentionLayer, LinearAttentionLayer> weights;
  };
  const std::vector<Layer>& layers() const { return layers_; }
  const QuantWeights& embedding() const { return *embedding_; }
  const QuantWeights& lm_head() const { return *lm_head_; }
  DevicePtr final_norm() const { return final_norm_.ptr(); }

 private:
  class Builder;
  Model() = default;

  Qwen35ForwardConfig config_;
  GpuBackend* gpu_ = nullptr;
  std::shared_ptr<const TensorSource> tensors_;  // mapped weights may alias it
  std::vector<std::unique_ptr<QuantWeights>> matrices_;
  std::vector<DeviceBuffer> vectors_;  // norms, conv weights, A_log, dt_bias as f32
  std::vector<Layer> layers_;
  const QuantWeights* embedding_ = nullptr;
  const QuantWeights* lm_head_ = nullptr;
  DeviceBuffer final_norm_;
};

// One sequence's decode state on a model: KV caches of `capacity` tokens and the
// recurrent states, with the scratch the forwards need.
class Session {
 public:
  Session(const Model& model, uint32_t capacity, KvDtype kv_dtype);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs token `token` at the next position and returns the logits [vocab],
  // valid until the next decode (they may be the backend's own buffer).
  // Throws Error, before changing any state, if the token id is outside the
  // vocabulary or the context is full.
  std::span<const float> decode(int32_t token);
  // decode without the logits, for a prompt token whose next-token distribution
  // nobody reads: the same states and caches afterwards, without the final
  // norm and the output projection (a third of a 0.8B token's bytes). The same
  // errors as decode.
  void feed(int32_t token);
  // The tokens in turn, feeding all but the last, whose logits it returns
  // (empty for no tokens).
  std::span<const float> prefill(std::span<const int32_t> tokens);
  // Back to an empty sequence (position 0, zero states).
  void reset();
  // For benchmarks: continue as if `position` tokens had been decoded. The KV
  // cache up to there holds arbitrary (finite) values, so attention reads a
  // realistic amount of memory; the logits mean nothing.
  void fast_forward(uint32_t position);
  // Bytes a decode step at the current position reads from the KV caches and
  // the recurrent states (weights: Model::weight_bytes_per_token).
  size_t state_bytes_per_token() const;

  uint32_t position() const { return position_; }
  uint32_t capacity() const { return capacity_; }
  KvDtype kv_dtype() const { return kernels_.kv_dtype; }

  // Called after every layer with the residual stream [hidden] (test and debug aid).
  using LayerObserver = std::function<void(uint32_t layer, std::span<const float> hidden)>;
  void set_layer_observer(LayerObserver observer) { layer_observer_ = std::move(observer); }
  // Named intermediate buffers inside every layer (see DebugHook).
  void set_debug_hook(DebugHook hook) { debug_hook_ = std::move(hook); }

 private:
  // Every layer, then with_logits the final norm and the logits gemv: the part
  // of a step whose launches do not depend on the token, so a backend may
  // record it once (each way).
  void run_layers(bool with_logits);
  // Checks the token and the room, then runs it at position_ (not advanced).
  void step(int32_t token, bool with_logits);

  const Model& model_;
  GpuBackend& gpu_;
  Stream stream_;
  Qwen35Kernels kernels_;
  uint32_t capacity_;
  uint32_t position_ = 0;
  FullAttentionScratch full_scratch_;
  LinearAttentionScratch linear_scratch_;
  std::vector<LayerKvCache> kv_caches_;              // one per full-attention layer
  std::vector<LinearAttentionState> linear_states_;  // one per Gated DeltaNet layer
  DeviceBuffer x_;           // [H] residual stream
  DeviceBuffer x_norm_;      // [H]
  DeviceBuffer logits_dev_;  // [vocab]
  DeviceBuffer step_params_;
  // [vocab], GpuBackend::allocate_host; null where logits_dev_ is host_readable.
  std::unique_ptr<float, std::function<void(float*)>> logits_;
  std::vector<float> hidden_host_;
  LayerObserver layer_observer_;
  DebugHook debug_hook_;
  std::optional<GraphHandle> recorded_steps_[2];  // run_layers(false), run_layers(true)
};

// A checkpoint with random weights in the exact Hugging Face layout of `config`
// (names under "model.language_model."), made deterministically from `seed`.
// Used as the built-in default model and by tests and benchmarks.
std::shared_ptr<TensorSource> make_random_weights(const Qwen35ForwardConfig& config, DType dtype, uint64_t seed);

}  // namespace qwen35
