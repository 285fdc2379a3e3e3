#pragma once
// Filling a reproducer template (repro/templates/<writer>/*), as torchgen fills its templates:
// the template is a real source file that compiles or byte-compiles on its own, and the writer
// supplies values for its placeholders and the flags that keep or drop its optional lines.
//
//  - A placeholder is `__NAME__` (capitals, digits, underscores), a valid identifier in Python
//    and C++. Its value is inserted as it is (it may span lines). A placeholder alone on its line
//    whose value is empty removes the line.
//  - A line ending in `#[flag]` (Python) or `//[flag]` (C++) is kept only when `flag` is set;
//    `[!flag]` keeps it only when it is not. The tag and the spaces before it are removed. The
//    flags are typed (repro/template_flags.h): a tag that is no flag::<name> is a bug too.
//  - Runs of blank lines longer than `max_blank_lines` (left where lines were dropped) shrink to it:
//    two between Python's top-level definitions, one in C++.
// A placeholder without a value is a bug in the writer: std::logic_error names it.

#include <map>
#include <string>
#include <string_view>

#include "repro/template_flags.h"

namespace tsrepro {

using TemplateValues = std::map<std::string, std::string>;

std::string fill_template(std::string_view text, const TemplateValues& values, const TemplateFlags& flags = {},
                          int max_blank_lines = 2);

}  // namespace tsrepro
