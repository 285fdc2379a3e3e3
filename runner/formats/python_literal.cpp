// Escaping for emitted Python source: repro.py embeds text that comes from user graphs.

#include "runner/formats/python_literal.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

namespace tsrepro {
namespace {

// The code point of the UTF-8 sequence at `text[pos]` and its length in bytes, if it is a
// valid (shortest-form, non-surrogate) encoding.
std::optional<std::pair<uint32_t, size_t>> decode_utf8(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2, code = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, code = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, code = lead & 0x07;
  else
    return std::nullopt;
  if (pos + length > text.size()) return std::nullopt;
  for (size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[pos + i]);
    if ((next & 0xC0) != 0x80) return std::nullopt;
    code = (code << 6) | (next & 0x3F);
  }
  const uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < shortest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
  return std::make_pair(code, length);
}

std::string hex_escape(const char* format, uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), format, static_cast<unsigned>(value));
  return buffer;
}

// The body of a Python literal (or comment) for `text`; `quote` is escaped too when given.
std::string escaped(std::string_view text, std::optional<char> quote) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t pos = 0; pos < text.size();) {
    const char c = text[pos];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      if (auto decoded = decode_utf8(text, pos)) {
        const auto [code, length] = *decoded;
        out += code <= 0xFFFF ? hex_escape("\\u%04x", code) : hex_escape("\\U%08x", code);
        pos += length;
      } else {
        out += hex_escape("\\x%02x", byte);
        ++pos;
      }
      continue;
    }
    if (c == '\\')
      out += "\\\\";
    else if (quote && c == *quote)
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (byte < 0x20 || byte == 0x7F)
      out += hex_escape("\\x%02x", byte);
    else
      out += c;
    ++pos;
  }
  return out;
}

}  // namespace

std::string python_string_literal(std::string_view text) { return "\"" + escaped(text, '"') + "\""; }

std::string python_comment_text(std::string_view text) { return escaped(text, std::nullopt); }

std::string python_float_literal(double value) {
  if (std::isnan(value)) return "math.nan";
  if (std::isinf(value)) return value > 0 ? "math.inf" : "-math.inf";
  // The shortest text that reads back as the same double, as Python's repr() writes it.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // 2 -> 2.0: still a float
  return text;
}

std::string python_literal(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "None";
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return python_float_literal(value.get<double>());
    case nlohmann::json::value_t::string:
      return python_string_literal(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (const auto& item : value) out += (out.size() > 1 ? ", " : "") + python_literal(item);
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      for (const auto& [key, item] : value.items())
        out += (out.size() > 1 ? ", " : "") + python_string_literal(key) + ": " + python_literal(item);
      return out + "}";
    }
    default:
      return "None";  // binary and discarded values never come from a case
  }
}

std::string python_bytes_lines(std::string_view bytes, const std::string& indent, size_t chunk) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "b\"";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0 && i % chunk == 0) out += "\"\n" + indent + "b\"";
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if (byte >= 0x20 && byte < 0x7f && byte != '"' && byte != '\\') {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out + "\"";
}

std::string python_bool_literal(bool value) { return value ? "True" : "False"; }

}  // namespace tsrepro
