#include "repro/markdown.h"

#include <algorithm>

namespace tsrepro {
namespace {

size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

std::string on_one_line(std::string_view text) {
  std::string line(text);
  std::replace_if(
      line.begin(), line.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
  return line;
}

}  // namespace

std::string markdown_code_block(std::string_view text, const std::string& language) {
  const std::string fence(std::max<size_t>(3, longest_backtick_run(text) + 1), '`');
  std::string body(text);
  if (!body.empty() && body.back() != '\n') body += '\n';
  return fence + language + "\n" + body + fence + "\n";
}

std::string markdown_code_span(std::string_view text) {
  const std::string line = on_one_line(text);
  const std::string fence(longest_backtick_run(line) + 1, '`');
  // A span that starts or ends with a backtick needs a space between it and the fence.
  const bool pad = !line.empty() && (line.front() == '`' || line.back() == '`');
  return fence + (pad ? " " : "") + line + (pad ? " " : "") + fence;
}

std::string markdown_text(std::string_view text) {
  // Brackets stay, but for a "](" that would end a link's text or an image's: a title's
  // "[JIT][NNC]" forms no link (one-line text defines no reference), and the title is copied
  // from here.
  static const std::string kPunctuation = "\\`*_<>#|~&";
  const std::string line = on_one_line(text);
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    const bool ends_link_text = ch == ']' && i + 1 < line.size() && line[i + 1] == '(';
    if (kPunctuation.find(ch) != std::string::npos || ends_link_text) out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace tsrepro
