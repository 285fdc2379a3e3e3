#pragma once
// The one escaping rule for text that reaches an HTML page tsrepro writes (the sweep's
// index.html): &, <, >, " and ' as entities, so that a model's names stay text in an element or
// a quoted attribute; bytes that are not valid UTF-8 become U+FFFD.

#include <string>
#include <string_view>

namespace tsrepro {

std::string html_text(std::string_view text);

}  // namespace tsrepro
