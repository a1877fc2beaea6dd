// Session behaviour: bad token ids and a full context are refused before any
// state changes (so decoding continues exactly as if they never happened),
// reset is a fresh start, and a long bf16-KV run stays close to float32.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "in_memory_tensors.h"
#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = small_config();
    gpu_ = create_backend("cpu");
    model_ = Model::load(*gpu_, config_, make_random_weights(config_, DType::kBF16, 11), "model.language_model.");
  }
  std::vector<float> run(Session& session, const std::vector<int32_t>& tokens) {
    std::vector<float> all;
    for (int32_t t : tokens) {
      auto logits = session.decode(t);
      all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
  }
  Qwen35ForwardConfig config_;
  std::unique_ptr<GpuBackend> gpu_;
  std::unique_ptr<Model> model_;
};

TEST_F(SessionTest, OutOfRangeTokenIsRefusedWithoutSideEffects) {
  Session clean(*model_, 16, KvDtype::kBF16);
  const std::vector<float> expected = run(clean, {3, 1, 4, 1, 5});

  Session session(*model_, 16, KvDtype::kBF16);
  std::vector<float> got = run(session, {3, 1});
  for (int32_t bad : {-1, 50, 1000000}) {
    try {
      session.decode(bad);
      FAIL() << "accepted token " << bad;
    } catch (const Error& e) {
      EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr(std::to_string(bad)), HasSubstr("vocabulary")));
    }
  }
  EXPECT_EQ(session.position(), 2u);
  const std::vector<float> rest = run(session, {4, 1, 5});
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, expected);
}

TEST_F(SessionTest, FullContextIsRefusedAndResetStartsOver) {
  Session session(*model_, 3, KvDtype::kF32);
  const std::vector<float> first = run(session, {7, 8, 9});
  try {
    session.decode(10);
    FAIL() << "decoded past the context length";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("context is full"), HasSubstr("3")));
  }
  session.reset();
  EXPECT_EQ(session.position(), 0u);
  EXPECT_EQ(run(session, {7, 8, 9}), first);
}

TEST_F(SessionTest, FedTokensLeaveTheStateDecodingWouldAndPrefillReturnsTheLast) {
  // feed skips only the logits: what follows it is, to the bit, what follows
  // decoding the same tokens.
  Session decoded(*model_, 16, KvDtype::kBF16);
  const std::vector<float> all = run(decoded, {3, 1, 4, 1, 5, 9});
  const size_t v = config_.vocab;
  const std::vector<float> last(all.end() - static_cast<ptrdiff_t>(v), all.end());

  Session fed(*model_, 16, KvDtype::kBF16);
  for (int32_t t : {3, 1, 4}) fed.feed(t);
  EXPECT_EQ(fed.position(), 3u);
  EXPECT_EQ(run(fed, {1, 5, 9}), std::vector<float>(all.end() - 3 * static_cast<ptrdiff_t>(v), all.end()));

  Session prefilled(*model_, 16, KvDtype::kBF16);
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9};
  const std::span<const float> logits = prefilled.prefill(prompt);
  EXPECT_EQ(prefilled.position(), 6u);
  EXPECT_EQ(std::vector<float>(logits.begin(), logits.end()), last);
  EXPECT_TRUE(prefilled.prefill({}).empty());
  EXPECT_EQ(prefilled.position(), 6u);
}

TEST_F(SessionTest, FeedRefusesWhatDecodeRefuses) {
  Session session(*model_, 2, KvDtype::kF32);
  EXPECT_THROW(session.feed(-1), Error);
  EXPECT_THROW(session.feed(1000000), Error);
  EXPECT_EQ(session.position(), 0u);
  session.feed(1);
  session.feed(2);
  try {
    session.feed(3);
    FAIL() << "fed past the context length";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("context is full"));
  }
  EXPECT_EQ(session.position(), 2u);
}

TEST_F(SessionTest, DifferentHistoriesGiveDifferentLogits) {
  // Guards against a state that is never read: the last token's logits must
  // depend on the tokens before it.
  Session a(*model_, 8, KvDtype::kF32), b(*model_, 8, KvDtype::kF32);
  const std::vector<float> la = run(a, {1, 2, 3});
  const std::vector<float> lb = run(b, {4, 2, 3});
  const size_t v = config_.vocab;
  const Deviation d = deviation(la.data() + 2 * v, lb.data() + 2 * v, v);
  EXPECT_GT(d.relative(), 1e-3);
}

TEST_F(SessionTest, LongBf16KvRunStaysCloseToF32) {
  // 300 steps: the recurrent state is f32 either way; only the KV cache rounds.
  std::vector<int32_t> tokens(300);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7 + 3) % config_.vocab);
  Session f32(*model_, 300, KvDtype::kF32), bf16(*model_, 300, KvDtype::kBF16);
  const std::vector<float> a = run(f32, tokens), b = run(bf16, tokens);
  const Deviation d = deviation(b.data(), a.data(), a.size());
  EXPECT_FALSE(d.has_nan);
  EXPECT_LE(d.relative(), 1e-2);  // the golden README's bound for a bf16 KV cache
}

TEST_F(SessionTest, ContextLongerThanModelAllowsIsRefused) {
  EXPECT_THROW(Session(*model_, config_.max_position_embeddings + 1, KvDtype::kBF16), Error);
  EXPECT_THROW(Session(*model_, 0, KvDtype::kBF16), Error);
}

}  // namespace
}  // namespace qwen35::testing
