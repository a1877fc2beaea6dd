// Session: one sequence decoded token by token through the layer forwards.
#include "qwen35/model.h"

namespace qwen35 {

Session::Session(const Model& model, uint32_t capacity, KvDtype kv_dtype)
    : model_(model),
      gpu_(model.backend()),
      stream_(gpu_.default_stream()),
      kernels_(Qwen35Kernels::resolve(gpu_, kv_dtype)),
      capacity_(capacity) {
  const Qwen35ForwardConfig& c = model.config();
  if (capacity == 0) fail("context length must be at least 1 token");
  if (capacity > c.max_position_embeddings) {
    fail("context length {} exceeds the model's max_position_embeddings {}", capacity, c.max_position_embeddings);
  }
  full_scratch_ = FullAttentionScratch::allocate(gpu_, c, stream_);
  linear_scratch_ = LinearAttentionScratch::allocate(gpu_, c, stream_);
  for (LayerType type : c.layer_types) {
    if (type == LayerType::kFullAttention) {
      kv_caches_.push_back(LayerKvCache::allocate(gpu_, c, capacity, kv_dtype));
    } else {
      linear_states_.push_back(LinearAttentionState::allocate(gpu_, c, stream_));
    }
  }
  x_ = DeviceBuffer(gpu_, c.hidden * sizeof(float));
  x_norm_ = DeviceBuffer(gpu_, c.hidden * sizeof(float));
  logits_dev_ = DeviceBuffer(gpu_, size_t{c.vocab} * sizeof(float));
  step_params_ = DeviceBuffer(gpu_, sizeof(DecodeStepParams));
  // Where the host can read the device's logits in place, decode returns them
  // there: copying 1 MB of logits (half of them from the other core's cache)
  // took 50 us of each token on the CPU backend.
  if (!gpu_.host_readable(logits_dev_.ptr(), logits_dev_.bytes())) {
    logits_ = {static_cast<float*>(gpu_.allocate_host(logits_dev_.bytes())),
               [gpu = &gpu_](float* host) { gpu->release_host(host); }};
  }
  hidden_host_.resize(c.hidden);
  gpu_.synchronize(stream_);
}

Session::~Session() {
  for (const std::optional<GraphHandle>& graph : recorded_steps_) {
    if (graph) gpu_.destroy_graph(*graph);
  }
}

void Session::run_layers(bool with_logits) {
  const Qwen35ForwardConfig& c = model_.config();
  // The step's host values only feed the forwards' checks; kernels read step_params_.
  const DecodeStep step{.position = position_, .cache_pos = position_, .params = step_params_.ptr()};
  const DebugHook* hook = debug_hook_ ? &debug_hook_ : nullptr;
  size_t full_index = 0, linear_index = 0;
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    const auto& weights = model_.layers()[i].weights;
    if (const auto* full = std::get_if<FullAttentionLayer>(&weights)) {
      const DevicePtr out = forward_full_attention(gpu_, c, kernels_, *full, full_scratch_, kv_caches_[full_index++],
                                                   step, x_.ptr(), stream_, hook);
      gpu_.copy(x_.ptr(), out, c.hidden * sizeof(float), stream_);
    } else {
      forward_linear_attention(gpu_, c, kernels_, std::get<LinearAttentionLayer>(weights),
                               linear_states_[linear_index++], linear_scratch_, x_.ptr(), x_.ptr(), stream_, hook);
    }
    if (layer_observer_) {
      gpu_.download(hidden_host_.data(), x_.ptr(), c.hidden * sizeof(float), stream_);
      gpu_.synchronize(stream_);
      layer_observer_(i, hidden_host_);
    }
  }
  if (!with_logits) return;
  // logits = W_lm rms(x) * (1 + norm)
  launch(gpu_, kernels_.rms_norm,
         RmsNormArgs{.x = x_.ptr(), .weight = model_.final_norm(), .y = x_norm_.ptr(), .n_rows = 1,
                     .row_len = c.hidden, .x_row_stride = c.hidden, .y_row_stride = c.hidden, .eps = c.rms_eps},
         stream_);
  model_.lm_head().gemv(gpu_, x_norm_.ptr(), logits_dev_.ptr(), stream_);
}

void Session::reset() {
  for (LinearAttentionState& state : linear_states_) state.reset(gpu_, stream_);
  gpu_.synchronize(stream_);
  position_ = 0;  // the KV caches need no clearing: attention reads only positions < seq_len
}

void Session::fast_forward(uint32_t position) {
  if (position >= capacity_) fail("fast_forward to {} is beyond the context length {}", position, capacity_);
  // 0x3c in every byte is small and finite in every KV dtype (0.0115 in f32 and
  // bf16, 1.06 in f16, 1.5 times a 0.0115 scale in fp8).
  for (LayerKvCache& kv : kv_caches_) {
    gpu_.fill(kv.k.ptr(), 0x3c, kv.k.bytes(), stream_);
    gpu_.fill(kv.v.ptr(), 0x3c, kv.v.bytes(), stream_);
  }
  gpu_.synchronize(stream_);
  position_ = position;
}

size_t Session::state_bytes_per_token() const {
  const Qwen35ForwardConfig& c = model_.config();
  const size_t kv = size_t{2} * (position_ + 1) * kv_row_bytes(kernels_.kv_dtype, c.kv_dim()) * kv_caches_.size();
  size_t recurrent = 0;
  for (const LinearAttentionState& state : linear_states_) recurrent += state.recurrent.bytes() + state.conv.bytes();
  return kv + recurrent;
}

void Session::step(int32_t token, bool with_logits) {
  const Qwen35ForwardConfig& c = model_.config();
  if (token < 0 || static_cast<uint32_t>(token) >= c.vocab) {
    fail("token id {} is outside the vocabulary (0 .. {})", token, c.vocab - 1);
  }
  if (position_ >= capacity_) {
    fail("context is full: position {} reached the context length of {} tokens", position_, capacity_);
  }
  upload_decode_step(gpu_, step_params_.ptr(), position_, position_, stream_);
  model_.embedding().dequantize_row(gpu_, static_cast<uint32_t>(token), x_.ptr(), stream_);
  // Observers and hooks read buffers between launches, so they run everything directly.
  const bool record = gpu_.supports_capture() && !layer_observer_ && !debug_hook_;
  std::optional<GraphHandle>& recorded = recorded_steps_[with_logits ? 1 : 0];
  if (record && !recorded) {
    gpu_.begin_capture(stream_);
    run_layers(with_logits);
    recorded = gpu_.end_capture(stream_);
  }
  if (record) {
    gpu_.replay(*recorded, stream_);
  } else {
    run_layers(with_logits);
  }
}

std::span<const float> Session::decode(int32_t token) {
  step(token, true);
  const float* logits = logits_.get();
  if (logits) gpu_.download(logits_.get(), logits_dev_.ptr(), logits_dev_.bytes(), stream_);
  gpu_.synchronize(stream_);
  if (!logits) logits = static_cast<const float*>(gpu_.host_readable(logits_dev_.ptr(), logits_dev_.bytes()));
  ++position_;
  return {logits, model_.config().vocab};
}

void Session::feed(int32_t token) {
  step(token, false);
  gpu_.synchronize(stream_);
  ++position_;
}

std::span<const float> Session::prefill(std::span<const int32_t> tokens) {
  if (tokens.empty()) return {};
  for (const int32_t token : tokens.first(tokens.size() - 1)) feed(token);
  return decode(tokens.back());
}

}  // namespace qwen35
