#pragma once
// Text from a case (IR, names, command lines, messages) made safe to put into Python source:
// every byte that is not printable ASCII is escaped, so no input can end a literal or a comment
// early, and the source stays pure ASCII (pasteable into a bug report).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tsrepro {

// A double-quoted Python str literal whose value is `text` (read as UTF-8; a byte that is not
// part of valid UTF-8 becomes the code point of the same number, as Latin-1 would read it).
std::string python_string_literal(std::string_view text);

// `text` as one line of a comment: newlines, control and non-ASCII characters and backslashes
// escaped as in a Python literal, without the quotes.
std::string python_comment_text(std::string_view text);

// A float literal that reads back as exactly `value`; inf and nan as math.inf / math.nan.
std::string python_float_literal(double value);

// True or False.
std::string python_bool_literal(bool value);

// `bytes` as adjacent bytes literals b"...", `chunk` bytes each, lines after the first prefixed
// by `indent`: printable ASCII as it is, everything else as \xNN. Adjacent literals concatenate.
std::string python_bytes_lines(std::string_view bytes, const std::string& indent, size_t chunk = 48);

// The Python value of a JSON value: None, True/False, ints, floats, str, lists and dicts.
std::string python_literal(const nlohmann::json& value);

}  // namespace tsrepro
