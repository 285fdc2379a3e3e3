// Laying a reproducer's parts out in its program template (repro/reproducer_parts.h).

#include "repro/reproducer_parts.h"

#include <stdexcept>

#include "repro/reproducer_case.h"

namespace tsrepro {

std::string lay_out(std::string_view program, const std::vector<ReproducerPart>& parts, int blank_lines) {
  TemplateValues values;
  TemplateFlags flags;
  std::string sections;
  for (const ReproducerPart& part : parts) {
    for (const auto& [name, value] : part.values)
      if (!values.emplace(name, value).second) throw std::logic_error("two reproducer parts give __" + name + "__");
    flags.insert(part.flags);
    for (const std::string& section : part.sections) append_section(sections, section, blank_lines);
  }
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);
  return fill_template(program, values, flags, blank_lines);
}

}  // namespace tsrepro
