// The table of reduction passes, made from minifier/passes/passes.def.

#include "minifier/pass.h"

namespace tsrepro {

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
#define TSREPRO_PASS(function, name, stage, description) {name, PassStage::stage, description, function},
#include "minifier/passes/passes.def"
#undef TSREPRO_PASS
  };
  return table;
}

}  // namespace tsrepro
