// The Qwen chat format, written out by hand from the Jinja template in Qwen's
// tokenizer_config.json (without tools), so no template engine is needed. Qwen3 and
// Qwen3.5 share it except for what the generation prompt opens when thinking is on.
#include <algorithm>

#include "qwen35/error.h"
#include "qwen35/tokenizer.h"

namespace qwen35 {

namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";

std::string_view strip_left(std::string_view s, char c) {
  while (!s.empty() && s.front() == c) s.remove_prefix(1);
  return s;
}
std::string_view strip_right(std::string_view s, char c) {
  while (!s.empty() && s.back() == c) s.remove_suffix(1);
  return s;
}

bool is_tool_response(std::string_view content) {
  return content.starts_with("<tool_response>") && content.ends_with("</tool_response>");
}

}  // namespace

std::string format_chat(std::span<const ChatMessage> messages, const ChatOptions& options) {
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
      fail("chat message role \"{}\" is not one of system, user, assistant, tool", m.role);
    }
  }
  std::string out;
  const size_t n = messages.size();
  if (n > 0 && messages[0].role == "system") {
    out.append(kImStart).append("system\n").append(messages[0].content).append(kImEnd).append("\n");
  }
  // The last real user query: assistant turns after it keep their reasoning, earlier
  // ones lose it (the template's ns.last_query_index; tool results do not count).
  size_t last_query = n == 0 ? 0 : n - 1;
  for (size_t i = n; i-- > 0;) {
    if (messages[i].role == "user" && !is_tool_response(messages[i].content)) {
      last_query = i;
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i != 0)) {
      out.append(kImStart).append(m.role).append("\n").append(m.content).append(kImEnd).append("\n");
    } else if (m.role == "assistant") {
      std::string_view content = m.content;
      std::string_view reasoning;
      if (m.reasoning_content) {
        reasoning = *m.reasoning_content;
      } else if (const size_t close = content.find(kThinkClose); close != std::string_view::npos) {
        // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
        std::string_view before = strip_right(content.substr(0, close), '\n');
        if (const size_t open = before.rfind(kThinkOpen); open != std::string_view::npos) {
          before = before.substr(open + kThinkOpen.size());
        }
        reasoning = strip_left(before, '\n');
        // content.split('</think>')[-1].lstrip('\n')
        content = strip_left(content.substr(content.rfind(kThinkClose) + kThinkClose.size()), '\n');
      }
      out.append(kImStart).append("assistant\n");
      if (i > last_query && (i + 1 == n || !reasoning.empty())) {
        out.append(kThinkOpen).append("\n").append(strip_right(strip_left(reasoning, '\n'), '\n'));
        out.append("\n").append(kThinkClose).append("\n\n").append(strip_left(content, '\n'));
      } else {
        out.append(content);
      }
      out.append(kImEnd).append("\n");
    } else if (m.role == "tool") {
      // Consecutive tool results share one user turn.
      if (i == 0 || messages[i - 1].role != "tool") out.append(kImStart).append("user");
      out.append("\n<tool_response>\n").append(m.content).append("\n</tool_response>");
      if (i + 1 == n || messages[i + 1].role != "tool") out.append(kImEnd).append("\n");
    }
  }
  if (options.add_generation_prompt) {
    out.append(kImStart).append("assistant\n");
    if (!options.enable_thinking) {
      out.append(kThinkOpen).append("\n\n").append(kThinkClose).append("\n\n");
    } else if (options.style == ChatStyle::kQwen35) {
      out.append(kThinkOpen).append("\n");
    }
  }
  return out;
}

ChatStyle detect_chat_style(std::string_view chat_template) {
  if (chat_template.empty()) return ChatStyle::kQwen35;
  // Qwen3.5's generation prompt writes the Jinja literal '<think>\n' on its own (the
  // backslash-n is two characters in the template); Qwen3's only writes '<think>\n\n</think>\n\n'.
  return chat_template.find(R"('<think>\n')") != std::string_view::npos ? ChatStyle::kQwen35 : ChatStyle::kQwen3;
}

std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                                 const ChatOptions& options) {
  return tokenizer.encode(format_chat(messages, options));
}

}  // namespace qwen35
