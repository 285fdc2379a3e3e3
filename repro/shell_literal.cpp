// shell_quoted: any bytes as one shell word.

#include "repro/shell_literal.h"

namespace tsrepro {

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace tsrepro
