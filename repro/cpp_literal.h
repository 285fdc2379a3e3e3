#pragma once
// Turning arbitrary text (graph IR, settings, a command line) into C++ source that means exactly
// that text and nothing else: string literals and comment text for the generated repro.cpp.

#include <string>
#include <string_view>

namespace tsrepro {

// A quoted C++ string literal whose value is `text`, byte for byte. Quotes and backslashes are
// escaped, control and non-ASCII bytes become three-digit octal escapes (an octal escape never
// swallows a following digit, unlike \x), and a '?' after a '?' becomes \? so that no trigraph
// can form.
std::string cpp_string_literal(std::string_view text);

// `text` as a sequence of adjacent string literals, one per line of the text (each keeping its
// '\n'), lines after the first prefixed by `indent`; lines longer than `max_chunk` bytes are split
// over several literals. Adjacent literals concatenate, so the value is `text` again.
// Empty text gives "".
std::string cpp_string_lines(std::string_view text, const std::string& indent, size_t max_chunk = 200);

// `text` made safe inside a // comment: one line of printable ASCII. Newlines and other control
// or non-ASCII bytes become spaces or '?', backslashes become '/' (a trailing one would continue
// the comment onto the next line), "*/", "/*" and "??" are broken up by a space.
std::string cpp_comment_text(std::string_view text);

// A double as a C++ expression that evaluates to exactly that value: the shortest decimal that
// round-trips, or std::numeric_limits<double> for infinities and NaN.
std::string cpp_double_literal(double value);

// true or false.
std::string cpp_bool_literal(bool value);

}  // namespace tsrepro
