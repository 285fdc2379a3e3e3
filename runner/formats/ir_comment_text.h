#pragma once
// Text from a model (a source file name, a module path) made safe for a comment in IR text: the
// one escaping rule for graph.ir. libtorch's lexer ends a comment at a newline, so a file name
// holding one would start a line of IR (issue 31: "expected ident but found 'dedent'").

#include <string>
#include <string_view>

namespace tsrepro {

// `text` on one line: a backslash becomes \\, a control byte (below 0x20, and 0x7f) becomes
// \xNN. Everything else, UTF-8 included, stays as it is.
std::string ir_comment_text(std::string_view text);

}  // namespace tsrepro
