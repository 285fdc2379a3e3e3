#include "repro/cpp_literal.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tsrepro {
namespace {

bool is_printable_ascii(unsigned char c) { return c >= 0x20 && c < 0x7f; }

std::string octal_escape(unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\%03o", static_cast<unsigned>(c));
  return buffer;
}

void append_escaped(std::string& out, std::string_view text, char previous) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '?':
        out += previous == '?' ? "\\?" : "?";
        break;
      default:
        out += is_printable_ascii(c) ? std::string(1, ch) : octal_escape(c);
    }
    previous = ch;
  }
}

// Pieces of `line` no longer than `max_chunk`, for readable source lines.
void append_chunks(std::string& out, std::string_view line, const std::string& indent, size_t max_chunk, bool& first) {
  do {
    const std::string_view chunk = line.substr(0, max_chunk);
    line.remove_prefix(chunk.size());
    if (!first) out += "\n" + indent;
    first = false;
    out += cpp_string_literal(chunk);
  } while (!line.empty());
}

}  // namespace

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  append_escaped(out, text, '\0');
  return out + "\"";
}

std::string cpp_string_lines(std::string_view text, const std::string& indent, size_t max_chunk) {
  if (text.empty()) return "\"\"";
  if (max_chunk == 0) max_chunk = 1;
  std::string out;
  bool first = true;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const size_t length = newline == std::string_view::npos ? text.size() : newline + 1;
    append_chunks(out, text.substr(0, length), indent, max_chunk, first);
    text.remove_prefix(length);
  }
  return out;
}

std::string cpp_comment_text(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '\n' || ch == '\r' || ch == '\t')
      out += ' ';
    else if (ch == '\\')
      out += '/';
    else if (!is_printable_ascii(c))
      out += '?';
    else
      out += ch;
    // Break "*/" and "/*" (block comment delimiters) and "??" (a trigraph where they are
    // enabled; "??/" is a backslash).
    const size_t n = out.size();
    const std::string_view last_two = n >= 2 ? std::string_view(out).substr(n - 2) : std::string_view();
    if (last_two == "*/" || last_two == "/*" || last_two == "??") out.insert(n - 1, " ");
  }
  return out;
}

std::string cpp_double_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  // Keep it a double literal ("2" would be an int): the repro passes it where types are deduced.
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

std::string cpp_bool_literal(bool value) { return value ? "true" : "false"; }

}  // namespace tsrepro
