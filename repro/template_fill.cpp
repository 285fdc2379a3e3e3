// See template_fill.h for the rules.

#include "repro/template_fill.h"

#include <cctype>
#include <stdexcept>
#include <vector>

namespace tsrepro {
namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string trimmed_right(std::string line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

// Applies a trailing `#[flag]` / `//[flag]` tag: false when the line is dropped.
bool keep_tagged_line(std::string& line, const TemplateFlags& flags) {
  if (line.empty() || line.back() != ']') return true;
  const size_t open = line.rfind('[');
  if (open == std::string::npos || open == 0) return true;
  size_t marker = open;
  if (line[open - 1] == '#') {
    marker = open - 1;
  } else if (open >= 2 && line.compare(open - 2, 2, "//") == 0) {
    marker = open - 2;
  } else {
    return true;
  }
  std::string flag = line.substr(open + 1, line.size() - open - 2);
  const bool negated = !flag.empty() && flag[0] == '!';
  if (negated) flag.erase(0, 1);
  for (char ch : flag)
    if (!std::islower(static_cast<unsigned char>(ch)) && !std::isdigit(static_cast<unsigned char>(ch)) && ch != '_')
      return true;  // not a tag
  line = trimmed_right(line.substr(0, marker));
  TemplateFlag::named(flag);  // a tag no generated flag has: std::logic_error
  return flags.has(flag) != negated;
}

bool is_name_char(char ch) { return std::isupper(static_cast<unsigned char>(ch)) || std::isdigit(ch) || ch == '_'; }

// Replaces every __NAME__ of one line; `alone` tells whether the line was only that placeholder.
std::string substitute(const std::string& line, const TemplateValues& values, bool& alone_and_empty) {
  std::string out;
  alone_and_empty = false;
  size_t i = 0;
  while (i < line.size()) {
    const size_t start = line.find("__", i);
    if (start == std::string::npos) break;
    size_t end = start + 2;
    while (end < line.size() && is_name_char(line[end])) ++end;
    // __NAME__: capitals between the double underscores, ending in "__" (which the loop ate).
    const bool placeholder = end - start >= 5 && line.compare(end - 2, 2, "__") == 0 &&
                             std::isupper(static_cast<unsigned char>(line[start + 2]));
    if (!placeholder) {
      out += line.substr(i, end - i);
      i = end;
      continue;
    }
    const std::string name = line.substr(start + 2, end - start - 4);
    const auto value = values.find(name);
    if (value == values.end()) throw std::logic_error("template placeholder __" + name + "__ has no value");
    out += line.substr(i, start - i) + value->second;
    if (value->second.empty() && line.find_first_not_of(" \t") == start && end == line.size()) alone_and_empty = true;
    i = end;
  }
  return out + line.substr(std::min(i, line.size()));
}

}  // namespace

TemplateFlag TemplateFlag::named(std::string_view name) {
  for (const char* known : TemplateFlagTable::kNames)
    if (name == known) return TemplateFlagTable::make(known);
  throw std::logic_error("template flag [" + std::string(name) +
                         "] is in no template that cmake/template_flags.cmake reads");
}

std::string fill_template(std::string_view text, const TemplateValues& values, const TemplateFlags& flags,
                          int max_blank_lines) {
  std::string out;
  int blank_run = 0;
  for (std::string line : split_lines(text)) {
    if (!keep_tagged_line(line, flags)) continue;
    bool drop = false;
    line = trimmed_right(substitute(line, values, drop));
    if (drop) continue;
    blank_run = line.empty() ? blank_run + 1 : 0;
    if (blank_run > max_blank_lines) continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace tsrepro
