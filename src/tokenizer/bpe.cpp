// Loading the BPE vocabulary and merges, and merging one piece with a binary heap of
// candidate pairs over a linked list of symbols: O(n log n) in the piece's length, so a
// megabyte without a single split (long runs of one letter) is still fast.
#include "bpe.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "qwen35/error.h"
#include "utf8.h"

namespace qwen35 {

namespace {

// Pieces longer than this are rarely seen twice; caching them only churns the cache.
constexpr size_t kMaxCachedPieceBytes = 256;

std::string bytes_of(const std::string& token, std::string_view source, std::string_view what) {
  auto bytes = utf8::byte_level_table().decode(token);
  if (!bytes) fail("{}: {} \"{}\" is not written in byte-level (GPT-2) characters", source, what, token);
  return *std::move(bytes);
}

}  // namespace

void MergeTable::reserve(size_t count) {
  size_t capacity = 16;
  while (capacity < count * 2) capacity *= 2;  // at most half full keeps probes short
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  size_ = 0;
}

void MergeTable::insert(int32_t left, int32_t right, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    reserve(size_ + 1);
    for (const Slot& slot : old) {
      if (slot.key != kEmpty) insert(static_cast<int32_t>(slot.key >> 32), static_cast<int32_t>(slot.key), slot.merge);
    }
  }
  const uint64_t key = pair_key(left, right);
  for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.key == key) return;
    if (slot.key == kEmpty) {
      slot = {key, merge};
      ++size_;
      return;
    }
  }
}

BpeModel::BpeModel(const nlohmann::json& model, BpeTables tables, std::string_view source, size_t cache_entries)
    : cache_entries_(cache_entries) {
  if (const std::string type = model.value("type", std::string("BPE")); type != "BPE") {
    fail("{}: model type is \"{}\", only BPE is supported", source, type);
  }
  if (!tables.has_vocab) fail("{}: model has no \"vocab\" object", source);
  if (!tables.has_merges) fail("{}: model has no \"merges\" array", source);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty()) {
      fail("{}: BPE with a non-empty {} is not supported", source, key);
    }
  }
  if (model.value("byte_fallback", false)) fail("{}: BPE with byte_fallback is not supported", source);
  ignore_merges_ = model.value("ignore_merges", false);

  vocab_.reserve(tables.vocab.size());
  for (auto& [token, id] : tables.vocab) {
    if (id < 0 || id > INT32_MAX) {
      fail("{}: vocab entry \"{}\" has no valid id, expected a non-negative 32-bit integer", source, token);
    }
    if (!vocab_.emplace(bytes_of(token, source, "vocab token"), static_cast<int32_t>(id)).second) {
      fail("{}: vocab token \"{}\" appears twice", source, token);
    }
    max_id_ = std::max(max_id_, static_cast<int32_t>(id));
  }

  for (int b = 0; b < 256; ++b) {
    const auto it = vocab_.find(std::string_view(std::string(1, static_cast<char>(b))));
    if (it == vocab_.end()) {
      fail("{}: vocab lacks the single-byte token for byte 0x{:02x} (\"{}\"), which byte-level BPE needs", source, b,
           utf8::byte_level_table().encode(std::string(1, static_cast<char>(b))));
    }
    byte_ids_[b] = it->second;
  }

  if (tables.bad_merge >= 0) {
    fail("{}: merge {} is {}, expected \"a b\" or [\"a\", \"b\"]", source, tables.bad_merge, tables.bad_merge_text);
  }
  merges_.reserve(tables.merges.size());
  std::string joined;
  for (size_t rank = 0; rank < tables.merges.size(); ++rank) {
    const auto& [left, right] = tables.merges[rank];
    const std::string left_bytes = bytes_of(left, source, "merge token");
    const std::string right_bytes = bytes_of(right, source, "merge token");
    joined.assign(left_bytes).append(right_bytes);
    const auto left_it = vocab_.find(left_bytes);
    const auto right_it = vocab_.find(right_bytes);
    const auto merged_it = vocab_.find(joined);
    if (left_it == vocab_.end() || right_it == vocab_.end() || merged_it == vocab_.end()) {
      fail("{}: merge {} (\"{}\" + \"{}\") names a token missing from the vocab", source, rank, left, right);
    }
    merges_.insert(left_it->second, right_it->second, {static_cast<int32_t>(rank), merged_it->second});
  }
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& out) {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    out.push_back(byte_ids_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (ignore_merges_) {
    if (const auto it = vocab_.find(piece); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = cache_entries_ > 0 && piece.size() <= kMaxCachedPieceBytes;
  if (cacheable) {
    if (const auto it = cache_.find(piece); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t start = out.size();
  merge_word(piece, out);
  if (cacheable) {
    // Dropping everything when full is crude but keeps lookups cheap and adapts to new text.
    if (cache_.size() >= cache_entries_) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<int32_t>(out.begin() + static_cast<ptrdiff_t>(start), out.end()));
  }
}

void BpeModel::push_candidate(int32_t left_pos) {
  const Symbol& left = symbols_[static_cast<size_t>(left_pos)];
  if (left.next < 0) return;
  if (const MergeTable::Merge* merge = merges_.find(left.id, symbols_[static_cast<size_t>(left.next)].id)) {
    candidates_.push_back({merge->rank, left_pos});
    std::push_heap(candidates_.begin(), candidates_.end());
  }
}

void BpeModel::merge_word(std::string_view piece, std::vector<int32_t>& out) {
  const auto n = static_cast<int32_t>(piece.size());
  symbols_.resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    symbols_[static_cast<size_t>(i)] = {byte_ids_[static_cast<uint8_t>(piece[static_cast<size_t>(i)])], i - 1,
                                        i + 1 < n ? i + 1 : -1, 1};
  }
  candidates_.clear();
  for (int32_t i = 0; i + 1 < n; ++i) push_candidate(i);

  while (!candidates_.empty()) {
    std::pop_heap(candidates_.begin(), candidates_.end());
    const Candidate top = candidates_.back();
    candidates_.pop_back();
    Symbol& left = symbols_[static_cast<size_t>(top.pos)];
    if (left.length == 0 || left.next < 0) continue;
    Symbol& right = symbols_[static_cast<size_t>(left.next)];
    // Stale entries (either side merged since) no longer name the same pair; ranks are unique.
    const MergeTable::Merge* merge = merges_.find(left.id, right.id);
    if (merge == nullptr || merge->rank != top.rank) continue;
    left.id = merge->id;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols_[static_cast<size_t>(left.next)].prev = top.pos;
    if (left.prev >= 0) push_candidate(left.prev);
    push_candidate(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols_[static_cast<size_t>(i)].next) out.push_back(symbols_[static_cast<size_t>(i)].id);
}

}  // namespace qwen35
