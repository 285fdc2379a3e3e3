#pragma once
// Errors a user can fix (bad file, bad flag). The CLI prints what() as one line and exits 2.
// Messages always start with the file or flag at fault: "inputs.pt: expected 3 inputs, got 2".

#include <stdexcept>
#include <string>

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

}  // namespace tsrepro
