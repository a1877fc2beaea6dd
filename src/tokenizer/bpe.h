// The BPE model of tokenizer.json over raw bytes: the vocabulary is decoded from GPT-2's
// byte-level characters once at load, so a piece is merged starting from its bytes.
// Merging follows Hugging Face's BPE::merge_word: lowest rank first, leftmost on ties.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer_json.h"

namespace qwen35 {

// Heterogeneous lookup, so that a string_view finds a std::string key without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// Token pair -> merge, in one open-addressing array: looked up for every adjacent pair of
// every uncached word, so it should cost one cache miss, not a node walk.
class MergeTable {
 public:
  struct Merge {
    int32_t rank;
    int32_t id;  // the token the pair becomes
  };
  void reserve(size_t count);
  // Keeps the first merge given for a pair (the lowest rank), as Hugging Face does.
  void insert(int32_t left, int32_t right, Merge merge);
  const Merge* find(int32_t left, int32_t right) const {
    const uint64_t key = pair_key(left, right);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.key == key) return &slot.merge;
      if (slot.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are below 2^31, so no pair is this
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge{};
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static size_t hash(uint64_t key) {  // the murmur3 finaliser
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return static_cast<size_t>(key);
  }
  std::vector<Slot> slots_ = std::vector<Slot>(1);
  size_t mask_ = 0;
  size_t size_ = 0;
};

class BpeModel {
 public:
  // `model` is tokenizer.json's "model" object without its vocab and merges, which come
  // in `tables`; `source` names the file for errors.
  BpeModel(const nlohmann::json& model, BpeTables tables, std::string_view source, size_t cache_entries);

  // Appends the ids of one pre-tokenizer piece. Not thread-safe (the cache and scratch
  // buffers are shared): the tokenizer serialises calls.
  void encode(std::string_view piece, std::vector<int32_t>& out);

  // Raw-byte token -> id.
  const StringIdMap& vocab() const { return vocab_; }
  int32_t max_id() const { return max_id_; }
  size_t merge_count() const { return merges_.size(); }

 private:
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    uint32_t length;  // 0 once merged into its left neighbour
  };
  struct Candidate {
    int32_t rank;
    int32_t pos;
    // std::push_heap builds a max-heap: "greater" means a higher rank, then a later position.
    bool operator<(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };

  void merge_word(std::string_view piece, std::vector<int32_t>& out);
  void push_candidate(int32_t left_pos);

  StringIdMap vocab_;
  int32_t max_id_ = -1;
  MergeTable merges_;
  int32_t byte_ids_[256] = {};
  bool ignore_merges_ = false;

  size_t cache_entries_;
  std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
  std::vector<Symbol> symbols_;        // scratch for merge_word
  std::vector<Candidate> candidates_;  // scratch heap for merge_word
};

}  // namespace qwen35
