#pragma once
// Lists of words in text, one way each: a comma-separated flag or .def field read, a list written
// with a separator. Torch-free (the file_util room).

#include <string>
#include <vector>

namespace tsrepro {

// "a,b,,c" -> {"a", "b", "c"}: the non-empty items between commas, as they are.
std::vector<std::string> comma_separated(const std::string& text);

// {"a", "b"}, ", " -> "a, b".
std::string joined(const std::vector<std::string>& parts, const std::string& separator);

// The last line of `text` with more than blanks in it ("" where none): what a child process said
// last, as an error names it.
std::string last_nonempty_line(const std::string& text);

}  // namespace tsrepro
