#pragma once
// A reproducer as a list of parts (issue 53). Each part of one language (the header, the model,
// the inputs, the sides that run it, the comparison) gives the program template's values and
// flags, among them the imports or headers its own code needs, and the code it adds at
// __SECTIONS__. The writers (repro_py.cpp, repro_cpp.cpp) make their parts in order and lay them
// out here; nothing else assembles a reproducer.

#include <string>
#include <string_view>
#include <vector>

#include "repro/template_fill.h"

namespace tsrepro {

struct ReproducerPart {
  TemplateValues values;
  TemplateFlags flags;
  std::vector<std::string> sections;  // top-level definitions, in order, for __SECTIONS__
};

// `program` filled with the parts: their values merged (a name two parts give is a writer's bug:
// std::logic_error names it), their flags united, their sections `blank_lines` apart at
// __SECTIONS__, and runs of blank lines longer than `blank_lines` shrunk to it.
std::string lay_out(std::string_view program, const std::vector<ReproducerPart>& parts, int blank_lines);

}  // namespace tsrepro
