#pragma once
// Putting text a case holds (op names, exception messages, paths, a whole repro.py) into
// Markdown so that it shows as that text and nothing else: no fence it holds can end its code
// block, no character of it starts emphasis, a link or HTML.

#include <string>
#include <string_view>

namespace tsrepro {

// A fenced code block around `text`, its fence longer than any backtick run in `text`.
std::string markdown_code_block(std::string_view text, const std::string& language = "");

// `text` as an inline code span on one line (newlines become spaces).
std::string markdown_code_span(std::string_view text);

// `text` as plain Markdown text on one line: Markdown's punctuation is backslash-escaped, and so
// is a "](" (no link or image can form).
std::string markdown_text(std::string_view text);

}  // namespace tsrepro
