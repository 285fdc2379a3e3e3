#pragma once
// Errors a user can fix (bad file, bad flag). The CLI prints what() as one line and exits 2.
// Messages always start with the file or flag at fault: "inputs.pt: expected 3 inputs, got 2".

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tsrepro {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// A multi-line libtorch message as one line: its first non-blank line (libtorch's parser
// messages start with a newline), plus the source line a "<--- HERE" marker points at.
inline std::string one_line_error(const std::string& text) {
  auto trimmed = [](std::string line) {
    const auto begin = line.find_first_not_of(" \t\r");
    const auto end = line.find_last_not_of(" \t\r");
    return begin == std::string::npos ? std::string() : line.substr(begin, end - begin + 1);
  };
  std::string first, previous, pointed;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = trimmed(text.substr(start, end - start));
    if (first.empty()) first = line;
    if (line.find("<--- HERE") != std::string::npos && pointed.empty()) pointed = previous;
    if (!line.empty()) previous = line;
    start = end + 1;
  }
  if (first.empty()) return "(libtorch gave no message)";
  return pointed.empty() || pointed == first ? first : first + " at `" + pointed + "`";
}

// The one rule for what reaches the terminal as an error: one line, bounded, nothing a terminal
// would act on. Control bytes (a newline from a flag's value, ESC) and bytes that are not UTF-8
// are shown as \n, \t, \r or \xNN; valid UTF-8 stays. A line longer than `max_bytes` (a 10 MB
// number, a 100,000-character --backend) keeps its start, which names the file or flag, and its
// end, which says what is wrong, around " ... (N bytes cut) ... ".
inline std::string printable_error_line(std::string_view text, size_t max_bytes = 1000) {
  auto continuation = [&](size_t at) {
    return at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80;
  };
  auto utf8_length = [&](size_t at) -> size_t {  // of a well-formed sequence starting at `at`, else 0
    const auto lead = static_cast<unsigned char>(text[at]);
    const size_t n = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 0;
    for (size_t i = 1; i < n; ++i)
      if (!continuation(at + i)) return 0;
    return n;
  };
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(text[at++]);
    } else if (const size_t n = byte >= 0x80 ? utf8_length(at) : 0) {
      out.append(text.substr(at, n));
      at += n;
    } else {
      char escaped[5];
      if (byte == '\n' || byte == '\t' || byte == '\r')
        std::snprintf(escaped, sizeof escaped, "\\%c", byte == '\n' ? 'n' : byte == '\t' ? 't' : 'r');
      else
        std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
      ++at;
    }
  }
  if (out.size() <= max_bytes) return out;
  // Cut at character boundaries: never inside a UTF-8 sequence.
  auto boundary = [&](size_t at) {
    while (at > 0 && (static_cast<unsigned char>(out[at]) & 0xc0) == 0x80) --at;
    return at;
  };
  const size_t head = boundary(max_bytes * 7 / 10), tail = boundary(out.size() - max_bytes / 4);
  return out.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes cut) ... " + out.substr(tail);
}

}  // namespace tsrepro
